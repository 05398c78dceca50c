package predict

import (
	"context"
	"strings"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// Shape is a prompt and output length.
type Shape struct{ ISL, OSL int }

// statedRun predicts one load of one shape on an aggregated H100 TP2
// deployment of Qwen3-32B (priced from the pooled groups, so the engine
// version's defaults hold) with the stated engine settings.
func statedRun(t *testing.T, engineLabel string, st engine.Stated, sh Shape, l model.Load, sharing model.Sharing) Prediction {
	t.Helper()
	prof := defaultProfile(t)
	topo, err := model.ParseTopology("1xTP2")
	if err != nil {
		t.Fatal(err)
	}
	tg := calibrate.Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Qwen/Qwen3-32B"), Engine: engine.Parse(engineLabel), Topology: topo, Stated: st}
	preds, err := Run(context.Background(), prof, Options{Target: tg, Loads: []model.Load{l}, NoBand: true, Mode: sim.BenchmarkReplay,
		Workload: workload.Workload{ISL: sh.ISL, OSL: sh.OSL, Seed: 3, NumPrompts: 300, Sharing: sharing}})
	if err != nil {
		t.Fatal(err)
	}
	return preds[0]
}

func flagOf(t *testing.T, p Prediction, name string) engine.Flag {
	t.Helper()
	for _, f := range p.EngineFlags {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no %s in %+v", name, p.EngineFlags)
	return engine.Flag{}
}

func metricOf(p Prediction, name string) float64 { return p.Points[0].Metrics[name] }

// Every prediction names the settings it ran with; unstated ones are the
// engine version's defaults on the GPU, stated ones say so.
func TestEngineFlagsReported(t *testing.T) {
	p := statedRun(t, "vllm-0.9.0.1", engine.Stated{}, Shape{1024, 64}, model.Closed(1), model.Sharing{})
	// All but --async-scheduling, which vLLM 0.9 does not have, and
	// --enable-expert-parallel, which a dense model has no use for.
	if len(p.EngineFlags) != len(engine.FlagNames)-2 || !strings.Contains(p.EngineDefaults, "vllm#17885") {
		t.Fatalf("flags %+v, defaults %q: want all eight and vLLM 0.9's rule", p.EngineFlags, p.EngineDefaults)
	}
	for _, f := range p.EngineFlags {
		if f.From != engine.FromDefault {
			t.Errorf("%s: from %s, want the default", f.Name, f.From)
		}
	}
	if f := flagOf(t, p, engine.FlagMaxNumSeqs); f.Value != "1024" {
		t.Errorf("H100 vLLM 0.9 max-num-seqs %s, want 1024", f.Value)
	}
	p = statedRun(t, "vllm-0.9.0.1", engine.Stated{MaxNumSeqs: 64}, Shape{1024, 64}, model.Closed(1), model.Sharing{})
	if f := flagOf(t, p, engine.FlagMaxNumSeqs); f.Value != "64" || f.From != engine.FromStated {
		t.Errorf("stated max-num-seqs reported as %+v", f)
	}
}

// A smaller --max-num-seqs caps the batch: at 64 clients, 8 sequences a
// step serve fewer requests a second.
func TestStatedMaxNumSeqs(t *testing.T) {
	l := model.Closed(64)
	base := statedRun(t, "vllm-0.9.0.1", engine.Stated{}, Shape{512, 128}, l, model.Sharing{})
	capped := statedRun(t, "vllm-0.9.0.1", engine.Stated{MaxNumSeqs: 8}, Shape{512, 128}, l, model.Sharing{})
	if !(metricOf(capped, model.RequestThroughput) < 0.5*metricOf(base, model.RequestThroughput)) {
		t.Errorf("req/s %.2f at max-num-seqs 8, %.2f at the default: want far fewer", metricOf(capped, model.RequestThroughput), metricOf(base, model.RequestThroughput))
	}
}

// A smaller --max-num-batched-tokens prefills a long prompt in more
// chunks, each a step of its own: TTFT rises.
func TestStatedMaxNumBatchedTokens(t *testing.T) {
	sh, l := Shape{8000, 16}, model.Closed(1)
	base := statedRun(t, "vllm-0.9.0.1", engine.Stated{}, sh, l, model.Sharing{})
	small := statedRun(t, "vllm-0.9.0.1", engine.Stated{MaxNumBatchedTokens: 512, MaxNumSeqs: 256}, sh, l, model.Sharing{})
	if !(metricOf(small, model.MeanTTFT) > 1.1*metricOf(base, model.MeanTTFT)) {
		t.Errorf("TTFT %.1f ms at a 512-token budget, %.1f ms at 8192: want higher", metricOf(small, model.MeanTTFT), metricOf(base, model.MeanTTFT))
	}
}

// --max-model-len sets vLLM V0's scheduling (above 32K it chunks prompts
// at 2048 tokens, at or below it runs them whole, first), and a request
// longer than it is refused.
func TestStatedMaxModelLen(t *testing.T) {
	sh, l := Shape{8000, 16}, model.Closed(1)
	whole := statedRun(t, "vllm-0.6.3", engine.Stated{MaxModelLen: 16384}, sh, l, model.Sharing{})
	chunked := statedRun(t, "vllm-0.6.3", engine.Stated{MaxModelLen: 40960}, sh, l, model.Sharing{})
	if b := flagOf(t, chunked, engine.FlagMaxNumBatchedTokens); b.Value != "2048" {
		t.Errorf("V0 at max-model-len 40960: budget %s, want 2048", b.Value)
	}
	if !(metricOf(chunked, model.MeanTTFT) > metricOf(whole, model.MeanTTFT)) {
		t.Errorf("TTFT %.1f ms chunked at 2048, %.1f ms whole: want higher", metricOf(chunked, model.MeanTTFT), metricOf(whole, model.MeanTTFT))
	}
	prof := defaultProfile(t)
	topo, _ := model.ParseTopology("1xTP2")
	_, err := Run(context.Background(), prof, Options{Target: calibrate.Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Qwen/Qwen3-32B"), Topology: topo,
		Stated: engine.Stated{MaxModelLen: 1000}}, Workload: workload.Workload{ISL: 1024, OSL: 64}, Loads: []model.Load{model.Closed(1)}, NoBand: true})
	if err == nil || !strings.Contains(err.Error(), "--max-model-len 1000") {
		t.Errorf("a request past the stated max-model-len: %v", err)
	}
}

// A lower --gpu-memory-utilization leaves a smaller KV cache: the longest
// request one worker holds shrinks, and a KV-bound load serves fewer requests.
func TestStatedGPUMemoryUtilization(t *testing.T) {
	sh, l := Shape{4000, 1000}, model.Closed(256)
	base := statedRun(t, "vllm-0.9.0.1", engine.Stated{}, sh, l, model.Sharing{})
	low := statedRun(t, "vllm-0.9.0.1", engine.Stated{GPUMemoryUtilization: 0.6}, sh, l, model.Sharing{})
	if !(low.KVFitTokens < base.KVFitTokens) || !(metricOf(low, model.RequestThroughput) < metricOf(base, model.RequestThroughput)) {
		t.Errorf("utilization 0.6: KV fit %d, %.2f req/s; default: %d, %.2f req/s: want both lower",
			low.KVFitTokens, metricOf(low, model.RequestThroughput), base.KVFitTokens, metricOf(base, model.RequestThroughput))
	}
}

// An FP8 KV cache holds twice the tokens of a BF16 one and reads half the
// bytes a step: the longest request held doubles, a long decode speeds up.
func TestStatedKVCacheDtype(t *testing.T) {
	sh, l := Shape{16000, 64}, model.Closed(1)
	bf16 := statedRun(t, "vllm-0.9.0.1", engine.Stated{KVCacheDtype: "bfloat16"}, sh, l, model.Sharing{})
	fp8 := statedRun(t, "vllm-0.9.0.1", engine.Stated{KVCacheDtype: "fp8"}, sh, l, model.Sharing{})
	if r := float64(fp8.KVFitTokens) / float64(bf16.KVFitTokens); r < 1.9 || r > 2.1 {
		t.Errorf("KV fit %d with fp8, %d with bfloat16: want twice", fp8.KVFitTokens, bf16.KVFitTokens)
	}
	if !(metricOf(fp8, model.MeanTPOT) < metricOf(bf16, model.MeanTPOT)) {
		t.Errorf("TPOT %.2f ms with fp8, %.2f ms with bfloat16: want lower", metricOf(fp8, model.MeanTPOT), metricOf(bf16, model.MeanTPOT))
	}
}

// --enforce-eager prices every step without CUDA graphs: TPOT rises.
func TestStatedEnforceEager(t *testing.T) {
	on := true
	sh, l := Shape{512, 128}, model.Closed(1)
	graphs := statedRun(t, "vllm-0.9.0.1", engine.Stated{}, sh, l, model.Sharing{})
	eager := statedRun(t, "vllm-0.9.0.1", engine.Stated{EnforceEager: &on}, sh, l, model.Sharing{})
	if !(metricOf(eager, model.MeanTPOT) > 1.2*metricOf(graphs, model.MeanTPOT)) {
		t.Errorf("TPOT %.2f ms eager, %.2f ms with CUDA graphs: want clearly higher", metricOf(eager, model.MeanTPOT), metricOf(graphs, model.MeanTPOT))
	}
}

// With prompts sharing a 512-token system prompt, prefix caching serves
// part of each prompt from the cache; --no-enable-prefix-caching serves
// none, and the prompts' TTFT rises. A block larger than the shared
// prefix caches none of it either (only whole blocks are kept).
func TestStatedPrefixCachingAndBlockSize(t *testing.T) {
	off := false
	sharing := model.Sharing{Groups: 4, PromptsPerGroup: 50, SharedLen: 512}
	sh, l := Shape{1024, 32}, model.Closed(4)
	on := statedRun(t, "vllm-0.9.0.1", engine.Stated{}, sh, l, sharing)
	none := statedRun(t, "vllm-0.9.0.1", engine.Stated{PrefixCaching: &off}, sh, l, sharing)
	if !(on.Points[0].PrefixHitRate > 0.3) || none.Points[0].PrefixHitRate != 0 || !(metricOf(none, model.MeanTTFT) > metricOf(on, model.MeanTTFT)) {
		t.Errorf("hit rate %.2f and TTFT %.1f ms cached, %.2f and %.1f ms without: want hits, then none and a higher TTFT",
			on.Points[0].PrefixHitRate, metricOf(on, model.MeanTTFT), none.Points[0].PrefixHitRate, metricOf(none, model.MeanTTFT))
	}
	big := statedRun(t, "vllm-0.9.0.1", engine.Stated{BlockSize: 256}, sh, l, model.Sharing{Groups: 4, PromptsPerGroup: 50, SharedLen: 200})
	small := statedRun(t, "vllm-0.9.0.1", engine.Stated{BlockSize: 16}, sh, l, model.Sharing{Groups: 4, PromptsPerGroup: 50, SharedLen: 200})
	if !(small.Points[0].PrefixHitRate > big.Points[0].PrefixHitRate) {
		t.Errorf("hit rate %.3f with blocks of 16, %.3f with blocks of 256 over a 200-token shared prefix: want lower with the larger block",
			small.Points[0].PrefixHitRate, big.Points[0].PrefixHitRate)
	}
}

// --enable-expert-parallel deals a mixture of experts' experts whole to
// the worker's GPUs: at one request a step waits for the GPU whose
// experts the token touched most, so TPOT rises; the flag is reported as
// stated, and a dense model refuses it.
func TestStatedExpertParallel(t *testing.T) {
	prof := defaultProfile(t)
	topo, err := model.ParseTopology("1xTP8")
	if err != nil {
		t.Fatal(err)
	}
	run := func(llm string, on *bool) (Prediction, error) {
		tg := calibrate.Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, llm), Engine: engine.Parse("vllm-0.11.0"), Topology: topo,
			Stated: engine.Stated{ExpertParallel: on}}
		preds, err := Run(context.Background(), prof, Options{Target: tg, Loads: []model.Load{model.Closed(1)}, NoBand: true, Mode: sim.BenchmarkReplay,
			Workload: workload.Workload{ISL: 1024, OSL: 64, Seed: 3, NumPrompts: 20}})
		if err != nil {
			return Prediction{}, err
		}
		return preds[0], nil
	}
	yes, no := true, false
	ep, err := run("Qwen/Qwen3-235B-A22B", &yes)
	if err != nil {
		t.Fatal(err)
	}
	split, err := run("Qwen/Qwen3-235B-A22B", &no)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := metricOf(ep, model.MeanTPOT), metricOf(split, model.MeanTPOT); !(a > 1.05*b) {
		t.Errorf("c=1 TPOT %.2f ms with expert parallelism, %.2f ms with experts split by TP: want the former over 5%% higher", a, b)
	}
	// The experts: line says how they sit and what a one-token step reads.
	if got := ep.Derived[0].Experts; !strings.Contains(got, "dealt 16 to each of the worker's 8 GPUs (expert parallelism)") || !strings.Contains(got, "2.5 of 16 at one token") {
		t.Errorf("experts note with expert parallelism: %q", got)
	}
	if got := split.Derived[0].Experts; !strings.Contains(got, "each split over the worker's 8 GPUs") {
		t.Errorf("experts note with split experts: %q", got)
	}
	if f := flagOf(t, ep, engine.FlagExpertParallel); f.Value != "true" || f.From != engine.FromStated {
		t.Errorf("flag %+v, want stated true", f)
	}
	if f := flagOf(t, split, engine.FlagExpertParallel); f.Value != "false" || f.From != engine.FromStated {
		t.Errorf("flag %+v, want stated false", f)
	}
	if _, err := run("Qwen/Qwen3-32B", &yes); err == nil || !strings.Contains(err.Error(), "--enable-expert-parallel applies to a mixture of experts") {
		t.Errorf("a dense model with --enable-expert-parallel: %v, want a refusal", err)
	}
}
