package workload

import (
	"fmt"
	"math"
	"strconv"

	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// Workload is one benchmark run as a client sends it and a simulation
// repeats it: the load, the request lengths and how they spread, how the
// prompts share prefixes, and how many requests, dealt from Seed.
type Workload struct {
	Load model.Load
	ISL  int // mean prompt tokens (every prompt's, without a Dataset)
	OSL  int // mean output tokens; spread as BenchmarkOutput (every one exactly OSL with ExactOutput)
	// OSLMax is the output cap (max_tokens) of outputs that stop early
	// (a realised mean well under the cap): they end at an end-of-sequence
	// token, anywhere up to the cap. 0 when they run to about OSL.
	OSLMax int
	// ExactOutput: every output runs to exactly OSL tokens, not spread (a
	// benchmark sending ignore_eos; a record that measured them so).
	ExactOutput bool
	NumPrompts  int
	Seed        uint64
	// PrefixHitRate is the share of every prompt the engine's prefix cache
	// serves (sim.Config.PrefixHitRate); 0 prefills it all.
	PrefixHitRate float64
	// Dataset names the dataset whose lengths the requests draw, scaled to
	// ISL and OSL (package datasets: "sharegpt"); "" sends every prompt at
	// ISL and spreads outputs as BenchmarkOutput.
	Dataset string
	// Sharing is how the prompts share prefixes, which the replicas'
	// prefix cache serves (sim.Config.Sharing; a PrefixHitRate above 0
	// overrides it).
	Sharing model.Sharing
	// Notes say what was estimated or assumed in reading the workload
	// from a measured record (series.Workloads).
	Notes []string
}

// Lengths are the prompt and output length distributions of w.
func (w Workload) Lengths() (in, out sim.LengthDist) {
	if ds, ok := datasets.Lookup(w.Dataset); ok {
		ins, outs := ds.Scaled(w.ISL, w.OSL)
		return sim.LengthDist{Kind: "empirical", Values: ins}, sim.LengthDist{Kind: "empirical", Values: outs}
	}
	if w.ExactOutput {
		return sim.Fixed(w.ISL), sim.Fixed(w.OSL)
	}
	return sim.Fixed(w.ISL), BenchmarkOutput(w.OSL, w.OSLMax)
}

// Longest is the most tokens one request of w holds: its longest prompt
// and output (every kind a workload draws is bounded), which a worker's
// KV cache must hold.
func (w Workload) Longest() (prompt, output int) {
	in, out := w.Lengths()
	return w.Sharing.LongestPrompt(in.MaxLen(), out.MaxLen()), out.MaxLen()
}

// Span is how many tokens of context w's requests need, as a
// max-model-len must allow them, and how to name that: "ISL+OSL", or with
// a Dataset its longest prompt plus its longest output (drawn independently,
// the simulator may pair them).
func (w Workload) Span() (tokens int, what string) {
	if w.Sharing.Turns > 1 {
		in, out := w.Longest()
		return in + out, fmt.Sprintf("the last turn of a %d-turn conversation", w.Sharing.Turns)
	}
	if w.Dataset == "" {
		return w.ISL + w.OSL, "ISL+OSL"
	}
	in, out := w.Longest()
	return in + out, "the longest prompt plus the longest output of the " + w.Dataset + " dataset"
}

// Shortest is w's shortest prompt and output: the minima of its length
// distributions (with a Dataset, its scaled sample's; otherwise ISL and
// the bottom of BenchmarkOutput's spread). Latency floors that hold for
// every statistic (a median, not only the mean) price it.
func (w Workload) Shortest() (prompt, output int) {
	in, out := w.Lengths()
	return in.MinLen(), out.MinLen()
}

// OutputSpread is the relative half-width of the output lengths a simulation
// draws for outputs that run to about their stated length.
const OutputSpread = 0.2

// OutputSpreadText is OutputSpread as messages and help spell it: "20%".
var OutputSpreadText = strconv.FormatFloat(100*OutputSpread, 'f', 0, 64) + "%"

// BenchmarkOutput is the output-length distribution simulated for a
// benchmark whose mean output is osl tokens; maxTokens is the cap of
// outputs that stop early (Workload.OSLMax), 0 for outputs that run
// to about osl.
//
// Outputs that run to their length are uniform within ±20% of osl: fixed
// lengths in a deterministic closed loop would keep every client in
// lock-step, prefilling in waves, and inflate TTFT several-fold (a record
// that measured exact lengths is simulated so: Workload.ExactOutput).
// Outputs that stop early end at an end-of-sequence token that nothing on
// random prompts ties to a length: exponential lengths capped at
// maxTokens, their mean set so that the capped lengths average osl. Under
// load the spread decides how soon KV cache and batch slots free up.
func BenchmarkOutput(osl, maxTokens int) sim.LengthDist {
	if maxTokens > osl && osl >= 2 {
		return sim.LengthDist{Kind: "exponential", Mean: cappedExpMean(float64(osl), float64(maxTokens)), Min: 1, Max: maxTokens}
	}
	if osl < 10 {
		return sim.Fixed(osl)
	}
	lo := int(math.Round(float64(osl) * (1 - OutputSpread)))
	return sim.LengthDist{Kind: "uniform", Min: lo, Max: 2*osl - lo}
}

// cappedExpMean is the mean μ of an exponential whose values capped at m
// average mean: μ·(1 − e^(−m/μ)) = mean, for 0 < mean < m (by bisection;
// the left side grows with μ from 0 towards m).
func cappedExpMean(mean, m float64) float64 {
	capped := func(mu float64) float64 { return mu * -math.Expm1(-m/mu) }
	lo, hi := mean, 2*mean
	for capped(hi) < mean {
		lo, hi = hi, 2*hi
	}
	for range 100 {
		mid := (lo + hi) / 2
		if capped(mid) < mean {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
