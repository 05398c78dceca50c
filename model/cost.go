package model

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/capsim/capsim/engine"
)

// Roofline holds the ideal (peak-hardware) time of each kind of work one
// worker does, in seconds. It follows from the GPU, interconnect and model
// catalogs alone; Coeffs turn it into what an engine achieves.
type Roofline struct {
	// WeightRead is streaming the worker's weights once per step from memory.
	WeightRead float64 `json:"weight_read_s"`
	// BodyToken is the dense matmul work of one token through the transformer body.
	BodyToken float64 `json:"body_token_s"`
	// HeadSeq is the LM-head matmul of one sampled token.
	HeadSeq float64 `json:"head_seq_s"`
	// AttnPair is the attention work (QKᵀ and AV) of one query–key token pair.
	AttnPair float64 `json:"attn_pair_s"`
	// KVRead is reading one token's KV cache during decode.
	KVRead float64 `json:"kv_read_s"`
	// CommToken is the tensor-parallel all-reduce traffic of one token at
	// the link's bus bandwidth at the worker's TP (Interconnect.AllReduceBps),
	// plus the pipeline hand-off of its activations at the point-to-point
	// bandwidth (Interconnect.AchievableBps); 0 at TP1PP1.
	CommToken float64 `json:"comm_token_s"`
	// CommStep is the latency of a step's all-reduces, two per layer (0 at
	// TP1), each at the interconnect's eager all-reduce latency, plus one
	// point-to-point hand-off per pipeline stage boundary; CommStepGraph is
	// the same with the all-reduces captured in a CUDA graph
	// (Interconnect.AllReduceUs). GraphMax is the largest step, in tokens,
	// the worker runs in a CUDA graph (0: an eager worker; NewStepCost sets
	// it): a step of at most that many tokens pays CommStepGraph.
	CommStep      float64 `json:"comm_step_s"`
	CommStepGraph float64 `json:"comm_step_graph_s"`
	GraphMax      int     `json:"graph_max,omitempty"`
	// growth is a graph step's all-reduces' measured growth over
	// CommStepGraph with the tokens (Interconnect.GraphGrowthUs), which
	// then prices them in place of their bytes at the bus bandwidth; none
	// where the link has no curve or the roofline was built otherwise
	// (JSON). A value, so that rooflines compare and print by it.
	growth allReduceGrowth
	// A mixture-of-experts model's routed experts, apart from WeightRead
	// and BodyToken (which then cover the rest): ExpertRead is streaming
	// every expert's weights once, ExpertToken the GEMM work of one token
	// through every expert, and ExpertMiss the chance that a token is not
	// routed to a given expert (1 − k/E). A step over T tokens reads the
	// experts it touches, 1 − ExpertMiss^T of them, and computes k/E of
	// ExpertToken per token; each touched expert is a GEMM of its own and
	// pays the small-batch penalty.
	ExpertRead  float64 `json:"expert_read_s,omitempty"`
	ExpertToken float64 `json:"expert_token_s,omitempty"`
	ExpertMiss  float64 `json:"expert_miss,omitempty"`
	// Under expert parallelism (LLM.ExpertParallelAt) the experts are
	// dealt whole to ExpertGroups groups of ranks, ExpertsPerGroup each,
	// and a step lasts as long as its busiest group: the one whose tokens
	// touch the most of its experts (ExpertShare) and route it the most
	// tokens (expertLoad). Routing is taken as uniform, a lower bound:
	// real routers favour some experts. At batch 1 a rank of 8 holding 16
	// of Qwen3-235B's 128 experts reads 2.5 experts where split by TP it
	// reads one; at 512 tokens the busiest group routes 6% more than the
	// mean (vllm-project/vllm#50647 measured 6.9% over 16 ranks, Kimi K3).
	// 0 groups: experts split by TP. What the shape needs beyond these two
	// numbers is computed once per shape (expertTableOf); table points to
	// it (NewRoofline) so that a step need not look it up, and is nil in a
	// roofline built otherwise (JSON), which looks it up. Rooflines of one
	// shape share the pointer and still compare equal.
	ExpertGroups    int `json:"expert_groups,omitempty"`
	ExpertsPerGroup int `json:"experts_per_group,omitempty"`
	table           *expertTable
	// Act is the activation traffic through the kernels between the
	// GEMMs (LLM.ActivationKernels): norms and residual adds, rotary
	// embeddings, the FFN's activation function, and a mixture of
	// experts' per-expert outputs and their sum. Those kernels run
	// between the GEMMs, not under them, so their time adds to the GEMMs'
	// roofline; they stream at the weight reads' efficiency.
	Act ActivationTraffic `json:"activations"`
	// KernelFloor is the time a step's kernels take beyond their roofline
	// however little they move: each tensor-core kernel's ramp and tail and
	// each small kernel's latency (LLM.KernelsPerStep, KernelLatency). It
	// does not shrink with TP, which is why a wide TP runs far above its
	// weight-read roofline. Measured, not fitted.
	KernelFloor float64 `json:"kernel_floor_s"`
}

// touched is the share of experts a step over tokens tokens routes to.
func (r *Roofline) touched(tokens float64) float64 {
	if tokens <= 0 {
		return 0
	}
	return 1 - math.Pow(r.ExpertMiss, tokens)
}

// ExpertShare is the share of its experts the busiest GPU of the worker
// reads in a step over tokens tokens: those its tokens touch, or under
// expert parallelism the busiest group's (ExpertGroups), at most all of
// them: exact for uniform routing given how many experts are touched
// (busiestGroup), taken at their mean count. 0 for a dense model.
func (r *Roofline) ExpertShare(tokens float64) float64 {
	if r.ExpertRead == 0 {
		return 0
	}
	return r.expertShare(tokens, r.expertTable())
}

// expertTable is the shape's table under expert parallelism; nil without.
func (r *Roofline) expertTable() *expertTable {
	switch {
	case r.table != nil:
		return r.table
	case r.ExpertGroups < 2 || r.ExpertsPerGroup < 1:
		return nil
	}
	return expertTableOf(r.ExpertsPerGroup, r.ExpertGroups)
}

// expertShare is ExpertShare with the shape's table (nil: no expert
// parallelism).
func (r *Roofline) expertShare(tokens float64, tab *expertTable) float64 {
	q := r.touched(tokens)
	if tab == nil || q <= 0 || q >= 1 {
		return q
	}
	n := float64(r.ExpertsPerGroup)
	if tab.maxTouched == nil {
		// Too many experts for the exact table: the binomial's mean plus
		// maxZ standard deviations.
		return math.Min(1, q+tab.maxZ*math.Sqrt(q*(1-q)/n))
	}
	// The touched experts, E·q on average, interpolated between whole counts.
	t := tab.maxTouched
	k := q * float64(len(t)-1)
	i := min(int(k), len(t)-2)
	return (t[i] + (k-float64(i))*(t[i+1]-t[i])) / n
}

// expertLoad is the busiest expert-parallel group's routed token–expert
// pairs over the mean group's in a step over tokens tokens (1 without
// expert parallelism, tab nil). A token's k experts are distinct, so a
// group's count is a sum of hypergeometric draws, variance
// P/g·(1−1/g)·(E−k)/(E−1) over P pairs; the g counts sum to P
// (correlation −1/(g−1)), which widens their largest's excess over the
// mean, maxZ standard deviations, by √(g/(g−1)). A group takes at most
// min(k, n) of a token's k pairs.
func (r *Roofline) expertLoad(tokens float64, tab *expertTable) float64 {
	if tab == nil || tokens <= 0 {
		return 1
	}
	g, n := float64(r.ExpertGroups), float64(r.ExpertsPerGroup)
	e := g * n
	k := e * (1 - r.ExpertMiss)
	pairs := tokens * k
	excess := tab.maxZ * math.Sqrt(g/pairs*(e-k)/(e-1))
	return math.Min(g*math.Min(k, n)/k, 1+excess)
}

// expertTable is what expert parallelism over g groups of n experts
// needs beyond the roofline's fields: the busiest group's touched experts
// against how many are touched (busiestGroup; nil where the counts
// overflow) and the expected largest of g standard normals.
type expertTable struct {
	maxTouched []float64
	maxZ       float64
}

// expertTables caches expertTableOf's tables by [n, g].
var expertTables sync.Map

// expertTableOf is the shape's expertTable, computed once.
func expertTableOf(n, g int) *expertTable {
	key := [2]int{n, g}
	if t, ok := expertTables.Load(key); ok {
		return t.(*expertTable)
	}
	t, _ := expertTables.LoadOrStore(key, &expertTable{maxTouched: busiestGroup(n, g), maxZ: expectedMaxNormal(g)})
	return t.(*expertTable)
}

// busiestGroup is, for K = 0 … n·g, the expected largest number of
// touched experts in any of g groups of n when K experts, a uniformly
// random K-subset (as uniform routing touches them), are touched: exact,
// from the number of K-subsets with at most x in every group, the z^K
// coefficient of (Σ_{j≤x} C(n, j)·z^j)^g. nil beyond 512 experts, where
// the binomial coefficients near C(1024, 512) leave float64's range.
func busiestGroup(n, g int) []float64 {
	total := n * g
	if total > 512 {
		return nil
	}
	choose := func(a, b int) float64 { // C(a, b) in floating point (C(512, 256) ≈ 4.7e152)
		c := 1.0
		for i := range b {
			c = c * float64(a-i) / float64(i+1)
		}
		return c
	}
	all := make([]float64, total+1)
	for k := range all {
		all[k] = choose(total, k)
	}
	want := make([]float64, total+1) // Σ over x of P(max > x | K)
	for x := 0; x < n; x++ {
		one := make([]float64, x+1)
		for j := range one {
			one[j] = choose(n, j)
		}
		pow := []float64{1}
		for range g {
			next := make([]float64, len(pow)+x)
			for a, pa := range pow {
				for b, ob := range one {
					next[a+b] += pa * ob
				}
			}
			pow = next
		}
		for k := range want {
			within := 0.0
			if k < len(pow) {
				within = pow[k] / all[k]
			}
			want[k] += 1 - within
		}
	}
	return want
}

// stepExperts is a step's share of the experts the busiest rank reads
// (ExpertShare) and its busiest group's routed load (expertLoad) over
// tokens tokens, computed once for the step's weight reads and GEMMs; 0
// and 1 for a dense model.
func (r *Roofline) stepExperts(tokens float64) (share, load float64) {
	if r.ExpertRead == 0 {
		return 0, 1
	}
	tab := r.expertTable()
	return r.expertShare(tokens, tab), r.expertLoad(tokens, tab)
}

// weightReadAt is the peak-bandwidth time of a step's weight reads: every
// shared weight, and share of the experts (stepExperts).
func (r *Roofline) weightReadAt(share float64) float64 {
	return r.WeightRead + r.ExpertRead*share
}

// expectedMaxNormal is the expected largest of n independent standard
// normals, ∫ x·n·φ(x)·Φ(x)^(n−1) dx (0.564 for 2, 1.029 for 4, 1.424
// for 8, 1.766 for 16), by Simpson's rule over ±8.
func expectedMaxNormal(n int) float64 {
	if n < 2 {
		return 0
	}
	const lo, h, steps = -8.0, 0.01, 1600
	f := func(x float64) float64 {
		pdf := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
		cdf := 0.5 * math.Erfc(-x/math.Sqrt2)
		return x * float64(n) * pdf * math.Pow(cdf, float64(n-1))
	}
	sum := f(lo) + f(lo+steps*h)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(lo+float64(i)*h)
	}
	return sum * h / 3
}

// GEMMHalfTokens is the small-batch size dependence of matmul efficiency:
// a GEMM over T tokens achieves η_c·T/(T+GEMMHalfTokens) of peak FLOP/s, so
// its compute time is that of T+GEMMHalfTokens tokens at η_c. Tensor-core
// tiles are 16 rows at their smallest (mma m16n8k16; Hopper's wgmma is
// 64), and cuBLAS/CUTLASS reach their large-size efficiency only when the
// token dimension fills several tiles (the CUTLASS H100 figures in the
// catalog: ~58% of peak at 1024³ against ~75% at 8192³). With 16 a decode
// GEMM at batch 16 runs at half its large-batch efficiency, at 128 at 89%.
// It is an assumption, not a fit: the data cannot separate it from η_c.
const GEMMHalfTokens = 16

// GEMMKernelUs and SmallKernelUs are what one kernel replayed in a CUDA
// graph takes beyond its bytes and FLOPs at the achieved rates, measured
// on an H200 (docs/measurements: gpu_kernels.py, gpu_fused_layer.py and
// their recorded runs; torch 2.11, CUDA 13.0). Decode-shaped BF16 linears
// (48 shapes, 4 MB to 0.9 GB of weights) fit t = t₀ + bytes / 4.2 TB/s,
// t₀ 4.7–5.0 µs at M ≤ 32 and 3.9–4.4 at 64–128: 4.5 is their middle,
// since decode batches span both. A Qwen3-32B decode layer with its norms,
// adds, rotary and SiLU-and-mul fused into five kernels spends 11.5–13.7
// µs in them at TP1 to TP8, 2.5 µs a kernel (a lone tiny one: 1.1). Attention
// counts as a GEMM-class kernel plus a small one. Other GPUs are assumed
// alike: no other GPU was measured.
const (
	GEMMKernelUs  = 4.5
	SmallKernelUs = 2.5
)

// LatentRopeDim is the part of a latent attention cache entry that carries
// the rotary key (DeepSeek-V3's qk_rope_head_dim): it is scored, not mixed
// into the values.
const LatentRopeDim = 64

// NewRoofline derives the roofline times of one worker of shape p. A
// pipeline-parallel worker's stages each hold 1/PP of the layers, so one
// step through all of them streams the weights once over TP GPUs' memory:
// its latency is that of TP alone plus the hand-offs. The throughput gain
// of PP comes from microbatches in flight (see Pool.Microbatches).
func NewRoofline(g GPU, m LLM, p Pool) Roofline {
	tp := float64(p.TP)
	flops := g.GEMMTFLOPS(m.Quant) * 1e12 * tp
	bw := g.MemoryTBps * 1e12 * tp
	r := Roofline{
		WeightRead: (m.sharedWeightBytes() + m.ReplicatedAttentionBytes(p.TP)) / bw,
		BodyToken:  2 * (m.BodyParams() - m.ExpertParams()) / flops,
		HeadSeq:    2 * m.HeadParams() / (g.TFLOPS * 1e12 * tp),
		AttnPair:   4 * float64(m.attentionLayers()*m.Heads*m.HeadDim) / (g.TFLOPS * 1e12 * tp),
		KVRead:     m.KVBytesPerToken(p.TP, m.KVElemBytes()) / bw,
		Act:        m.ActivationKernels(p.TP, g),
	}
	r.KernelFloor = m.KernelFloor()
	if m.LatentKV > 0 {
		// Latent attention decodes "absorbed": every head scores the whole
		// latent vector of each cached token (LatentKV multiply-adds) and
		// mixes its compressed part (LatentKV − LatentRopeDim), so a KV
		// token costs 2·heads·(2·LatentKV − 64) FLOPs a layer against its
		// 2·576 bytes: compute-bound on a GPU of few FLOPs per byte (H20)
		// at low TP, where heads per GPU are many.
		flop := 2 * float64(m.attentionLayers()*m.Heads*(2*m.LatentKV-LatentRopeDim)) / (g.TFLOPS * 1e12 * tp)
		r.KVRead = math.Max(r.KVRead, flop)
	}
	if m.IsMoE() {
		r.ExpertRead = m.expertWeightBytes() / bw
		r.ExpertToken = 2 * m.ExpertParams() / flops
		r.ExpertMiss = 1 - float64(m.ActiveExperts)/float64(m.Experts)
		if ep := m.ExpertParallelAt(p.TP); ep > 1 {
			r.ExpertGroups, r.ExpertsPerGroup = ep, m.Experts/ep
			r.table = expertTableOf(r.ExpertsPerGroup, ep)
		}
	}
	ic := g.TPLink(p.Stages())
	if p.TP > 1 {
		ring := 2 * (tp - 1) / tp
		r.CommToken = 2 * float64(m.Layers) * ring * float64(m.Hidden) * 2 / ic.AllReduceBps(p.TP)
		r.CommStep = 2 * float64(m.Layers) * ic.AllReduceUs(p.TP, false) * 1e-6
		r.CommStepGraph = 2 * float64(m.Layers) * ic.AllReduceUs(p.TP, true) * 1e-6
		r.growth = allReduceGrowthOf(ic, p.TP, m.Layers, m.Hidden, r.CommToken)
	}
	if s := p.Stages(); s > 1 {
		hop := g.HandoffLink()
		r.CommToken += float64(s-1) * float64(m.Hidden) * 2 / hop.AchievableBps()
		r.CommStep += float64(s-1) * hop.P2PUs * 1e-6
		r.CommStepGraph += float64(s-1) * hop.P2PUs * 1e-6
	}
	return r
}

// Coeffs turn the roofline into an engine's achieved step times. The
// dimensionless ones are inverse efficiencies: 1 is peak hardware, 2 is
// half of peak, and a physical value is never below 1. Overhead and PerSeq
// are seconds of CPU work (scheduling, launches, sampling, bookkeeping) and
// belong to the engine version. These are what calibration fits.
type Coeffs struct {
	Overhead float64 `json:"overhead_s"` // per step: scheduling, launches, sampling setup
	PerSeq   float64 `json:"per_seq_s"`  // per sequence in the step: CPU bookkeeping, sampling
	Weight   float64 `json:"weight"`     // 1/η_mem: × WeightRead (the memory side of every GEMM) and × the activation traffic between them
	Compute  float64 `json:"compute"`    // 1/η_c: × GEMM FLOP time (the compute side), for prompt and decoded tokens alike
	Attn     float64 `json:"attn"`       // 1/η_attn: × AttnPair for prompt attention (FLOPs)
	KV       float64 `json:"kv"`         // 1/η_kv: × KVRead for decode attention (bytes)
	Comm     float64 `json:"comm"`       // × (CommToken·tokens + CommStep or CommStepGraph): all-reduce and hand-off time relative to the interconnect catalog's figures
}

// Achievable fractions of peak assumed before fitting. Each is from a
// public measurement (see the Source of the GPU and interconnect catalogs):
//   - weights stream at 85% of HBM bandwidth (a CUDA-event-timed D2D copy
//     reaches 3.02–3.09 of 3.35 TB/s on H100-SXM; Nsight Compute of a 70B
//     decode shows MLP weight loads at 78%);
//   - large GEMMs reach 70% of dense BF16 peak (cuBLAS 68–72% on B200 at
//     4096³–8192³; CUTLASS 70–75% on H100);
//   - prompt attention reaches 50% of peak FLOPs (FlashAttention-2/3 forward
//     with causal masking and variable lengths);
//   - decode attention reads paged KV at 60% of HBM bandwidth (the same
//     Nsight profile: 42–57% for KV reads).
const (
	PriorWeight  = 1 / 0.85
	PriorCompute = 1 / 0.70
	PriorAttn    = 1 / 0.50
	PriorKV      = 1 / 0.60
)

// DecodeStreamSource cites how fast a dense model's decode streams its
// weights and KV cache: decode-shaped BF16 linears up to 128 rows take
// t₀ + bytes / 4.2 TB/s on an H200, 87.5% of spec against its 86% catalog
// share (docs/measurements, GEMMKernelUs); and vLLM 0.19.1 on one H100
// with FlashAttention-3 (vLLM blog "The State of FP8 KV-Cache and
// Attention Quantization in vLLM", 2026-04-22) fits Llama-3.1-8B's c=1 ITL
// to 6.44 ms + 4.37e-5 ms a context token with a BF16 cache: 128 KiB a
// token at 3.0 TB/s, 90% of spec, the H100's measured share (89%).
// PriorWeight and PriorKV, older profiles', are still where a fit starts.
const DecodeStreamSource = "decode GEMMs on an H200 at 87.5% of spec, docs/measurements; KV on an H100 at 90%, vLLM blog 2026-04-22"

// PriorCoeffs are the costs assumed where nothing was fitted: the achievable
// fractions above and a generic engine's CPU overheads (engine.OverheadFor
// prices a named engine version). Eager mode (no CUDA graphs) pays kernel
// launches every step.
func PriorCoeffs(eager bool) Coeffs {
	return PriorCoeffsFor(engine.OverheadFor(""), eager)
}

// PriorCoeffsFor are the prior costs of an engine version.
func PriorCoeffsFor(o engine.Overhead, eager bool) Coeffs {
	c := Coeffs{
		Overhead: o.StepS,
		PerSeq:   o.PerSeqS,
		Weight:   PriorWeight,
		Compute:  PriorCompute,
		Attn:     PriorAttn,
		KV:       PriorKV,
		Comm:     1,
	}
	if eager {
		c.Overhead = o.EagerStepS
	}
	return c
}

// Terms returns the roofline work of a step, each to be multiplied by its
// coefficient: the design row of a linear least-squares fit. A step's GEMMs
// take the smooth roofline of their compute and memory time (RooflineP);
// its split between the two terms is taken at the coefficients at, so the
// row is exact there and a linearisation near them.
func (r *Roofline) Terms(s Step, decodeSeqs float64, at Coeffs) Coeffs {
	tokens := float64(s.PrefillTokens) + decodeSeqs
	t := Coeffs{
		Overhead: 1,
		PerSeq:   float64(s.PrefillSeqs) + decodeSeqs,
		Attn:     r.AttnPair * s.PrefillAttn,
		KV:       r.KVRead * s.DecodeKV,
		Comm:     r.commTime(tokens),
	}
	share, load := r.stepExperts(tokens)
	t.Compute, t.Weight = gemmShares(r.gemmFLOPTimeAt(tokens, decodeSeqs, share, load), r.weightReadAt(share), at.Compute, at.Weight)
	t.Weight += r.Act.Time(tokens)
	return t
}

// commLatency is the all-reduce and hand-off latency of a step of tokens
// tokens: in a CUDA graph when the worker captures steps that large.
func (r *Roofline) commLatency(tokens float64) float64 {
	if tokens > 0 && tokens <= float64(r.GraphMax) {
		return r.CommStepGraph
	}
	return r.CommStep
}

// commTime is a step's all-reduce and hand-off time over tokens tokens: a
// graph step's all-reduces along the link's measured curve where it has
// one, else (and eager) their latency plus their bytes at the bus
// bandwidth.
func (r *Roofline) commTime(tokens float64) float64 {
	if g := &r.growth; g.n > 0 && tokens > 0 && tokens <= float64(r.GraphMax) {
		return r.CommStepGraph + g.at(tokens) + (r.CommToken-g.perTok)*tokens
	}
	return r.CommToken*tokens + r.commLatency(tokens)
}

// allReduceGrowth is a link's measured growth of a graph-captured
// all-reduce over its small-message latency, for one model's step at one
// TP: tok[i] tokens cost sec[i] seconds more (all the step's all-reduces)
// than CommStepGraph, linearly between the n points; below the first
// nothing more, beyond the last perTok a token (its bytes at the bus
// bandwidth, the all-reduce part of CommToken).
type allReduceGrowth struct {
	n        int
	tok, sec [MaxGraphGrowthPoints]float64
	perTok   float64
}

// MaxGraphGrowthPoints bounds Interconnect.GraphGrowthBytes: a roofline
// holds the curve by value.
const MaxGraphGrowthPoints = 8

func (g *allReduceGrowth) at(tokens float64) float64 {
	n := g.n
	switch {
	case tokens <= g.tok[0]:
		return g.sec[0]
	case tokens >= g.tok[n-1]:
		return g.sec[n-1] + (tokens-g.tok[n-1])*g.perTok
	}
	i := 1
	for tokens > g.tok[i] {
		i++
	}
	f := (tokens - g.tok[i-1]) / (g.tok[i] - g.tok[i-1])
	return g.sec[i-1] + f*(g.sec[i]-g.sec[i-1])
}

// allReduceGrowthOf is ic's measured graph growth as a step of a model
// with layers layers of hidden width at tp prices it (two all-reduces a
// layer of hidden × 2 bytes a token); none where ic has no curve.
func allReduceGrowthOf(ic Interconnect, tp, layers, hidden int, perTok float64) allReduceGrowth {
	g := allReduceGrowth{n: min(len(ic.GraphGrowthBytes), MaxGraphGrowthPoints), perTok: perTok}
	us := ic.GraphGrowthUs
	for i := range g.n {
		g.tok[i] = ic.GraphGrowthBytes[i] / (float64(hidden) * 2)
		g.sec[i] = 2 * float64(layers) * atTP([3]float64{us[0][i], us[1][i], us[2][i]}, tp) * 1e-6 // read as AllReduceUs reads its figures
	}
	return g
}

// RooflineP is the exponent of the smooth roofline that prices a step's
// GEMMs: with c their compute time and m their memory time (each at its
// fitted efficiency), they take (cᵖ + mᵖ)^(1/p). That is max(c, m) far
// from the ridge point and 2^(1/p) = 1.59 times it where c = m: a GEMM
// near its ridge neither keeps the tensor cores busy nor streams at full
// bandwidth. p = 1.5 is measured, not fitted to capsim's corpus: Vidur's
// public profiling of cuBLAS FP16 linears swept over M = 1…4096 tokens
// (microsoft/vidur, data/profiling/compute/{h100,a100}/*/mlp.csv, 2024-05;
// Llama-2 7B/70B, CodeLlama-34B, Qwen-72B shapes at TP1–8; 13,209 timings
// per GPU) fits best at p = 1.5 on both H100-SXM and A100, lower envelope
// over M (RMS log error 0.111 and 0.085; p = 2 0.118 and 0.090, the max
// 0.159 and 0.126, p = 1 only with memory at 96–98% of spec):
// docs/measurements/vidur_gemm_roofline.py. On capsim's corpus it also
// moved the held-out medians the right way (docs/accuracy.md,
// fifth pass).
const RooflineP = 1.5

// gemmShares splits the smooth roofline of a step's GEMMs into its design
// row: the compute time c = kc·compute and memory time m = km·weight give
// t = (cᵖ + mᵖ)^(1/p), homogeneous of degree 1 in (kc, km), so t =
// kc·compute·(c/t)^(p−1) + km·weight·(m/t)^(p−1) (Euler's theorem). The
// row's entries are the two terms without their coefficients: exact at
// kc, km and a linearisation near them.
func gemmShares(compute, weight, kc, km float64) (computeTerm, weightTerm float64) {
	c, m := kc*compute, km*weight
	switch {
	case c <= 0 && m <= 0:
		return 0, 0
	case m <= 0:
		return compute, 0
	case c <= 0:
		return 0, weight
	}
	if RooflineP == 1.5 {
		// cᵖ = c·√c, t = ∛((cᵖ + mᵖ)²), (c/t)^(p−1) = √(c/t): square and
		// cube roots instead of math.Pow, which took 12% of a plan search.
		s := c*math.Sqrt(c) + m*math.Sqrt(m)
		t := math.Cbrt(s * s)
		return compute * math.Sqrt(c/t), weight * math.Sqrt(m/t)
	}
	t := math.Pow(math.Pow(c, RooflineP)+math.Pow(m, RooflineP), 1/RooflineP)
	return compute * math.Pow(c/t, RooflineP-1), weight * math.Pow(m/t, RooflineP-1)
}

// gemmFLOPTimeAt is the peak-FLOP time of a step's GEMMs over tokens
// tokens (sampled sequences also pass the LM head), with the small-batch
// penalty; a mixture of experts' at its expert share and load
// (stepExperts).
func (r *Roofline) gemmFLOPTimeAt(tokens, sampled, share, load float64) float64 {
	if tokens <= 0 {
		return 0
	}
	t := r.BodyToken*(tokens+GEMMHalfTokens) + r.HeadSeq*sampled
	if r.ExpertToken > 0 {
		t += r.ExpertToken * (tokens*(1-r.ExpertMiss)*load + GEMMHalfTokens*share)
	}
	return t
}

// Dot is Σ aᵢ·bᵢ over the coefficient fields.
func (c Coeffs) Dot(t Coeffs) float64 {
	return c.Overhead*t.Overhead + c.PerSeq*t.PerSeq + c.Weight*t.Weight +
		c.Compute*t.Compute + c.Attn*t.Attn + c.KV*t.KV + c.Comm*t.Comm
}

// Vector returns the coefficients in a fixed order (CoeffNames).
func (c Coeffs) Vector() []float64 {
	return []float64{c.Overhead, c.PerSeq, c.Weight, c.Compute, c.Attn, c.KV, c.Comm}
}

// CoeffsFromVector is the inverse of Vector.
func CoeffsFromVector(v []float64) Coeffs {
	return Coeffs{v[0], v[1], v[2], v[3], v[4], v[5], v[6]}
}

// CoeffNames names the entries of Coeffs.Vector.
var CoeffNames = []string{"overhead_s", "per_seq_s", "weight", "compute", "attn", "kv", "comm"}

// IsEfficiency reports whether the i-th entry of Coeffs.Vector is an
// inverse efficiency, physically at least 1.
func IsEfficiency(i int) bool { return i >= 2 && i <= 5 }

// StepCost prices the steps of one worker. It satisfies sim.CostModel. A
// decode batch is padded up to the next CUDA-graph capture size for its
// compute, as vLLM does.
type StepCost struct {
	Roofline Roofline `json:"roofline"`
	Coeffs   Coeffs   `json:"coeffs"`
	// GraphSizes are the CUDA-graph capture batch sizes, ascending; empty means eager (no padding).
	GraphSizes []int `json:"graph_sizes,omitempty"`
}

// NewStepCost builds a worker's cost from the catalogs and coefficients.
// A worker with CUDA graphs (graphSizes, ascending) runs steps up to its
// largest capture size in them, all-reduces included.
func NewStepCost(g GPU, m LLM, p Pool, c Coeffs, graphSizes []int) StepCost {
	r := NewRoofline(g, m, p)
	if n := len(graphSizes); n > 0 {
		r.GraphMax = graphSizes[n-1]
	}
	return StepCost{Roofline: r, Coeffs: c, GraphSizes: graphSizes}
}

// PaddedBatch is the batch size a decode step of n sequences computes:
// the next capture size, or n itself beyond the largest (or in eager mode).
func (c StepCost) PaddedBatch(n int) int {
	if n <= 0 || len(c.GraphSizes) == 0 {
		return n
	}
	i := sort.SearchInts(c.GraphSizes, n)
	if i == len(c.GraphSizes) {
		return n
	}
	return c.GraphSizes[i]
}

// StepTime returns the duration of a step in seconds:
//
//	overhead + perSeq·seqs + ‖compute·GEMM FLOP time, weight·weight read‖ₚ
//	+ weight·activation traffic + attn·prompt attention + kv·KV read
//	+ comm·(all-reduce bytes + latency, in a CUDA graph or eager)
//	+ the kernel floor (KernelFloor).
func (c StepCost) StepTime(s Step) float64 {
	n := s.DecodeSeqs
	if s.PrefillTokens == 0 {
		n = c.PaddedBatch(n)
	}
	return c.Coeffs.Dot(c.Roofline.Terms(s, float64(n), c.Coeffs)) + c.KernelFloor()
}

// KernelFloor is the kernel latency every step pays on a worker that runs
// CUDA graphs. An eager worker's per-kernel cost is its CPU launches,
// which the engine's eager overhead prices (engine.Overhead.EagerStepS).
func (c StepCost) KernelFloor() float64 {
	if c.Roofline.GraphMax == 0 {
		return 0
	}
	return c.Roofline.KernelFloor
}

// DecodeAffine returns base and perKV with StepTime(pure decode of n, KV k) =
// base + perKV·k: the KV read is the only term that grows with context.
func (c StepCost) DecodeAffine(n int) (base, perKV float64) {
	base = c.StepTime(Step{DecodeSeqs: n})
	return base, c.Coeffs.KV * c.Roofline.KVRead
}

// Validate reports coefficients that would give negative or undefined
// times, or efficiencies above the hardware's peak.
func (c Coeffs) Validate() error {
	for i, v := range c.Vector() {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("model: cost coefficient %s is %v; want a finite non-negative number", CoeffNames[i], v)
		}
		if IsEfficiency(i) && v < 1-1e-6 {
			return fmt.Errorf("model: cost coefficient %s is %v: faster than the hardware's peak; want at least 1", CoeffNames[i], v)
		}
	}
	return nil
}

// Microbatches is how many batches a worker of this shape keeps in flight:
// its pipeline depth. vLLM runs PP microbatches at once (V0: one virtual
// engine and scheduler per stage, vllm/engine/llm_engine.py; V1: a batch
// queue of PP scheduled batches, vllm/v1/engine/core.py), so while one
// batch is in stage 2 the next runs in stage 1. A worker of PP stages is
// therefore simulated as PP virtual workers, each with a step latency of
// the whole pipeline (NewRoofline) and 1/PP of its KV cache and sequences:
// one request sees no speed-up, a loaded worker up to PP× the throughput.
func (p Pool) Microbatches() int { return p.Stages() }
