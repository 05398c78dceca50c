package calibrate

import (
	"maps"
	"testing"

	"github.com/capsim/capsim/results"
)

// TestHeldOutV0DelayedOutput checks vLLM V0's delayed output on data the
// fit did not see: the vLLM 0.8.4 (V0) H20 group of seed 004 is fitted on
// its 1000:1000 and 500:1000 series only, then predicts the prefill-heavy
// 2500:100 and 3000:150 series at concurrency 32–128 (issue 12's target),
// once as the records state (V0: delayed output) and once with the
// vllm-engine=V0 setting removed (no delay). Print the numbers with
//
//	go test -v -run TestHeldOutV0DelayedOutput ./calibrate/
func TestHeldOutV0DelayedOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("two fits of one group: about 10 s of CPU")
	}
	median := map[string]map[bool]float64{"mean_ttft_ms": {}, "mean_tpot_ms": {}}
	for _, delayed := range []bool{true, false} {
		prof, held := predictPrefillHeavy(t, "vllm-0.8.4", func(r *results.Record) {
			if !delayed {
				r.System.Settings = maps.Clone(r.System.Settings)
				delete(r.System.Settings, "vllm-engine")
			}
		})
		if got := prof.Groups[0].Settings.DelayedOutput; got != delayed {
			t.Fatalf("fitted group settings: delayed output %v, want %v", got, delayed)
		}
		for _, metric := range []string{"mean_ttft_ms", "mean_tpot_ms"} {
			med, max := heldOutErrors(t, held, metric)
			t.Logf("delayed output %-5v: %s held out on %d points: median |error| %.1f%%, max %.1f%%", delayed, metric, len(held), 100*med, 100*max)
			median[metric][delayed] = med
		}
	}
	for metric, m := range median {
		if m[true] >= m[false] {
			t.Errorf("held-out %s median |error| %.1f%% with delayed output, %.1f%% without: the mechanism does not help", metric, 100*m[true], 100*m[false])
		}
	}
}
