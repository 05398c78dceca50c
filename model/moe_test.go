package model

import (
	"math"
	"testing"
)

// The catalog's mixture-of-experts shapes reproduce the model cards' total
// and active parameter counts: attention, experts and embeddings from the
// config, within 2% of the stated total; the active body plus both
// embeddings (Qwen's and Mistral's cards) or plus the LM head alone
// (gpt-oss's) within 3% of the stated active count.
func TestMoECatalogShapes(t *testing.T) {
	for _, tt := range []struct {
		name      string
		active    float64
		headAlone bool
	}{
		{"Qwen/Qwen3-235B-A22B", 22e9, false},
		{"Qwen/Qwen3-30B-A3B", 3.3e9, false},
		{"mistralai/Mixtral-8x7B-Instruct-v0.1", 12.9e9, false},
		{"openai/gpt-oss-120b", 5.1e9, true},
		{"openai/gpt-oss-20b", 3.6e9, true},
	} {
		m, err := LookupLLM(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if !m.IsMoE() {
			t.Fatalf("%s: not a mixture-of-experts model", tt.name)
		}
		h := float64(m.Hidden)
		attn := float64(m.Layers) * (2*h*float64(m.Heads*m.HeadDim) + 2*h*float64(m.KVHeads*m.HeadDim))
		total := attn + m.ExpertParams() + m.EmbedParams()
		if math.Abs(total/m.Params-1) > 0.02 {
			t.Errorf("%s: shapes give %.1fB parameters, catalog says %.1fB", tt.name, total/1e9, m.Params/1e9)
		}
		active := m.ActiveBodyParams() + m.EmbedParams()
		if tt.headAlone {
			active = m.ActiveBodyParams() + m.HeadParams()
		}
		if math.Abs(active/tt.active-1) > 0.03 {
			t.Errorf("%s: active parameters %.2fB, model card says %.1fB", tt.name, active/1e9, tt.active/1e9)
		}
	}
}

// A MoE step reads the experts its tokens touch: one decoded token reads
// k of E experts, a long prefill all of them, and a dense model's weight
// read does not depend on the tokens at all.
func TestMoEWeightReadFollowsTouchedExperts(t *testing.T) {
	g, _ := LookupGPU("H100")
	m, _ := LookupLLM("Qwen/Qwen3-30B-A3B")
	r := NewRoofline(g, m, Pool{Count: 1, TP: 1})
	bw := g.MemoryTBps * 1e12
	if got, want := r.WeightRead+r.ExpertRead, m.StoredWeightBytes()/bw; math.Abs(got/want-1) > 1e-9 {
		t.Errorf("shared + expert read = %g s, want the whole checkpoint's %g s", got, want)
	}
	share := float64(m.ActiveExperts) / float64(m.Experts)
	if got, want := r.weightRead(1), r.WeightRead+share*r.ExpertRead; math.Abs(got/want-1) > 1e-9 {
		t.Errorf("one token reads %g s of weights, want %g (k/E of the experts)", got, want)
	}
	if got, want := r.weightRead(4096), r.WeightRead+r.ExpertRead; math.Abs(got/want-1) > 1e-6 {
		t.Errorf("a 4096-token prefill reads %g s of weights, want every expert's %g", got, want)
	}
	if a, b := r.weightRead(8), r.weightRead(64); !(a < b) {
		t.Errorf("weight read at 8 tokens %g not below 64 tokens' %g", a, b)
	}
	// GEMM FLOPs are the active experts' (plus the small-batch penalty
	// of each touched expert), far below a dense model of the same size.
	dense, _ := LookupLLM("Qwen/Qwen3-32B")
	rd := NewRoofline(g, dense, Pool{Count: 1, TP: 1})
	if rd.ExpertRead != 0 || rd.weightRead(1) != rd.weightRead(4096) {
		t.Errorf("dense model's weight read depends on tokens: %g vs %g", rd.weightRead(1), rd.weightRead(4096))
	}
	if moe, den := r.gemmFLOPTime(4096, 0), rd.gemmFLOPTime(4096, 0); moe > den/5 {
		t.Errorf("4096-token GEMM time %g s for a 3B-active MoE, %g s for a 32B dense; want well under a fifth", moe, den)
	}
	// The step's design row carries the touched experts' read.
	c := PriorCoeffs(false)
	one1, long := r.Terms(Step{DecodeSeqs: 1}, 1, c), r.Terms(Step{PrefillTokens: 4096, PrefillSeqs: 1}, 0, c)
	if !(long.Weight > 5*one1.Weight) {
		t.Errorf("weight term of a 4096-token prefill %g, of one decoded token %g; want the prefill's several times larger", long.Weight, one1.Weight)
	}
	sm := NewStepCost(g, m, Pool{Count: 1, TP: 1}, c, nil)
	sd := NewStepCost(g, dense, Pool{Count: 1, TP: 1}, c, nil)
	one := Step{DecodeSeqs: 1, DecodeKV: 1000}
	if a, b := sm.StepTime(one), sd.StepTime(one); a > b/3 {
		t.Errorf("decode of one sequence: MoE %g s, dense %g s; want the MoE under a third (it reads ~7 GB, not 66)", a, b)
	}
}

// gpt-oss keeps a KV cache only in its full-attention layers (the others
// hold a 128-token window): half of its 36 layers, 8 KV heads of 64 values.
func TestSlidingWindowLayersHoldNoKVCache(t *testing.T) {
	m, _ := LookupLLM("openai/gpt-oss-120b")
	if got, want := m.KVBytesPerToken(1, 2), 2.0*18*8*64*2; got != want {
		t.Errorf("gpt-oss-120b KV bytes per token = %g, want %g", got, want)
	}
	// MXFP4 experts beside BF16 attention and embeddings: about 65 GB.
	if got := m.StoredWeightBytes() / 1e9; got < 60 || got > 70 {
		t.Errorf("gpt-oss-120b stored weights %.1f GB, want about 65", got)
	}
}

// gpt-oss's MXFP4 experts take more memory loaded than stored (vLLM's
// kernels repack them: mxfp4LoadedBytes), so one H100 at vLLM's defaults
// (memory utilization 0.9, 1024 sequences and 8192 tokens on a GPU of
// 70 GiB or more) under the reserve rule before v0.12 (18 bytes a logit)
// keeps room for fewer than 131,072 tokens of context: GPUStack had to
// cut --max-model-len to 32,768 to start it with v0.10.2
// (fixtures/corpus/h-gpustack-gpt-oss-120b-h100.md). From v0.12
// (engine.MemoryProfile) it keeps none: vLLM 0.14.1 runs out of memory
// there (vllm-project/vllm#33155).
func TestGPTOSSLoadedWeightsLeaveVLLMsKVCache(t *testing.T) {
	m, _ := LookupLLM("openai/gpt-oss-120b")
	g, _ := LookupGPU("H100")
	if got := m.LoadedWeightBytes() / (1 << 30); math.Abs(got-64.38) > 0.1 {
		t.Errorf("gpt-oss-120b loaded weights %.2f GiB, want vLLM 0.14.1's 64.38", got)
	}
	mem, err := WorkerMemory(g, m, Pool{Count: 1, TP: 1}, MemoryOptions{MaxNumSeqs: 1024, MaxBatchedTokens: 8192})
	if err != nil {
		t.Fatal(err)
	}
	if mem.KVTokens < 32768 || mem.KVTokens >= 131072 {
		t.Errorf("gpt-oss-120b on one H100: %d tokens of KV cache, want 32,768 to 131,071", mem.KVTokens)
	}
	// A dense checkpoint loads as stored.
	if d, _ := LookupLLM("Qwen/Qwen3-32B"); d.LoadedWeightBytes() != d.StoredWeightBytes() {
		t.Errorf("Qwen3-32B: loaded %g bytes, stored %g", d.LoadedWeightBytes(), d.StoredWeightBytes())
	}
}

// At TP the experts are split like every other weight: each GPU reads
// 1/TP of each touched expert, so the touched share does not change.
func TestMoETensorParallel(t *testing.T) {
	g, _ := LookupGPU("A100")
	m, _ := LookupLLM("Qwen/Qwen3-235B-A22B")
	r1, r8 := NewRoofline(g, m, Pool{Count: 1, TP: 1}), NewRoofline(g, m, Pool{Count: 1, TP: 8})
	for _, tokens := range []float64{1, 16, 4096} {
		if a, b := r1.weightRead(tokens), 8*r8.weightRead(tokens); math.Abs(a/b-1) > 1e-9 {
			t.Errorf("%v tokens: TP1 weight read %g s, 8 × TP8's %g s", tokens, a, b)
		}
	}
	// 4 KV heads over 8 GPUs: each GPU keeps one head, half of them copies.
	if got, want := m.KVBytesPerToken(8, 2), 2.0*94*8*128*2; got != want {
		t.Errorf("KV bytes per token at TP8 = %g, want %g (a head per GPU)", got, want)
	}
}

// A dense model is priced as before mixture-of-experts pricing: its whole
// checkpoint read each step, its body's FLOPs for every token.
func TestDenseRooflineUnchangedByMoE(t *testing.T) {
	g, _ := LookupGPU("H100")
	m, _ := LookupLLM("Llama-3.1-8B-Instruct")
	r := NewRoofline(g, m, Pool{Count: 1, TP: 1})
	if r.WeightRead != m.StoredWeightBytes()/(g.MemoryTBps*1e12) || r.ExpertRead != 0 || r.ExpertToken != 0 {
		t.Errorf("dense roofline %+v: want the whole checkpoint in WeightRead and no expert terms", r)
	}
	if got, want := r.BodyToken, 2*m.BodyParams()/(g.GEMMTFLOPS(m.Quant)*1e12); got != want {
		t.Errorf("BodyToken = %g, want %g", got, want)
	}
	if got, want := r.gemmFLOPTime(100, 1), r.BodyToken*(100+GEMMHalfTokens)+r.HeadSeq; got != want {
		t.Errorf("dense GEMM time %g, want %g", got, want)
	}
}

// DeepSeek-V3's architecture: 37B of 671B active; a latent KV cache of
// 576 values a layer, whole on every tensor-parallel rank; FP8 weights
// that fit one 8-GPU H200 server but not an H100 one.
func TestDeepSeekV3Shape(t *testing.T) {
	for _, name := range []string{"deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", "DeepSeek-R1-0528"} {
		m, err := LookupLLM(name)
		if err != nil {
			t.Fatal(err)
		}
		if m.Quant != QuantFP8 || !m.IsMoE() {
			t.Errorf("%s: quant %q, MoE %v; want FP8 weights and routed experts", name, m.Quant, m.IsMoE())
		}
		if active := m.ActiveBodyParams() + m.EmbedParams(); math.Abs(active/37e9-1) > 0.03 {
			t.Errorf("%s: %.1fB active parameters, want about 37B", name, active/1e9)
		}
		// Routed experts: 58 layers × 256 × 3 × 7168 × 2048.
		if got, want := m.ExpertParams(), 58.0*256*3*7168*2048; got != want {
			t.Errorf("%s: routed expert parameters %g, want %g", name, got, want)
		}
		for _, tp := range []int{1, 8} {
			if got, want := m.KVBytesPerToken(tp, 2), 61.0*576*2*float64(tp); got != want {
				t.Errorf("%s: KV bytes per token at TP%d = %g, want %g", name, tp, got, want)
			}
		}
		h200, _ := LookupGPU("H200")
		h100, _ := LookupGPU("H100")
		if tp, err := SmallestTP(h200, m, MemoryOptions{}); err != nil || tp != 8 {
			t.Errorf("%s on H200: smallest TP %d (%v), want 8", name, tp, err)
		}
		if tp, _ := SmallestTP(h100, m, MemoryOptions{}); tp <= 8 {
			t.Errorf("%s on H100: smallest TP %d; 671 GB of FP8 weights do not fit 8 × 80 GB", name, tp)
		}
	}
	// NVIDIA's FP4 build: FP4 weights, FP8 KV cache.
	fp4, err := LookupLLM("nvidia/DeepSeek-R1-FP4")
	if err != nil || fp4.Quant != QuantFP4 || fp4.KVElemBytes() != 1 {
		t.Errorf("nvidia/DeepSeek-R1-FP4: %v quant %q KV bytes %v; want FP4 weights and an FP8 cache", err, fp4.Quant, fp4.KVElemBytes())
	}
}

// Latent attention's decode is compute-bound where a GPU has few FLOPs
// per byte and a rank holds many heads: on H20 at TP1 a cached token costs
// its FLOPs, not its bytes; on H200 at TP8 its bytes.
func TestLatentAttentionDecodeRoofline(t *testing.T) {
	m, _ := LookupLLM("deepseek-ai/DeepSeek-V3")
	for _, tt := range []struct {
		gpu     string
		tp      int
		compute bool
	}{{"H20", 1, true}, {"H200", 8, false}} {
		g, _ := LookupGPU(tt.gpu)
		r := NewRoofline(g, m, Pool{Count: 1, TP: tt.tp})
		bytes := m.KVBytesPerToken(tt.tp, 2) / (g.MemoryTBps * 1e12 * float64(tt.tp))
		// Scores over the 576-wide latent, values mixed from its 512.
		flop := 2 * 61.0 * 128 * (576 + 512) / (g.TFLOPS * 1e12 * float64(tt.tp))
		want := bytes
		if tt.compute {
			want = flop
		}
		if math.Abs(r.KVRead/want-1) > 1e-9 || (flop > bytes) != tt.compute {
			t.Errorf("%s TP%d: KV time per token %g s (bytes %g, FLOPs %g)", tt.gpu, tt.tp, r.KVRead, bytes, flop)
		}
	}
}

// Data-parallel attention over a worker's TP ranks caches each token in
// one attention group only and gives every group the attention weights.
func TestDataParallelAttention(t *testing.T) {
	m, _ := LookupLLM("deepseek-ai/DeepSeek-R1")
	g, _ := LookupGPU("H200")
	pool := Pool{Count: 1, TP: 8}
	tpOnly := NewRoofline(g, m, pool)
	for _, tt := range []struct {
		dp          int
		kvShare     float64 // KV bytes per token against attention split by TP
		extraWeight float64 // attention copies beyond TP's one
	}{
		{0, 1, 0}, {1, 1, 0}, {8, 1.0 / 8, 7}, {2, 1.0 / 2, 1},
		{3, 1, 0}, // does not divide TP8: attention split by TP
	} {
		dm := m.WithAttentionDP(tt.dp)
		if got, want := dm.KVBytesPerToken(8, 1), tt.kvShare*m.KVBytesPerToken(8, 1); math.Abs(got/want-1) > 1e-12 {
			t.Errorf("dp %d: KV bytes per token %g, want %g", tt.dp, got, want)
		}
		extra := tt.extraWeight * 61 * 187.1e6 * 1 // FP8 weights
		if got := dm.ReplicatedAttentionBytes(8); math.Abs(got-extra) > 1 {
			t.Errorf("dp %d: replicated attention %g bytes, want %g", tt.dp, got, extra)
		}
		r := NewRoofline(g, dm, pool)
		if want := tpOnly.WeightRead + extra/(g.MemoryTBps*1e12*8); math.Abs(r.WeightRead/want-1) > 1e-12 {
			t.Errorf("dp %d: weight read %g s, want %g", tt.dp, r.WeightRead, want)
		}
		mem, err := WorkerMemory(g, dm, pool, MemoryOptions{})
		base, _ := WorkerMemory(g, m, pool, MemoryOptions{})
		if tt.extraWeight > 0 {
			extra += 7 * 129280 * 7168 * 2 // the BF16 input embedding whole on every GPU
		}
		if err != nil || math.Abs(mem.WeightsGB-base.WeightsGB-extra/1e9) > 1e-6 {
			t.Errorf("dp %d: weights %v GB (%v), want %v GB more than TP's %v", tt.dp, mem.WeightsGB, err, extra/1e9, base.WeightsGB)
		}
	}
}

// A latent-attention model's attention weights are not the heads formula's
// (DeepSeek-V3's would come to 35.8B against its 11.4B): the catalog must
// state them, or data-parallel attention replicates the wrong size.
func TestLatentModelsStateAttentionParams(t *testing.T) {
	for _, m := range LLMs() {
		if m.LatentKV > 0 && m.AttentionParams == 0 {
			t.Errorf("%s: latent attention without AttentionParams", m.Name)
		}
	}
}
