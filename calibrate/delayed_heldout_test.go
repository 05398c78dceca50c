package calibrate

import (
	"context"
	"fmt"
	"maps"
	"math"
	"sort"
	"testing"

	"github.com/capsim/capsim/fixtures"
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
	all, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	target := func(r *results.Record) bool {
		s := fmt.Sprintf("%d:%d", r.Workload.ISLMax, r.Workload.OSLMax)
		return s == "2500:100" || s == "3000:150"
	}
	median := map[string]map[bool]float64{"mean_ttft_ms": {}, "mean_tpot_ms": {}}
	for _, delayed := range []bool{true, false} {
		var train, test []results.Record
		for _, r := range all {
			if r.System.GPU != "H20" || r.System.Engine != "vllm-0.8.4" {
				continue
			}
			if !delayed {
				r.System.Settings = maps.Clone(r.System.Settings)
				delete(r.System.Settings, "vllm-engine")
			}
			if !target(&r) {
				train = append(train, r)
			} else if c := r.Workload.Load.Concurrency; c >= 32 && c <= 128 {
				test = append(test, r)
			}
		}
		prof, _, err := Fit(context.Background(), train, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := prof.Groups[0].Settings.DelayedOutput; got != delayed {
			t.Fatalf("fitted group settings: delayed output %v, want %v", got, delayed)
		}
		groups, keys, _ := preparePoints(test, 0)
		var pts []*point
		for _, k := range keys {
			pts = append(pts, groups[k]...)
		}
		held, err := predictHeldOut(context.Background(), prof, pts, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, metric := range []string{"mean_ttft_ms", "mean_tpot_ms"} {
			var abs []float64
			for _, h := range held {
				if h.failure != "" {
					t.Fatalf("record %s: %s", h.p.rec.ID, h.failure)
				}
				abs = append(abs, math.Abs(h.central[metric]/h.measured[metric]-1))
			}
			sort.Float64s(abs)
			med := abs[len(abs)/2]
			if len(abs)%2 == 0 {
				med = (abs[len(abs)/2-1] + abs[len(abs)/2]) / 2
			}
			t.Logf("delayed output %-5v: %s held out on %d points: median |error| %.1f%%, max %.1f%%", delayed, metric, len(abs), 100*med, 100*abs[len(abs)-1])
			median[metric][delayed] = med
		}
	}
	for metric, m := range median {
		if m[true] >= m[false] {
			t.Errorf("held-out %s median |error| %.1f%% with delayed output, %.1f%% without: the mechanism does not help", metric, 100*m[true], 100*m[false])
		}
	}
}
