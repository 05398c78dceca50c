package loadgen

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/capsim/capsim/model"
)

// Seeded streams: the arrival schedule and the prompts draw from separate
// sources so changing one never shifts the other.
const (
	streamSchedule = 1
	streamPrompts  = 2
)

// Schedule returns when each of n requests is due, as offsets from the start
// of the load point, the way vLLM's get_request computes them: a closed loop
// and a burst have every request due at once (a closed loop is vLLM's
// request_rate=inf with max_concurrency); an open loop draws gaps from a
// gamma distribution of shape burstiness and mean 1/rate (constant gaps for
// an infinite burstiness), sums them, and rescales the sums so the last
// request is due at exactly n/rate. The first request is due after the first
// gap, as in vLLM.
func Schedule(load model.Load, n int, seed uint64) []time.Duration {
	due := make([]time.Duration, n)
	if load.Kind != model.OpenLoop || n == 0 {
		return due
	}
	rng := rand.New(rand.NewPCG(seed, streamSchedule))
	cum := make([]float64, n)
	var t float64
	for i := range cum {
		if math.IsInf(load.Burstiness, 1) {
			t += 1 / load.Rate
		} else {
			t += Gamma(rng, load.Burstiness, 1/(load.Rate*load.Burstiness))
		}
		cum[i] = t
	}
	scale := 1.0
	if t > 0 {
		scale = float64(n) / load.Rate / t
	}
	for i, c := range cum {
		due[i] = time.Duration(c * scale * float64(time.Second))
	}
	return due
}

// Gamma draws from a gamma distribution with the given shape and scale
// (mean shape·scale) using Marsaglia and Tsang's method; shapes below one use
// the boost x·U^(1/shape) with x drawn at shape+1.
func Gamma(rng *rand.Rand, shape, scale float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return Gamma(rng, shape+1, scale) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v * scale
		}
		if u > 0 && math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v * scale
		}
	}
}
