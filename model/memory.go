package model

import (
	"fmt"
	"math"

	"github.com/capsim/capsim/engine"
)

// MemoryOptions are the engine settings that decide how much KV cache fits.
// Zero values mean vLLM's defaults.
type MemoryOptions struct {
	// Utilization is the fraction of GPU memory the engine may use (vLLM's
	// --gpu-memory-utilization); 0 means 0.9.
	Utilization float64
	// ReserveGB is memory per GPU taken by activations, the sampler and
	// the runtime, beyond weights and KV; 0 means the peak of vLLM's
	// profiling run (ProfilePeakBytes) for MaxNumSeqs and MaxBatchedTokens.
	ReserveGB float64
	// MaxNumSeqs and MaxBatchedTokens size vLLM's profiling run; 0 means
	// V1's defaults below its large-GPU rule, 256 and 2048.
	MaxNumSeqs, MaxBatchedTokens int
	// BytesPerParam is the weight precision; 0 means the checkpoint's (2 for BF16/FP16).
	BytesPerParam float64
	// KVBytes is the KV-cache element size; 0 means the checkpoint's
	// (LLM.KVElemBytes: 2 for BF16/FP16, 1 for an FP8 KV cache).
	KVBytes float64
	// KVCacheGiB is the KV cache per GPU when the engine states it (vLLM's
	// --kv-cache-memory-bytes, or the "Available KV cache memory: X GiB"
	// its startup log prints); 0 means the budget Utilization leaves.
	KVCacheGiB float64
	// SamplerBytes is the profiling run's memory per logit of its dummy
	// sampler (ProfilePeakBytes); 0 means SamplerBytesPerLogit.
	// NonTorchGB and NonTorchTPGB are memory per GPU outside PyTorch's
	// allocator the engine counts against its budget at TP1 and above
	// (engine.Settings.NonTorchGiB, in GB here). All three go into the
	// reserve only where ReserveGB is 0.
	SamplerBytes             float64
	NonTorchGB, NonTorchTPGB float64
	// WindowPool is the token slots of an engine's own sliding-window pool
	// per full-attention slot (engine.Settings.WindowPool): the cache's
	// memory per token grows by it times the windowed layers' share
	// (LLM.WindowedKVShare). 0: the windows take blocks from the one pool.
	WindowPool float64
}

func (o MemoryOptions) withDefaults(m LLM, tp int) MemoryOptions {
	if o.Utilization == 0 {
		o.Utilization = engine.VLLMGPUMemoryUtilization
	}
	if o.ReserveGB == 0 {
		o.ReserveGB = ProfilePeakBytes(m, tp, orInt(o.MaxBatchedTokens, engine.VLLMV1SmallBudget), orInt(o.MaxNumSeqs, engine.VLLMMaxNumSeqs), o.SamplerBytes) / gb
		// Memory outside PyTorch: NCCL's and the custom all-reduce's
		// buffers above TP1. A pipeline stage is priced as a whole
		// worker's, about 1 GiB a GPU too much (llm-d-planner's v0.19 PP2
		// stages: 0.07 GiB outside PyTorch, a 1.1 GiB peak against 1.89).
		nonTorch := o.NonTorchGB
		if tp > 1 && o.NonTorchTPGB > 0 {
			nonTorch = o.NonTorchTPGB
		}
		if o.ReserveGB > 0 {
			o.ReserveGB += nonTorch
		}
	}
	if o.ReserveGB == 0 {
		o.ReserveGB = 2 // a model without its shape in the catalog: the old assumption
	}
	if o.KVBytes == 0 {
		o.KVBytes = 2
	}
	return o
}

// Memory is the memory budget of one worker (TP×PP GPUs).
type Memory struct {
	GPUs       int     `json:"gpus"`
	UsableGB   float64 `json:"usable_gb"`
	WeightsGB  float64 `json:"weights_gb"`
	ReserveGB  float64 `json:"reserve_gb"`
	KVGB       float64 `json:"kv_gb"`
	KVTokens   int     `json:"kv_tokens"` // KV cache capacity in tokens
	KVPerToken float64 `json:"kv_bytes_per_token"`
}

const (
	gb  = 1e9
	gib = 1 << 30
)

// SamplerBytesPerLogit is the memory vLLM's profiling run takes per logit
// when it samples its dummy batch (max-num-seqs rows of the vocabulary:
// float32 logits, probabilities and a sorted copy with int64 indices;
// gpu_model_runner.profile_run). The engine sets that peak aside, beside
// the weights, before it sizes the KV cache. Measured, not fitted:
// dennislee22's vLLM 0.10.1.1 startup logs on A100-80GB
// (fixtures/corpus/b-dennislee-a100-qwen.md, Tests 2–5 and 7) leave
// 0.54–0.70 GiB between utilization × memory, the weights and the KV
// cache, whatever the model or TP: 256 rows of Qwen's 152,064 logits at 18
// bytes. That the peak grows with the rows is read from vLLM's code, not
// measured; for V0's whole-max-model-len budgets a forward pass over the
// budget (ActivationBytes) is the larger peak, which no log checks.
const SamplerBytesPerLogit = 18

// ProfilePeakBytes is the peak memory per GPU of vLLM's profiling run
// beyond the weights: the larger of a forward pass over tokens tokens
// (ActivationBytes) and the sampler over seqs rows of logits (every rank
// samples the whole vocabulary) at samplerBytes a logit (0:
// SamplerBytesPerLogit).
func ProfilePeakBytes(m LLM, tp, tokens, seqs int, samplerBytes float64) float64 {
	if samplerBytes == 0 {
		samplerBytes = SamplerBytesPerLogit
	}
	return math.Max(ActivationBytes(m, tp, tokens), float64(seqs)*float64(m.Vocab)*samplerBytes)
}

// ActivationBytes is the live activation memory per GPU of a forward pass
// over tokens tokens: the MLP's gate-and-up output and its activated half
// (3·intermediate/TP values per token; a mixture-of-experts model's
// active experts' widths together) beside the residual, normed and
// attention tensors (4·hidden), in 16-bit values.
func ActivationBytes(m LLM, tp, tokens int) float64 {
	tp = max(tp, 1)
	return float64(tokens) * (3*m.ffnWidth()/float64(tp) + 4*float64(m.Hidden)) * 2
}

func orInt(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// WorkerMemory computes the KV-cache capacity of one worker of pool shape p
// (its Count is ignored). It fails when the weights do not fit, naming the
// smallest TP that would.
func WorkerMemory(g GPU, m LLM, p Pool, o MemoryOptions) (Memory, error) {
	if o.KVBytes == 0 {
		o.KVBytes = m.KVElemBytes()
	}
	if p.TP <= 0 {
		return Memory{}, fmt.Errorf("model: TP must be positive, got %d", p.TP)
	}
	asked := o // the reserve follows the TP: the hint recomputes it per TP
	o = o.withDefaults(m, p.TP)
	if err := m.CheckTP(p.TP); err != nil {
		return Memory{}, err
	}
	n := p.GPUsPerWorker()
	mem := Memory{
		GPUs:       n,
		UsableGB:   g.CUDAMemoryBytes() / gb * o.Utilization * float64(n),
		WeightsGB:  (o.weightBytes(m) + m.ReplicatedAttentionBytes(p.TP) + m.replicatedEmbedBytes(p.TP)) / gb,
		ReserveGB:  o.ReserveGB * float64(n),
		KVPerToken: m.KVBytesPerToken(p.TP, o.KVBytes) * (1 + o.WindowPool*m.WindowedKVShare()),
	}
	mem.KVGB = mem.UsableGB - mem.WeightsGB - mem.ReserveGB
	if o.KVCacheGiB > 0 {
		// The engine measured what its own profiling run left; it ran, so
		// only the device's whole memory bounds it.
		mem.KVGB = o.KVCacheGiB * gib / gb * float64(n)
		if mem.WeightsGB+mem.KVGB > g.CUDAMemoryBytes()/gb*float64(n) {
			return mem, fmt.Errorf("model: %s on %s at %s: weights %.1f GB + the stated KV cache %.1f GB exceed the GPUs' %.1f GB",
				ShortName(m.Name), g.Name, p.Worker(), mem.WeightsGB, mem.KVGB, g.CUDAMemoryBytes()/gb*float64(n))
		}
	}
	if mem.KVGB <= 0 {
		return mem, fmt.Errorf("model: %s does not fit on %s at %s: weights %.1f GB + reserve %.1f GB exceed %.1f GB usable%s",
			ShortName(m.Name), g.Name, p.Worker(), mem.WeightsGB, mem.ReserveGB, mem.UsableGB, smallestFitHint(g, m, p, asked))
	}
	mem.KVTokens = int(math.Floor(mem.KVGB * gb / mem.KVPerToken))
	return mem, nil
}

func smallestFitHint(g GPU, m LLM, p Pool, o MemoryOptions) string {
	for tp := p.TP * 2; tp <= 64; tp *= 2 {
		if m.CheckTP(tp) != nil {
			continue
		}
		q := Pool{Count: 1, TP: tp, PP: p.PP}
		n := float64(q.GPUsPerWorker())
		at := o.withDefaults(m, tp)
		if g.CUDAMemoryBytes()/gb*at.Utilization*n-(at.weightBytes(m)+m.ReplicatedAttentionBytes(tp)+m.replicatedEmbedBytes(tp))/gb-at.ReserveGB*n > 0 {
			return fmt.Sprintf("; smallest TP that fits: TP%d", tp)
		}
	}
	return "; it does not fit at any TP up to 64"
}

// SmallestTP returns the smallest power-of-two TP (1…64) the model can use
// (CheckTP) at which it fits on the GPU.
func SmallestTP(g GPU, m LLM, o MemoryOptions) (int, error) {
	for tp := 1; tp <= 64; tp *= 2 {
		if _, err := WorkerMemory(g, m, Pool{Count: 1, TP: tp}, o); err == nil {
			return tp, nil
		}
	}
	return 0, fmt.Errorf("model: %s does not fit on %s at any TP up to 64", ShortName(m.Name), g.Name)
}

// weightBytes is the model's weights at o's precision, or as loaded.
func (o MemoryOptions) weightBytes(m LLM) float64 {
	if o.BytesPerParam > 0 {
		return m.WeightBytes(o.BytesPerParam)
	}
	return m.LoadedWeightBytes()
}
