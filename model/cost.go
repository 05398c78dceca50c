package model

import (
	"fmt"
	"math"
	"sort"
)

// Roofline holds the ideal (peak-hardware) time of each kind of work one
// worker does, in seconds. It follows from the GPU and model catalogs alone;
// Coeffs scale it to what an engine achieves.
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
	// CommToken is the tensor-parallel all-reduce traffic of one token (0 at TP1).
	CommToken float64 `json:"comm_token_s"`
	// CommStep is the latency of a step's all-reduces, two per layer (0 at TP1);
	// pipeline stages add one hand-off each.
	CommStep float64 `json:"comm_step_s"`
}

// NewRoofline derives the roofline times of one worker of shape p.
// Pipeline stages run one after another for a single step, so PP divides
// memory, not step latency.
func NewRoofline(g GPU, m LLM, p Pool) Roofline {
	tp := float64(p.TP)
	flops := g.TFLOPS * 1e12 * tp
	bw := g.MemoryTBps * 1e12 * tp
	r := Roofline{
		WeightRead: m.WeightBytes(2) / bw,
		BodyToken:  2 * m.BodyParams() / flops,
		HeadSeq:    2 * m.HeadParams() / flops,
		AttnPair:   4 * float64(m.Layers*m.Heads*m.HeadDim) / flops,
		KVRead:     m.KVBytesPerToken(p.TP, 2) / bw,
	}
	if p.TP > 1 {
		ring := 2 * (tp - 1) / tp
		r.CommToken = 2 * float64(m.Layers) * ring * float64(m.Hidden) * 2 / (g.LinkGBps * 1e9)
		r.CommStep = 2 * float64(m.Layers) * g.LinkLatencyUs * 1e-6
	}
	if s := p.Stages(); s > 1 {
		r.CommStep += float64(s-1) * g.LinkLatencyUs * 1e-6 * 4
	}
	return r
}

// Coeffs scale the roofline to an engine's achieved step times. Multipliers
// are dimensionless (1 = peak hardware, 2 = half of peak); Overhead and
// PerSeq are seconds. These are what calibration fits.
type Coeffs struct {
	Overhead       float64 `json:"overhead_s"`      // per step: scheduling, launches, sampling setup
	PerSeq         float64 `json:"per_seq_s"`       // per sequence in the step: CPU bookkeeping, sampling
	Weight         float64 `json:"weight"`          // × WeightRead
	PrefillCompute float64 `json:"prefill_compute"` // × BodyToken for prompt tokens
	DecodeCompute  float64 `json:"decode_compute"`  // × (BodyToken + HeadSeq) for decoded tokens
	Attn           float64 `json:"attn"`            // × AttnPair for prompt attention
	KV             float64 `json:"kv"`              // × KVRead for decode attention
	Comm           float64 `json:"comm"`            // × (CommToken·tokens + CommStep)
}

// PriorCoeffs are the efficiencies assumed where nothing was fitted: typical
// of vLLM on current GPUs (about 80% of memory bandwidth, 60–70% of dense
// compute for large prefills, less for small decode matmuls). Eager mode (no
// CUDA graphs) raises the per-step overhead.
func PriorCoeffs(eager bool) Coeffs {
	c := Coeffs{
		Overhead:       0.004,
		PerSeq:         30e-6,
		Weight:         1.25,
		PrefillCompute: 1.5,
		DecodeCompute:  2.0,
		Attn:           2.0,
		KV:             1.4,
		Comm:           1.5,
	}
	if eager {
		c.Overhead = 0.012
	}
	return c
}

// Terms returns the roofline work of a step, each multiplied by its
// coefficient in StepTime: the design row of a linear least-squares fit.
func (r Roofline) Terms(s Step, decodeSeqs float64) Coeffs {
	tokens := float64(s.PrefillTokens) + decodeSeqs
	return Coeffs{
		Overhead:       1,
		PerSeq:         float64(s.PrefillSeqs) + decodeSeqs,
		Weight:         r.WeightRead,
		PrefillCompute: r.BodyToken * float64(s.PrefillTokens),
		DecodeCompute:  (r.BodyToken + r.HeadSeq) * decodeSeqs,
		Attn:           r.AttnPair * s.PrefillAttn,
		KV:             r.KVRead * s.DecodeKV,
		Comm:           r.CommToken*tokens + r.CommStep,
	}
}

// Dot is Σ aᵢ·bᵢ over the coefficient fields.
func (c Coeffs) Dot(t Coeffs) float64 {
	return c.Overhead*t.Overhead + c.PerSeq*t.PerSeq + c.Weight*t.Weight +
		c.PrefillCompute*t.PrefillCompute + c.DecodeCompute*t.DecodeCompute +
		c.Attn*t.Attn + c.KV*t.KV + c.Comm*t.Comm
}

// Vector returns the coefficients in a fixed order (CoeffNames).
func (c Coeffs) Vector() []float64 {
	return []float64{c.Overhead, c.PerSeq, c.Weight, c.PrefillCompute, c.DecodeCompute, c.Attn, c.KV, c.Comm}
}

// CoeffsFromVector is the inverse of Vector.
func CoeffsFromVector(v []float64) Coeffs {
	return Coeffs{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
}

// CoeffNames names the entries of Coeffs.Vector.
var CoeffNames = []string{"overhead_s", "per_seq_s", "weight", "prefill_compute", "decode_compute", "attn", "kv", "comm"}

// StepCost prices the steps of one worker: StepTime = Coeffs · Roofline
// terms. It satisfies sim.CostModel. A decode batch is padded up to the
// next CUDA-graph capture size for its compute, as vLLM does.
type StepCost struct {
	Roofline Roofline `json:"roofline"`
	Coeffs   Coeffs   `json:"coeffs"`
	// GraphSizes are the CUDA-graph capture batch sizes, ascending; empty means eager (no padding).
	GraphSizes []int `json:"graph_sizes,omitempty"`
}

// NewStepCost builds a worker's cost from the catalogs and coefficients.
func NewStepCost(g GPU, m LLM, p Pool, c Coeffs, graphSizes []int) StepCost {
	return StepCost{Roofline: NewRoofline(g, m, p), Coeffs: c, GraphSizes: graphSizes}
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

// StepTime returns the duration of a step in seconds.
func (c StepCost) StepTime(s Step) float64 {
	n := s.DecodeSeqs
	if s.PrefillTokens == 0 {
		n = c.PaddedBatch(n)
	}
	return c.Coeffs.Dot(c.Roofline.Terms(s, float64(n)))
}

// DecodeAffine returns base and perKV with StepTime(pure decode of n, KV k) = base + perKV·k.
func (c StepCost) DecodeAffine(n int) (base, perKV float64) {
	base = c.StepTime(Step{DecodeSeqs: n})
	return base, c.Coeffs.KV * c.Roofline.KVRead
}

// Validate reports coefficients that would give negative or undefined times.
func (c Coeffs) Validate() error {
	for i, v := range c.Vector() {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("model: cost coefficient %s is %v; want a finite non-negative number", CoeffNames[i], v)
		}
	}
	return nil
}
