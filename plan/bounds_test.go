package plan

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// boundCases are deployment shapes and workloads on which the cost bounds
// are checked against the simulator.
var boundCases = []struct {
	gpu, llm string
	topo     model.Topology
	isl, osl int
}{
	{"H20", "Qwen3-32B", model.Aggregated(model.Pool{Count: 2, TP: 4}), 3000, 150},
	{"H20", "Qwen3-32B", model.Aggregated(model.Pool{Count: 1, TP: 2}), 1000, 1000},
	{"H20", "Qwen3-32B", model.Disaggregated(model.Pool{Count: 3, TP: 4}, model.Pool{Count: 1, TP: 4}), 3000, 150},
	{"H20", "Qwen3-32B", model.Disaggregated(model.Pool{Count: 2, TP: 1}, model.Pool{Count: 1, TP: 4}), 500, 1000},
	{"H200", "Qwen3-32B", model.Disaggregated(model.Pool{Count: 6, TP: 2}, model.Pool{Count: 1, TP: 8}), 3000, 150},
	{"L40S", "Llama-3.1-8B-Instruct", model.Aggregated(model.Pool{Count: 3, TP: 1}), 2500, 100},
	{"L40S", "Llama-3.1-8B-Instruct", model.Disaggregated(model.Pool{Count: 1, TP: 1}, model.Pool{Count: 2, TP: 1}), 200, 800},
}

// boundOf prices a deployment as the search does (newTemplate), at
// prefix-cache hit rate hit, with request lengths from dataset ("": ISL and
// OSL's spread): its capacity bound and latency floors, and the workload
// the search simulates.
func boundOf(t *testing.T, prof Profile, d calibrate.Deployment, topo model.Topology, isl, osl int, hit float64, dataset string) (float64, map[string]float64, workload.Workload) {
	t.Helper()
	s := &search{prof: prof, llm: d.LLM, opts: Options{Workload: workload.Workload{ISL: isl, OSL: osl, PrefixHitRate: hit, Dataset: dataset, Load: model.Closed(1)}}}
	tm, err := s.newTemplate(d.GPU, d.Engine, topo, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := s.opts.workload(s.opts.Workload.Load, 1)
	if topo.Disaggregated() {
		return min(float64(topo.Prefill.Count)*tm.prefill.prefillRate, float64(topo.Decode.Count)*tm.decode.decodeRate), tm.floor, w
	}
	return float64(topo.Replicas.Count) * tm.agg.aggRate, tm.floor, w
}

// The capacity bound is an upper bound: offered twice the bound, the
// simulator never serves more than it.
func TestCapacityBoundIsUpperBound(t *testing.T) {
	t.Parallel()
	forEachBoundCase(t, func(t *testing.T, cfg sim.Config, bound float64, _ map[string]float64, _ string) {
		cfg.Load = model.Open(2*bound, 1)
		cfg.NumPrompts = max(800, int(60*bound))
		cfg.Seed = 1
		r, err := sim.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Metrics[model.RequestThroughput]
		if got > bound*1.01 {
			t.Errorf("simulated %.3f req/s at twice the bound, above the bound %.3f req/s", got, bound)
		}
		// A bound far above what the simulator reaches would prune nothing.
		if got < bound*0.4 {
			t.Errorf("simulated %.3f req/s, under 40%% of the bound %.3f req/s: the bound is too loose to prune", got, bound)
		}
		t.Logf("bound %.3f req/s, simulated %.3f (%.0f%%)", bound, got, 100*got/bound)
	})
}

// The latency floor is a lower bound: a lone request is never faster.
func TestLatencyFloorIsLowerBound(t *testing.T) {
	t.Parallel()
	forEachBoundCase(t, func(t *testing.T, cfg sim.Config, _ float64, floor map[string]float64, dataset string) {
		cfg.Load = model.Closed(1)
		cfg.NumPrompts = 3
		if dataset != "" {
			cfg.NumPrompts = 200 // the floor must hold for the dataset's shortest request too
		}
		r, err := sim.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range model.LatencyMetrics {
			for _, stat := range []string{"mean", "median", "p99"} {
				got := r.Metrics[model.MetricName(stat, fam)]
				if got < floor[fam]*(1-1e-9) {
					t.Errorf("%s %s: lone requests took %.3f ms, below the floor %.3f ms", stat, fam, got, floor[fam])
				}
			}
			// The floor should be close for a lone request at the means, or
			// it prunes nothing (a dataset's floor is its shortest request's).
			if got := r.Metrics[model.MetricName("median", fam)]; dataset == "" && got > 1.5*floor[fam] {
				t.Errorf("%s: a lone request took %.3f ms, over 1.5× the floor %.3f ms", fam, got, floor[fam])
			}
		}
	})
}

// forEachBoundCase runs check on every bound case with no prefix-cache
// hits and with 60%, each at the lengths the search simulates (ISL, and
// outputs spread around OSL) and with ShareGPT's lengths scaled to them: a
// simulator config of the case's deployment and workload (load and prompt
// count left to check), and its capacity bound and latency floors.
func forEachBoundCase(t *testing.T, check func(t *testing.T, cfg sim.Config, bound float64, floor map[string]float64, dataset string)) {
	t.Helper()
	prof := &fakeProfile{}
	for _, tc := range boundCases {
		for _, hit := range []float64{0, 0.6} {
			for _, ds := range []string{"", "sharegpt"} {
				t.Run(fmt.Sprintf("%s/%s/%s/%d:%d/hit%v/%s", tc.gpu, tc.llm, Notation(tc.topo), tc.isl, tc.osl, hit, ds), func(t *testing.T) {
					d, err := prof.Configure(calibrate.Target{GPU: mustGPU(t, tc.gpu), LLM: mustLLM(t, tc.llm), Topology: tc.topo})
					if err != nil {
						t.Fatal(err)
					}
					bound, floor, w := boundOf(t, prof, d, tc.topo, tc.isl, tc.osl, hit, ds)
					check(t, d.WithWorkload(w).Config, bound, floor, ds)
				})
			}
		}
	}
}

// TPOT and ITL floors hold whenever some request decodes (TPOT counts only
// requests of more than one token), even if the shortest output is one
// token; with no request decoding they are 0, and E2E is TTFT plus the
// shortest output's decode steps.
func TestLatencyFloorDecodes(t *testing.T) {
	t.Parallel()
	const prefill, first, step = 0.2, 0.01, 0.02
	for _, c := range []struct {
		osl, longest int
		gap, e2el    float64
	}{
		{1, 500, step, prefill + first},
		{1, 1, 0, prefill + first},
		{10, 12, step, prefill + first + 9*step},
	} {
		f := latencyFloor(prefill, first, step, c.osl, c.longest)
		for fam, want := range map[string]float64{"ttft": prefill + first, "tpot": c.gap, "itl": c.gap, "e2el": c.e2el} {
			if math.Abs(f[fam]-1000*want) > 1e-9 {
				t.Errorf("osl %d..%d: %s floor %v ms, want %v", c.osl, c.longest, fam, f[fam], 1000*want)
			}
		}
	}
}
