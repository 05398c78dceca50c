package model

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/capsim/capsim/engine"
)

func TestRooflineH20Qwen3(t *testing.T) {
	g, _ := LookupGPU("h20")
	m, _ := LookupLLM("qwen3-32b")
	r := NewRoofline(g, m, Pool{Count: 1, TP: 4})
	// 65.6 GB of BF16 weights over 4 GPUs at 4 TB/s each: 4.1 ms.
	if got, want := r.WeightRead, 65.6e9/16e12; math.Abs(got-want)/want > 0.01 {
		t.Errorf("WeightRead = %g, want %g", got, want)
	}
	// 2,500 prompt tokens at TP1 need about 2·31.2e9·2500 FLOPs at 148 TFLOPS: about 1.05 s.
	r1 := NewRoofline(g, m, Pool{Count: 1, TP: 1})
	if got := r1.BodyToken * 2500; got < 1.0 || got > 1.15 {
		t.Errorf("2500-token body compute at TP1 = %g s, want about 1.05", got)
	}
	if r1.CommStep != 0 || r1.CommToken != 0 || r1.CommStepGraph != 0 {
		t.Errorf("TP1 has communication cost %+v", r1)
	}
}

// A step's all-reduces, two per layer, cost the interconnect's latency in
// a CUDA graph when the worker captures a step that large (decode steps up
// to the largest capture size), else its eager latency; TP1 pays none.
func TestCollectivesGraphOrEager(t *testing.T) {
	g, _ := LookupGPU("H100")
	m, _ := LookupLLM("Qwen/Qwen3-32B")
	prefill := Step{PrefillTokens: 2000, PrefillSeqs: 1, PrefillAttn: ChunkAttn(0, 2000)}
	mixed := Step{PrefillTokens: 2000, PrefillSeqs: 1, PrefillAttn: ChunkAttn(0, 2000), DecodeSeqs: 8, DecodeKV: 8000}
	decode := Step{DecodeSeqs: 8, DecodeKV: 8000}
	ic := g.Link()
	layers := 2 * float64(m.Layers) * 1e-6
	graphUs, eagerUs := ic.AllReduceUs(8, true), ic.AllReduceUs(8, false)
	if !(graphUs >= 4 && graphUs <= 7 && eagerUs >= 15 && eagerUs <= 30) {
		t.Fatalf("NVLink4 TP8 all-reduce %.1f µs in a graph, %.1f µs eager: want the cited ~5.5 and ~23.5", graphUs, eagerUs)
	}
	graphs := engine.GraphSizes(128)
	for _, tt := range []struct {
		name   string
		tp     int
		graphs []int
		step   Step
		want   float64 // the latency part of the step's comm, at Comm = 1
	}{
		{"TP8 graphs prefill", 8, graphs, prefill, layers * eagerUs},
		{"TP8 graphs mixed chunked step", 8, graphs, mixed, layers * eagerUs},
		{"TP8 graphs decode", 8, graphs, decode, layers * graphUs},
		{"TP8 eager decode", 8, nil, decode, layers * eagerUs},
		{"TP1 graphs decode", 1, graphs, decode, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewStepCost(g, m, Pool{Count: 1, TP: tt.tp}, PriorCoeffs(tt.graphs == nil), tt.graphs)
			tokens := float64(tt.step.PrefillTokens + c.PaddedBatch(tt.step.DecodeSeqs))
			if tt.step.PrefillTokens > 0 {
				tokens = float64(tt.step.PrefillTokens + tt.step.DecodeSeqs)
			}
			if got := c.Roofline.commLatency(tokens); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("collective latency %.4g s, want %.4g s", got, tt.want)
			}
		})
	}
}

// A GPU's interconnect latencies are ordered as measured: a captured
// all-reduce never costs more than an eager one, and more ranks never cost
// less.
func TestAllReduceLatencyShape(t *testing.T) {
	for _, ic := range Interconnects() {
		for _, tp := range []int{2, 3, 4, 6, 8, 16} {
			g, e := ic.AllReduceUs(tp, true), ic.AllReduceUs(tp, false)
			if !(g > 0 && g <= e) {
				t.Errorf("%s TP%d: %.1f µs in a graph, %.1f eager: want 0 < graph ≤ eager", ic.Name, tp, g, e)
			}
		}
		if ic.AllReduceUs(8, true) < ic.AllReduceUs(2, true) {
			t.Errorf("%s: TP8 all-reduce cheaper than TP2 in a graph", ic.Name)
		}
	}
}

func TestStepCostDecodeAffine(t *testing.T) {
	g, _ := LookupGPU("H20")
	m, _ := LookupLLM("Qwen/Qwen3-32B")
	c := NewStepCost(g, m, Pool{Count: 1, TP: 4}, PriorCoeffs(false), engine.GraphSizes(128))
	for _, n := range []int{1, 3, 9, 128, 200} {
		base, perKV := c.DecodeAffine(n)
		for _, k := range []float64{0, 1e3, 5e5} {
			got := c.StepTime(Step{DecodeSeqs: n, DecodeKV: k})
			if want := base + perKV*k; math.Abs(got-want) > 1e-12 {
				t.Errorf("n=%d k=%g: StepTime %g != affine %g", n, k, got, want)
			}
		}
	}
	if a, b := c.StepTime(Step{DecodeSeqs: 9}), c.StepTime(Step{DecodeSeqs: 16}); a != b {
		t.Errorf("batch 9 should pad to 16: %g vs %g", a, b)
	}
}

func TestWorkerMemory(t *testing.T) {
	g, _ := LookupGPU("H20")
	m, _ := LookupLLM("Qwen3-32B")
	mem, err := WorkerMemory(g, m, Pool{Count: 1, TP: 4}, MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 4×97871 MiB×0.9 = 369.5 GB usable, 65.6 weights, 4×0.70 GB for
	// the profiling run (the sampler over 256 rows of 151,936 logits at
	// 18 bytes): 301.1 GB of KV at 256 KiB per token.
	if want := 301.1e9 / 262144; math.Abs(float64(mem.KVTokens)-want) > 0.01*want {
		t.Errorf("KVTokens = %d, want about %.0f", mem.KVTokens, want)
	}
	l4, _ := LookupGPU("L4")
	if _, err := WorkerMemory(l4, m, Pool{Count: 1, TP: 1}, MemoryOptions{}); err == nil {
		t.Error("Qwen3-32B on one L4 should not fit")
	} else if want := "smallest TP that fits: TP4"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
}

// A sliding-window model's windowed layers are left out of the cache's
// per-token size, and an engine with a window pool of its own (SGLang)
// splits the memory between the two pools: gpt-oss-120b alternates 18
// full and 18 windowed layers of 8 KV heads × 64 × K and V at 2 bytes
// (36,864 bytes a token over the full layers), and SGLang's 0.8 window
// slots per full slot make 1.8 times that.
func TestWorkerMemoryWindowPool(t *testing.T) {
	g, _ := LookupGPU("H100-SXM")
	m, _ := LookupLLM("openai/gpt-oss-120b")
	if got := m.WindowedKVShare(); got != 1 {
		t.Errorf("gpt-oss-120b windowed share %v, want 1", got)
	}
	if dense, _ := LookupLLM("Qwen3-32B"); dense.WindowedKVShare() != 0 {
		t.Errorf("Qwen3-32B windowed share %v, want 0", dense.WindowedKVShare())
	}
	one, err := WorkerMemory(g, m, Pool{Count: 1, TP: 2}, MemoryOptions{ReserveGB: 2})
	if err != nil {
		t.Fatal(err)
	}
	own, err := WorkerMemory(g, m, Pool{Count: 1, TP: 2}, MemoryOptions{ReserveGB: 2, WindowPool: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if one.KVPerToken != 36864 || math.Abs(own.KVPerToken/one.KVPerToken-1.8) > 1e-12 {
		t.Errorf("KV bytes per token %v (one pool) and %v (a 0.8 window pool), want 36864 (the worker's two GPUs together) and 1.8 times it", one.KVPerToken, own.KVPerToken)
	}
	if own.KVGB != one.KVGB || own.KVTokens >= one.KVTokens {
		t.Errorf("the window pool shares the same %v GB (got %v) and holds fewer full-attention tokens (%d against %d)", one.KVGB, own.KVGB, own.KVTokens, one.KVTokens)
	}
}

// A KV cache the engine states replaces the budget the utilization leaves,
// and lets a model run that the default 0.9 would not fit: Qwen2-72B at TP2
// on A100-80GB, where vLLM reported 6.77 GiB per GPU (Test 8 of
// fixtures/corpus/b-dennislee-a100-qwen.md). A stated cache that cannot
// sit beside the weights is an error naming it.
func TestWorkerMemoryStatedKVCache(t *testing.T) {
	a100, _ := LookupGPU("A100-80GB")
	m, err := LookupLLM("Qwen2-72B")
	if err != nil {
		t.Fatal(err)
	}
	pool := Pool{Count: 1, TP: 2}
	mem, err := WorkerMemory(a100, m, pool, MemoryOptions{KVCacheGiB: 6.77})
	if err != nil {
		t.Fatal(err)
	}
	want := math.Floor(6.77 * (1 << 30) * 2 / m.KVBytesPerToken(2, m.KVElemBytes()))
	if float64(mem.KVTokens) != want {
		t.Errorf("KVTokens = %d, want %.0f (6.77 GiB on each of 2 GPUs)", mem.KVTokens, want)
	}
	computed, err := WorkerMemory(a100, m, pool, MemoryOptions{})
	// The default 0.9 leaves 54% of it (the run must have raised the
	// utilization to about 0.94).
	if err == nil && computed.KVTokens >= mem.KVTokens*3/5 {
		t.Errorf("without the statement: %d tokens; the test expects the default budget to leave far less than vLLM's %d", computed.KVTokens, mem.KVTokens)
	}
	if _, err := WorkerMemory(a100, m, pool, MemoryOptions{KVCacheGiB: 20}); err == nil || !strings.Contains(err.Error(), "stated KV cache") {
		t.Errorf("20 GiB beside 145 GB of weights on 2×80 GiB: err = %v, want one naming the stated KV cache", err)
	}
}

// The KV cache vLLM 0.10.1.1 reported at startup ("Available KV cache
// memory") in fixtures/corpus/b-dennislee-a100-qwen.md's test headings,
// on A100-80GB: WorkerMemory comes within 7% of each, from the 79.26 GiB
// CUDA reports (GPU.CUDAMemoryMiB, which the logs' pairs of utilizations
// give) less the profiling run's peak (SamplerBytesPerLogit, derived from
// these same logs, so this checks the rule's form: one reserve for every
// model, TP and utilization). Taking the card as 80e9 bytes was 11–57%
// short; a fixed 2 GB reserve left Test 4 21% short.
func TestWorkerMemoryMatchesReportedKVCache(t *testing.T) {
	a100, _ := LookupGPU("A100-80GB")
	for _, c := range []struct {
		test    string
		model   string
		tp      int
		util    float64
		statedG float64 // GiB per GPU
	}{
		{"Test 2", "Qwen2-7B-Instruct", 2, 0.25, 12.02},
		{"Test 3", "Qwen2-7B-Instruct", 2, 0.5, 31.83},
		{"Test 4", "Qwen2-7B-Instruct", 1, 0.25, 5.01},
		{"Test 5", "Qwen2-7B-Instruct", 1, 0.5, 24.83},
		{"Test 7", "Qwen2.5-32B", 1, 0.9, 9.70}, // utilization not stated: vLLM's default
	} {
		m, err := LookupLLM(c.model)
		if err != nil {
			t.Fatal(err)
		}
		mem, err := WorkerMemory(a100, m, Pool{Count: 1, TP: c.tp}, MemoryOptions{Utilization: c.util})
		if err != nil {
			t.Fatalf("%s: %v", c.test, err)
		}
		got := mem.KVGB * 1e9 / float64(mem.GPUs) / (1 << 30)
		if math.Abs(got/c.statedG-1) > 0.07 {
			t.Errorf("%s (%s TP%d at %.2f): KV cache %.2f GiB per GPU, vLLM reported %.2f", c.test, c.model, c.tp, c.util, got, c.statedG)
		}
	}
}

// vLLM's profiling run peaks at the sampler over max-num-seqs rows of the
// vocabulary unless a forward pass over the token budget takes more: on
// H100, where vLLM defaults to 1024 sequences, four times what 256 take.
func TestProfilePeakBytes(t *testing.T) {
	m, _ := LookupLLM("Qwen3-32B")
	for _, c := range []struct {
		tp, tokens, seqs int
		want             float64 // bytes
	}{
		{1, 2048, 256, 256 * 151936 * SamplerBytesPerLogit},
		{1, 8192, 1024, 1024 * 151936 * SamplerBytesPerLogit},
		{1, 8192, 0, 8192 * (3*25600 + 4*5120) * 2}, // no sampler: the MLP's activations
		{4, 8192, 0, 8192 * (3*25600/4 + 4*5120) * 2},
	} {
		if got := ProfilePeakBytes(m, c.tp, c.tokens, c.seqs, 0); math.Abs(got-c.want) > 1 {
			t.Errorf("TP%d, %d tokens, %d seqs: %.0f bytes, want %.0f", c.tp, c.tokens, c.seqs, got, c.want)
		}
	}
	g, _ := LookupGPU("H100-SXM")
	small, _ := WorkerMemory(g, m, Pool{Count: 1, TP: 1}, MemoryOptions{MaxNumSeqs: 256, MaxBatchedTokens: 2048})
	large, _ := WorkerMemory(g, m, Pool{Count: 1, TP: 1}, MemoryOptions{MaxNumSeqs: 1024, MaxBatchedTokens: 8192})
	if d := small.KVGB - large.KVGB; math.Abs(d-3*256*151936*SamplerBytesPerLogit/1e9) > 1e-6 {
		t.Errorf("1024 sequences leave %.2f GB less KV cache than 256, want %.2f", d, 3*256*151936*SamplerBytesPerLogit/1e9)
	}
}

// A step's GEMMs take the smooth roofline of their compute and memory
// time: a lone decode on H100 streams the weights (memory-bound), a large
// prefill is compute-bound, and where the two meet (near the GPU's FLOPs
// per byte) the step takes 2^(1/p) times either; it is never below the
// larger nor above their sum.
func TestStepTimeIsRoofline(t *testing.T) {
	g, _ := LookupGPU("H100-SXM")
	m, _ := LookupLLM("Llama-3.1-8B-Instruct")
	c := NewStepCost(g, m, Pool{Count: 1, TP: 1}, Coeffs{Weight: 1, Compute: 1}, nil)
	// The GEMMs' roofline alone: the activation traffic beside it has a
	// test of its own.
	c.Roofline.Act = ActivationTraffic{}
	r := c.Roofline
	if got := c.StepTime(Step{DecodeSeqs: 1}); math.Abs(got/r.WeightRead-1) > 0.01 {
		t.Errorf("lone decode %g s, want about the weight read %g s", got, r.WeightRead)
	}
	big := Step{PrefillTokens: 8192, PrefillSeqs: 1}
	if got, want := c.StepTime(big), r.BodyToken*(8192+GEMMHalfTokens); math.Abs(got/want-1) > 0.01 {
		t.Errorf("8192-token prefill %g s, want about its FLOP time %g s", got, want)
	}
	ridge := 0
	for n := 1; n < 4096; n++ {
		s := Step{PrefillTokens: n, PrefillSeqs: 1}
		flop, got := r.gemmFLOPTime(float64(n), 0), c.StepTime(s)
		if lo, hi := math.Max(flop, r.WeightRead), flop+r.WeightRead; got < lo*(1-1e-12) || got > hi*(1+1e-12) {
			t.Fatalf("%d tokens: %g s outside [max %g, sum %g]", n, got, lo, hi)
		}
		if ridge == 0 && flop >= r.WeightRead {
			ridge = n
			if want := math.Pow(2, 1/RooflineP) * r.WeightRead; math.Abs(got/want-1) > 0.01 {
				t.Errorf("at the ridge (%d tokens) %g s, want 2^(1/p) × the weight read = %g s", n, got, want)
			}
		}
	}
	// The ridge sits at about peak FLOPs ÷ bandwidth tokens (2 FLOPs and 2
	// bytes per BF16 weight), about 295 on H100-SXM.
	if want := g.TFLOPS / g.MemoryTBps; math.Abs(float64(ridge)-want) > 0.15*want {
		t.Errorf("compute time reaches the weight read at %d tokens, want about %.0f (H100's FLOPs per byte)", ridge, want)
	}
}

// The activation traffic between the GEMMs, counted by hand: it is a
// percent of a dense prefill's GEMM time on a GPU of few FLOPs per byte
// (the H20 the seeds calibrate) and comparable to a mixture of experts'
// GEMM time on a fast GPU at TP8, where every rank sums every token's
// routed experts' outputs. Only what exceeds the cache moves.
func TestActivationTraffic(t *testing.T) {
	for _, c := range []struct {
		model, gpu string
		tp         int
		bytes      float64
		// the activation time over the peak GEMM FLOP time of an
		// 8192-token prefill, between lo and hi
		lo, hi float64
	}{
		// Qwen3-32B, 64 layers of hidden 5120, 64 query and 8 KV heads of
		// 128, FFN 25600: (8·5120 + 2·72·128 + 3·25600)·64·2 bytes.
		{"Qwen3-32B", "H20", 1, 17432576, 0.005, 0.02},
		// DeepSeek-R1 at TP8, 61 layers of hidden 7168 whose rotary
		// embedding turns 64 values of each of 128 query heads and one
		// shared 64-value key, 3 dense layers of FFN 18432, 58 with 8
		// routed experts of 2048: (61·(8·7168 + 2·129·64/8) +
		// 3·3·18432/8 + 58·(3·8·2048/8 + 17·7168))·2 bytes.
		{"DeepSeek-R1", "H200", 8, 22137248, 0.5, 1.5},
	} {
		g, _ := LookupGPU(c.gpu)
		m, err := LookupLLM(c.model)
		if err != nil {
			t.Fatal(err)
		}
		if got := activationBytesPerToken(m, c.tp); math.Abs(got-c.bytes) > 0.5 {
			t.Errorf("%s TP%d: %.0f activation bytes a token, want %.0f", c.model, c.tp, got, c.bytes)
		}
		r := NewRoofline(g, m, Pool{Count: 1, TP: c.tp})
		if ratio := r.Act.Time(8192) / r.gemmFLOPTime(8192, 1); ratio < c.lo || ratio > c.hi {
			t.Errorf("%s TP%d on %s: activation time %.3f of the GEMM FLOP time, want %.3f–%.3f", c.model, c.tp, c.gpu, ratio, c.lo, c.hi)
		}
	}
	// A decode batch's activations stay in the cache; a prefill chunk's
	// spill, and a chunk far larger than the cache moves nearly all of it.
	g, _ := LookupGPU("H100-SXM")
	q, _ := LookupLLM("Qwen3-32B")
	r := NewRoofline(g, q, Pool{Count: 1, TP: 1})
	if got := r.Act.Time(64); got != 0 {
		t.Errorf("a 64-sequence decode's activations on H100 take %g s, want 0 (they fit in its 50 MB L2)", got)
	}
	all := activationBytesPerToken(q, 1) / (g.MemoryTBps * 1e12)
	if got := r.Act.Time(1 << 20); got < 0.99*all*(1<<20) || got > all*(1<<20) {
		t.Errorf("a million tokens' activations take %g s, want just under %g s", got, all*(1<<20))
	}
	if got, most := r.Act.Time(8192), all*8192; got <= 0.5*most || got >= most {
		t.Errorf("an 8192-token chunk's activations take %g s, want most of %g s", got, most)
	}
	// A mixture of experts' per-expert activations are evicted by the
	// expert weights streamed after them: even a small decode moves them.
	h200, _ := LookupGPU("H200")
	ds, _ := LookupLLM("DeepSeek-R1")
	k := 8.0
	perToken := 58 * 2 * (3*k*2048/8 + (2*k+1)*7168)
	if got, want := NewRoofline(h200, ds, Pool{Count: 1, TP: 8}).Act.Time(16), 16*perToken/(h200.MemoryTBps*1e12); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("a 16-sequence DeepSeek-R1 decode's activations take %g s, want its expert outputs' %g s", got, want)
	}
	// Every catalog GPU states its last-level cache.
	for _, g := range GPUs() {
		if !(g.L2MB > 0) || !strings.Contains(g.Source, "L2: ") && !strings.Contains(g.Source, "Last-level cache: ") {
			t.Errorf("%s: L2MB %v; want a cache size cited in its Source", g.Name, g.L2MB)
		}
	}
	// Data-parallel attention groups norm their own requests only.
	m, _ := LookupLLM("DeepSeek-R1")
	if dp, tp := activationBytesPerToken(m.WithAttentionDP(8), 8), activationBytesPerToken(m, 8); tp-dp != 61*7*7168*2 {
		t.Errorf("DP attention 8 saves %.0f bytes a token, want 61·(8−1)·7168·2", tp-dp)
	}
}

// A step's time is its overheads, the smooth roofline of its GEMMs and its
// attention, KV and communication terms, and the design row carries it
// exactly at the coefficients it is taken at (Euler's theorem for a
// degree-1 homogeneous function), so the fit's linear rows and the
// simulator's step times agree there.
func TestTermsDotIsStepTime(t *testing.T) {
	g, _ := LookupGPU("A100-80GB")
	m, _ := LookupLLM("Qwen3-32B")
	for _, k := range []Coeffs{
		{Overhead: 0.002, PerSeq: 3e-5, Weight: 1.2, Compute: 1.6, Attn: 2, KV: 1.7, Comm: 1},
		{Weight: 3, Compute: 1},
		{Weight: 1, Compute: 5},
	} {
		c := NewStepCost(g, m, Pool{Count: 1, TP: 2}, k, nil)
		for _, s := range []Step{
			{DecodeSeqs: 1, DecodeKV: 500},
			{DecodeSeqs: 150, DecodeKV: 150 * 800},
			{PrefillTokens: 2048, PrefillSeqs: 2, PrefillAttn: ChunkAttn(0, 1024) * 2, DecodeSeqs: 64, DecodeKV: 64e3},
		} {
			r := c.Roofline
			n := float64(s.DecodeSeqs)
			tokens := float64(s.PrefillTokens) + n
			gemm := math.Pow(math.Pow(k.Compute*r.gemmFLOPTime(tokens, n), RooflineP)+math.Pow(k.Weight*r.WeightRead, RooflineP), 1/RooflineP)
			want := k.Overhead + k.PerSeq*(float64(s.PrefillSeqs)+n) + gemm + k.Attn*r.AttnPair*s.PrefillAttn +
				k.KV*r.KVRead*s.DecodeKV + k.Comm*(r.CommToken*tokens+r.CommStep) + k.Weight*r.Act.Time(tokens)
			if got := c.StepTime(s); math.Abs(got/want-1) > 1e-9 {
				t.Errorf("coeffs %+v, step %+v: step time %g s, want %g s", k, s, got, want)
			}
			row := r.Terms(s, n, k)
			if got := k.Dot(row); math.Abs(got/want-1) > 1e-9 {
				t.Errorf("coeffs %+v, step %+v: design row · coeffs = %g s, want %g s", k, s, got, want)
			}
			// Each GEMM entry is the step time's derivative in its
			// coefficient, so the fit's linearisation is first-order exact.
			const h = 1e-6
			for _, d := range []struct {
				name  string
				entry float64
				bump  func(*Coeffs)
			}{
				{"compute", row.Compute, func(c *Coeffs) { c.Compute += h }},
				{"weight", row.Weight, func(c *Coeffs) { c.Weight += h }},
			} {
				up := c
				d.bump(&up.Coeffs)
				if got := (up.StepTime(s) - c.StepTime(s)) / h; math.Abs(got-d.entry) > 1e-4*math.Max(math.Abs(d.entry), 1e-9)+1e-12 {
					t.Errorf("coeffs %+v, step %+v: ∂time/∂%s = %g, design row has %g", k, s, d.name, got, d.entry)
				}
			}
		}
	}
}

func TestValidateRejectsFasterThanPeak(t *testing.T) {
	c := PriorCoeffs(false)
	if err := c.Validate(); err != nil {
		t.Fatalf("prior invalid: %v", err)
	}
	c.Weight = 0.9
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "faster than the hardware's peak") {
		t.Errorf("weight 0.9 accepted: %v", err)
	}
}

// Pipeline stages add hand-offs to a step, not compute: one step of TP4PP2
// takes about as long as TP4, and the worker runs two microbatches.
func TestPipelineRoofline(t *testing.T) {
	g, _ := LookupGPU("H100-SXM")
	m, _ := LookupLLM("Llama-3.1-70B-Instruct")
	tp := NewStepCost(g, m, Pool{Count: 1, TP: 4}, PriorCoeffs(false), nil)
	pp := NewStepCost(g, m, Pool{Count: 1, TP: 4, PP: 2}, PriorCoeffs(false), nil)
	s := Step{DecodeSeqs: 8, DecodeKV: 8000}
	a, b := tp.StepTime(s), pp.StepTime(s)
	if !(b > a && b < 1.05*a) {
		t.Errorf("TP4PP2 step %.3f ms, TP4 %.3f ms: want slightly longer (hand-off only)", 1000*b, 1000*a)
	}
	if n := (Pool{Count: 1, TP: 4, PP: 2}).Microbatches(); n != 2 {
		t.Errorf("Microbatches = %d, want 2", n)
	}
}

func TestInterconnectsHaveSources(t *testing.T) {
	for _, g := range GPUs() {
		if _, err := LookupInterconnect(g.Interconnect); err != nil {
			t.Errorf("%s: %v", g.Name, err)
		}
	}
	for _, ic := range Interconnects() {
		if !(ic.GBps > 0 && ic.AchievableBps() > 0 && ic.Efficiency <= 1 && ic.AllReduceUs(2, true) > 0 && ic.AllReduceUs(8, false) > 0 && ic.Source != "") {
			t.Errorf("interconnect %+v: want positive facts, efficiency ≤ 1 and a source", ic)
		}
		// A measured bus bandwidth is measured at every TP, its source says
		// so, and it replaces the efficiency rather than repeating it.
		if ic.BusGBps[0] > 0 && (ic.BusGBps[1] <= 0 || ic.BusGBps[2] <= 0 || ic.Efficiency != 0 || !strings.Contains(strings.ToLower(ic.Source), "bus bandwidth")) {
			t.Errorf("interconnect %s: bus bandwidth %v without a figure at every TP, with an efficiency too, or without its source", ic.Name, ic.BusGBps)
		}
		// Physical bounds: two GPUs exchange over one link's line rate, and
		// n GPUs over at most the n−1 links between them (an NVSwitch's
		// in-switch reduction stays far below that bound too).
		for k, tp := range []int{2, 4, 8} {
			if bus := ic.AllReduceBps(tp) / 1e9; bus > float64(tp-1)*ic.GBps || k == 0 && bus > ic.GBps {
				t.Errorf("interconnect %s: %.0f GB/s bus bandwidth at TP%d exceeds its %.0f GB/s links", ic.Name, bus, tp, ic.GBps)
			}
		}
		// A measured graph curve fits a roofline, has a row per TP of its
		// sizes, starts at the 16 KB latency (no growth) and never falls.
		if k := len(ic.GraphGrowthBytes); k > 0 {
			if k > MaxGraphGrowthPoints || ic.GraphGrowthBytes[0] != 16<<10 {
				t.Errorf("interconnect %s: %d curve points from %v bytes, want at most %d from 16 KB", ic.Name, k, ic.GraphGrowthBytes[0], MaxGraphGrowthPoints)
			}
			for i, row := range ic.GraphGrowthUs {
				// One measured dip is kept: on 8× B200 vLLM hands 1 MB to
				// a quicker kernel than 512 KB (17 against 26 µs).
				dip := ic.Name == "NVLink5" && i == 2
				if len(row) != k || row[0] != 0 || slices.Min(row) < 0 || slices.IsSorted(row) == dip {
					t.Errorf("interconnect %s: growth row %v for %d sizes, want 0 first and never falling (NVLink5's TP8 row: its dip)", ic.Name, row, k)
				}
			}
		}
		// A figure taken from elsewhere is named.
		if strings.Contains(ic.Source, "assumed") && ic.Assumed == "" {
			t.Errorf("interconnect %s: its source assumes a figure its Assumed does not name", ic.Name)
		}
	}
}

// AllReduceBps reads the measured bus bandwidth at TP 2, 4 and 8,
// interpolates in log2(TP) between them and holds it beyond; a link
// without one uses its line rate × efficiency at every TP.
func TestAllReduceBps(t *testing.T) {
	ic := Interconnect{GBps: 100, Efficiency: 0.5, BusGBps: [3]float64{40, 80, 100}}
	for _, c := range []struct {
		tp   int
		want float64
	}{{1, 40}, {2, 40}, {3, 40 + 40*(math.Log2(3)-1)}, {4, 80}, {8, 100}, {16, 100}} {
		if got := ic.AllReduceBps(c.tp) / 1e9; math.Abs(got-c.want) > 1e-9 {
			t.Errorf("AllReduceBps(%d) = %v GB/s, want %v", c.tp, got, c.want)
		}
	}
	if got := ic.AchievableBps(); got != 40e9 {
		t.Errorf("AchievableBps = %v, want TP2's bus bandwidth 40e9", got)
	}
	ic.BusGBps = [3]float64{}
	if got, p2p := ic.AllReduceBps(8), ic.AchievableBps(); got != 50e9 || p2p != 50e9 {
		t.Errorf("unmeasured AllReduceBps(8) = %v, AchievableBps = %v, want GBps × Efficiency = 50e9", got, p2p)
	}
	// A step's per-token all-reduce time is the ring's 2(n−1)/n share of a
	// token's activations at the TP's own bus bandwidth (an H100's TP8,
	// near its line rate, as NVLink SHARP gives, reaches 445 GB/s where its
	// TP2 reaches 318).
	h100, m := h100Llama70B(t)
	r2, r8 := NewRoofline(h100, m, Pool{Count: 1, TP: 2}), NewRoofline(h100, m, Pool{Count: 1, TP: 8})
	if r2.CommToken <= 0 || r8.CommToken <= 0 {
		t.Fatalf("no all-reduce traffic priced: %v, %v", r2.CommToken, r8.CommToken)
	}
	bus2, bus8 := r2.CommToken*h100.Link().AllReduceBps(2)/(2*(2-1)/2.0), r8.CommToken*h100.Link().AllReduceBps(8)/(2*(8-1)/8.0)
	if math.Abs(bus2/bus8-1) > 1e-9 {
		t.Errorf("per-token all-reduce bytes differ between TP2 and TP8 once the bus bandwidth is taken out: %v vs %v", bus2, bus8)
	}
}

// A measured matmul or bandwidth share is a share (0, 1] with its
// measurement cited; an unmeasured GPU takes the documented middle value.
func TestMatmulSharesHaveSources(t *testing.T) {
	measured := 0
	for _, g := range GPUs() {
		for _, v := range []float64{g.MatmulShare, g.FP8MatmulShare} {
			if v < 0 || v > 1 {
				t.Errorf("%s: matmul share %v outside [0, 1]", g.Name, v)
			}
		}
		if g.MatmulShare > 0 {
			measured++
			if !strings.Contains(g.Source, "Matmul:") {
				t.Errorf("%s: matmul share %v without its measurement in Source", g.Name, g.MatmulShare)
			}
		} else if got := g.AchievableMatmulShare(QuantNone); got != MatmulShareUnmeasured {
			t.Errorf("%s (unmeasured): share %v, want %v", g.Name, got, MatmulShareUnmeasured)
		}
		if g.MemoryShare < 0 || g.MemoryShare > 1 || (g.MemoryShare > 0) != strings.Contains(g.Source, "Bandwidth:") {
			t.Errorf("%s: bandwidth share %v, want one in (0, 1] exactly where Source cites its measurement", g.Name, g.MemoryShare)
		}
		if g.FP8MatmulShare > 0 && g.FP8TFLOPS == 0 {
			t.Errorf("%s: an FP8 matmul share without FP8 tensor cores", g.Name)
		}
	}
	if measured < 10 {
		t.Errorf("%d GPUs with a measured matmul share, want the catalog's measured ones (≥ 10)", measured)
	}
}

// A quantized checkpoint is its base model with fewer weight bytes, and
// FP8 GEMMs run on FP8 tensor cores only where the GPU has them.
func TestQuantizedCheckpoints(t *testing.T) {
	tests := []struct {
		name, base string
		q          Quantization
	}{
		{"nvidia/Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B-Instruct", QuantFP8},
		{"neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", "meta-llama/Llama-3.1-70B-Instruct", QuantFP8},
		{"Qwen/Qwen3-32B-AWQ", "Qwen/Qwen3-32B", QuantInt4},
		{"Qwen3-32B-W4A16-GPTQ-selfbuilt", "Qwen/Qwen3-32B", QuantInt4},
		{"nvidia/Llama-3.3-70B-Instruct-FP4", "meta-llama/Llama-3.3-70B-Instruct", QuantFP4},
		{"Qwen/Qwen3-32B", "Qwen/Qwen3-32B", QuantNone},
		// Meta-Llama-3 (not 3.1) keeps "Meta-" in its catalog name.
		{"neuralmagic/Meta-Llama-3-8B-Instruct-FP8", "meta-llama/Meta-Llama-3-8B-Instruct", QuantFP8},
		{"RedHatAI/Meta-Llama-3-70B-Instruct-FP8-dynamic", "meta-llama/Meta-Llama-3-70B-Instruct", QuantFP8},
		{"neuralmagic/Llama-3.1-Nemotron-70B-Instruct-HF-FP8-dynamic", "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", QuantFP8},
	}
	for _, tt := range tests {
		m, err := LookupLLM(tt.name)
		if err != nil {
			t.Errorf("LookupLLM(%q): %v", tt.name, err)
			continue
		}
		base, _ := LookupLLM(tt.base)
		if m.Quant != tt.q || m.Layers != base.Layers || m.Params != base.Params {
			t.Errorf("LookupLLM(%q) = quant %q, %d layers; want %q and %s's shape", tt.name, m.Quant, m.Layers, tt.q, tt.base)
		}
	}
	h100, _ := LookupGPU("H100-SXM")
	a100, _ := LookupGPU("A100-80GB")
	fp8, _ := LookupLLM("nvidia/Llama-3.1-8B-Instruct-FP8")
	bf16, _ := LookupLLM("meta-llama/Llama-3.1-8B-Instruct")
	p := Pool{Count: 1, TP: 1}
	if r8, r16 := NewRoofline(h100, fp8, p), NewRoofline(h100, bf16, p); !(r8.WeightRead < 0.6*r16.WeightRead && math.Abs(r8.BodyToken/r16.BodyToken-0.5) < 0.01) {
		t.Errorf("FP8 on H100: weight read %g vs %g, body token %g vs %g; want about half of both", r8.WeightRead, r16.WeightRead, r8.BodyToken, r16.BodyToken)
	}
	if r8, r16 := NewRoofline(a100, fp8, p), NewRoofline(a100, bf16, p); r8.BodyToken != r16.BodyToken {
		t.Errorf("FP8 on A100 (no FP8 tensor cores) computes at %g, want the BF16 rate %g", r8.BodyToken, r16.BodyToken)
	}
}

// A tensor-parallel group that spans servers all-reduces over the node
// network: its communication costs many times what the same group pays on
// its in-server link, and a worker on one node (0 or 1) keeps its link.
func TestAcrossNodesPricesTheNetwork(t *testing.T) {
	a100, _ := LookupGPU("A100-40GB")
	qwen, _ := LookupLLM("Qwen2-7B-Instruct")
	tp2 := Pool{Count: 1, TP: 2}
	nvlink := NewRoofline(a100, qwen, tp2)
	tests := []struct {
		name     string
		nodes    int
		link     string
		minRatio float64 // of the comm time of a 10-sequence decode step, over NVLink's
	}{
		{"unstated", 0, "NVLink3", 1},
		{"one node", 1, "NVLink3", 1},
		{"two nodes", 2, NodeNetwork, 5},
		{"four nodes", 4, NodeNetwork, 5},
	}
	commOf := func(r Roofline) float64 { return 10*r.CommToken + r.CommStepGraph }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := a100.AcrossNodes(tt.nodes)
			if g.TPLink(1).Name != tt.link {
				t.Fatalf("link %s, want %s", g.TPLink(1).Name, tt.link)
			}
			if g.Name != a100.Name || g.MemoryTBps != a100.MemoryTBps || g.Link().Name != a100.Link().Name {
				t.Errorf("AcrossNodes changed more than the link: %+v", g)
			}
			r := NewRoofline(g, qwen, tp2)
			ratio := commOf(r) / commOf(nvlink)
			if ratio < tt.minRatio || (tt.minRatio == 1 && ratio != 1) {
				t.Errorf("comm %.0f µs vs NVLink %.0f µs (×%.1f): want ×%g or more", 1e6*commOf(r), 1e6*commOf(nvlink), ratio, tt.minRatio)
			}
			// What does not cross the link is unchanged.
			if r.WeightRead != nvlink.WeightRead || r.KVRead != nvlink.KVRead {
				t.Errorf("roofline beyond the link changed: %+v vs %+v", r, nvlink)
			}
		})
	}
	// A TP2PP2 worker on two servers keeps each stage's TP on its server's
	// link and hands off between the stages over the network; on four
	// servers its TP crosses them too.
	pp := Pool{Count: 1, TP: 2, PP: 2}
	one, two, four := NewRoofline(a100, qwen, pp), NewRoofline(a100.AcrossNodes(2), qwen, pp), NewRoofline(a100.AcrossNodes(4), qwen, pp)
	net, _ := LookupInterconnect(NodeNetwork)
	if want := one.CommStep - a100.Link().P2PUs*1e-6 + net.P2PUs*1e-6; math.Abs(two.CommStep/want-1) > 1e-9 {
		t.Errorf("TP2PP2 on two nodes: comm step %.1f µs, want %.1f (in-server TP, hand-off over the network)", 1e6*two.CommStep, 1e6*want)
	}
	if !(four.CommStepGraph > 5*two.CommStepGraph) {
		t.Errorf("TP2PP2 on four nodes: comm step %.1f µs, want far above two nodes' %.1f (TP crosses servers)", 1e6*four.CommStepGraph, 1e6*two.CommStepGraph)
	}
	// TP1 communicates nothing, wherever it runs.
	if r := NewRoofline(a100.AcrossNodes(2), qwen, Pool{Count: 1, TP: 1}); r.CommToken != 0 || r.CommStep != 0 {
		t.Errorf("TP1 across nodes: comm %+v, want none", r)
	}
}

// Every catalog model states the shape the memory rule and the roofline
// read: a zero vocabulary or MLP would size vLLM's profiling peak from
// nothing.
func TestCatalogModelsHaveShapes(t *testing.T) {
	for _, m := range LLMs() {
		if m.Vocab <= 0 || m.Intermediate <= 0 || m.Hidden <= 0 || m.Layers <= 0 {
			t.Errorf("%s: vocab %d, intermediate %d, hidden %d, layers %d; want all positive", m.Name, m.Vocab, m.Intermediate, m.Hidden, m.Layers)
		}
	}
}

// activationBytesPerToken is one token's activation traffic per GPU of a
// worker of degree tp over every kernel of a step, none of it in cache.
func activationBytesPerToken(m LLM, tp int) float64 {
	a := m.ActivationKernels(tp, GPU{})
	b := 0.0
	for i := range a.BytesPerToken {
		b += a.BytesPerToken[i] * a.Kernels[i]
	}
	return b
}

// A graph step's all-reduces follow vLLM's measured curve where the link
// has one (its one-shot kernel giving way to its two-shot one above a few
// hundred KB), rise with the batch, and fall back to latency plus bytes at
// the bus bandwidth for an eager step or a link without a curve.
func TestCommTimeFollowsMeasuredGraphCurve(t *testing.T) {
	h100, m := h100Llama70B(t)
	r := NewRoofline(h100, m, Pool{Count: 1, TP: 8})
	r.GraphMax = 512
	perAllReduce := func(tokens float64) float64 { return 1e6 * r.commTime(tokens) / (2 * float64(m.Layers)) }
	// 64 tokens of 8192 BF16 values: a 1 MiB message, which vLLM 0.24.0's
	// custom all-reduce takes 14.97 µs over 8 H100s in a graph.
	if got := perAllReduce(64); math.Abs(got/14.97-1) > 0.05 {
		t.Errorf("1 MiB all-reduce at TP8 in a graph: %.2f µs, want vLLM's measured 14.97 within 5%%", got)
	}
	if got, alphaBeta := perAllReduce(64), 1e6*(r.CommStepGraph+64*r.CommToken)/(2*float64(m.Layers)); got <= alphaBeta {
		t.Errorf("the measured curve (%.2f µs) should price a 1 MiB all-reduce above latency plus bytes at the bus bandwidth (%.2f µs)", got, alphaBeta)
	}
	for tok, prev := 1.0, 0.0; tok <= 512; tok *= 2 {
		got := r.commTime(tok)
		if got < prev {
			t.Errorf("comm time falls from %.1f to %.1f µs at %g tokens", 1e6*prev, 1e6*got, tok)
		}
		prev = got
	}
	if got, want := r.commTime(1024), r.CommStep+1024*r.CommToken; math.Abs(got-want) > 1e-12 {
		t.Errorf("an eager step (1024 tokens, beyond the graphs) costs %v, want latency plus bytes %v", got, want)
	}
	l40s, _ := LookupGPU("L40S")
	q, _ := LookupLLM("Llama-3.1-8B-Instruct")
	p := NewRoofline(l40s, q, Pool{Count: 1, TP: 2})
	p.GraphMax = 512
	if got, want := p.commTime(64), p.CommStepGraph+64*p.CommToken; math.Abs(got-want) > 1e-12 {
		t.Errorf("a link without a curve (PCIe 4.0) costs %v, want latency plus bytes %v", got, want)
	}
}

// h100Llama70B is the H100 SXM and Llama-3.1-70B-Instruct of the catalogs.
func h100Llama70B(t *testing.T) (GPU, LLM) {
	t.Helper()
	g, err := LookupGPU("H100")
	if err != nil {
		t.Fatal(err)
	}
	m, err := LookupLLM("Llama-3.1-70B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	return g, m
}
