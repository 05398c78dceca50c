package calibrate

import (
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
)

// A profile that omits the batch limits runs vLLM's defaults, while its
// KV cache is sized as vLLM's profiling run sizes an unstated budget
// (2048 tokens, not the scheduler's 8192): the zero is kept, and read
// through Settings' limits.
func TestUnstatedLimitsAreVLLMDefaults(t *testing.T) {
	gpu, llm := mustGPU(t, "H200"), mustLLM(t, "Qwen/Qwen3-32B")
	pr := pricing{gpu: gpu, llm: llm, coeffs: func(string, model.Pool) (model.Coeffs, error) {
		return model.PriorCoeffsFor(engine.OverheadFor("vllm-0.9.0.1"), false), nil
	}}
	pool := model.Pool{Count: 1, TP: 1} // one GPU: the activations of a 2048- and an 8192-token step differ
	cfg, err := pr.build(model.Aggregated(pool))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Replicas
	if r.BlockSize != engine.VLLMBlockSize || r.MaxNumSeqs != engine.VLLMMaxNumSeqs || r.MaxBatchedTokens != engine.VLLMMaxBatchedTokens {
		t.Errorf("block %d, seqs %d, budget %d; want vLLM's %d, %d, %d", r.BlockSize, r.MaxNumSeqs, r.MaxBatchedTokens,
			engine.VLLMBlockSize, engine.VLLMMaxNumSeqs, engine.VLLMMaxBatchedTokens)
	}
	if want := len(engine.GraphSizes(engine.VLLMGraphMax)); len(pr.settings.CUDAGraphs(false)) != want {
		t.Errorf("%d graph sizes, want vLLM's %d", len(pr.settings.CUDAGraphs(false)), want)
	}
	small, err := model.WorkerMemory(gpu, llm, pool, model.MemoryOptions{MaxBatchedTokens: engine.VLLMV1SmallBudget})
	if err != nil {
		t.Fatal(err)
	}
	if r.KVCapacity != small.KVTokens {
		t.Errorf("KV capacity %d, want %d: an unstated budget is profiled as vLLM's %d tokens", r.KVCapacity, small.KVTokens, engine.VLLMV1SmallBudget)
	}
}
