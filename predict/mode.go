package predict

import (
	"fmt"

	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// HowSimulated says how the prediction's points were simulated: a
// benchmark replay, or steady state with the most requests measured at a
// point, the prefix-cache hit rate assumed, if any, the dataset the
// request lengths were drawn from, if any, and whether every output ran to
// exactly its length.
func (p Prediction) HowSimulated() string {
	hit := WorkloadClause(p.PrefixHitRate, p.Dataset)
	hit += ExactOutputClause(p.ExactOutput)
	const replay = "benchmark replay (ramp-up and drain included)"
	if p.Mode != sim.SteadyState {
		return replay + hit
	}
	// A burst has no steady state: its points are replayed whatever the
	// mode asked for (pointMode).
	measured, replayed := 0, 0
	for _, pt := range p.Points {
		if pt.Mode == sim.BenchmarkReplay {
			replayed++
		}
		if pt.Steady != nil {
			measured = max(measured, pt.Steady.Measured)
		}
	}
	switch {
	case len(p.Points) > 0 && replayed == len(p.Points):
		return replay + ", as every burst is" + hit
	case replayed > 0:
		return fmt.Sprintf("steady state (warm-up left out; up to %d measured requests a point); bursts as a benchmark replay", measured) + hit
	}
	return fmt.Sprintf("steady state (warm-up left out; up to %d measured requests a point)", measured) + hit
}

// ExactOutputClause is the clause outputs append to a workload's
// description when every output ran to exactly its length; "" otherwise.
func ExactOutputClause(exact bool) string {
	if !exact {
		return ""
	}
	return "; every output exactly OSL tokens long (ignore_eos), not spread ±" + workload.OutputSpreadText
}

// WorkloadClause is hitClause for h followed, for a dataset, by
// "; request lengths drawn from the sharegpt dataset, scaled to ISL and OSL".
func WorkloadClause(h float64, dataset string) string {
	if dataset == "" {
		return hitClause(h)
	}
	return hitClause(h) + "; request lengths drawn from the " + dataset + " dataset, scaled to ISL and OSL"
}

// hitClause is the clause outputs append to a workload's description for a
// prefix-cache hit rate h: "; 50% of every prompt from the prefix cache",
// "" for no hit.
func hitClause(h float64) string {
	if !(h > 0) {
		return ""
	}
	return fmt.Sprintf("; %.3g%% of every prompt from the prefix cache", 100*h)
}
