package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

func TestRouterOpen(t *testing.T) {
	pt := func(topo string, settings map[string]string) *point {
		tp, err := model.ParseTopology(topo)
		if err != nil {
			t.Fatal(err)
		}
		return &point{topo: tp, rec: &results.Record{System: results.System{Topology: tp, Settings: settings}}}
	}
	tests := []struct {
		name   string
		engine string
		pts    []*point
		open   bool
	}{
		{"four replicas, router unstated", "vllm-0.9.0.1", []*point{pt("4xTP4", nil)}, true},
		{"one replica", "vllm-0.9.0.1", []*point{pt("1xTP4", nil)}, false},
		{"one multi-replica record among single ones", "vllm", []*point{pt("1xTP1", nil), pt("2xTP1", nil)}, true},
		{"router stated", "vllm-0.9.0.1", []*point{pt("4xTP4", map[string]string{"router": "round-robin"})}, false},
		{"router stated by one record", "vllm-0.9.0.1", []*point{pt("4xTP4", nil), pt("4xTP4", map[string]string{"Router": "random"})}, false},
		{"Dynamo routes by itself", "dynamo-0.3.0", []*point{pt("prefill 2xTP4 + decode 2xTP4", nil)}, false},
		{"disaggregated, one decode worker", "vllm", []*point{pt("prefill 2xTP4 + decode 1xTP4", nil)}, false},
	}
	for _, tt := range tests {
		if got := routerOpen(tt.engine, tt.pts); got != tt.open {
			t.Errorf("%s: routerOpen = %v, want %v", tt.name, got, tt.open)
		}
		want := 1
		if tt.open {
			want = 2
		}
		if got := routerCandidates(tt.engine, engine.Settings{Router: "least-outstanding"}, tt.pts); len(got) != want {
			t.Errorf("%s: candidates %v, want %d", tt.name, got, want)
		}
	}
}

func TestRouterScoreCountsTails(t *testing.T) {
	p := &point{weight: 1, meas: map[string]float64{model.MeanTPOT: 20},
		rec: &results.Record{Metrics: map[string]float64{model.MeanTPOT: 20, model.P99TPOT: 60}}}
	exact := routerScore([]*point{p}, []map[string]float64{{model.MeanTPOT: 20, model.P99TPOT: 60}})
	noTail := routerScore([]*point{p}, []map[string]float64{{model.MeanTPOT: 20, model.P99TPOT: 25}})
	if exact != 0 || !(noTail > 0) {
		t.Errorf("score with the measured tail %g, with a p99 TPOT of 25 ms for 60 measured %g: want 0 and more", exact, noTail)
	}
	best, rc := chooseRouter([]routerTry{{router: "round-robin", score: 0.1}, {router: "random", score: 0.1}}, true)
	if best.router != "round-robin" || rc.Chosen != "round-robin" {
		t.Errorf("a tie chose %s, want round-robin (the first)", best.router)
	}
}

// vllmRecords simulates an aggregated vLLM sweep on H20 with known costs
// under a router and returns it as measured records (with p99s) that do
// not state the router.
func vllmRecords(t *testing.T, router sim.Routing, concs []int) []results.Record {
	t.Helper()
	g, _ := model.LookupGPU("H20")
	m, _ := model.LookupLLM("Qwen/Qwen3-32B")
	tp, _ := model.ParseTopology("4xTP4")
	s := defaultSettings(engine.Parse("vllm-0.9.0.1"), g, 0)
	s.Router = string(router)
	e := env{gpu: g, llm: m, settings: s}
	prm := params{coeffs: map[string]model.Coeffs{RoleAggregated: truthDecode}, frontend: 0.01}
	var recs []results.Record
	for _, c := range concs {
		p := &point{topo: tp, w: workload.Workload{Load: model.Closed(c), ISL: 2500, OSL: 100, NumPrompts: 10 * c}}
		mt := simulateMetrics(t, e, prm, p, model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL, model.P99TTFT, model.P99TPOT)
		recs = append(recs, results.Record{
			ID:     fmt.Sprintf("syn-%s:%d", router, c),
			Source: results.Source{File: "synthetic-vllm.md", Line: len(recs) + 1, Format: "markdown"},
			System: results.System{GPU: "H20", GPUCount: 16, Model: "Qwen/Qwen3-32B", Engine: "vllm-0.9.0.1", Topology: tp},
			Workload: results.Workload{ISL: 2500, OSL: 100, ISLMax: 2500, OSLMax: 100,
				Load: model.Closed(c), NumPrompts: 10 * c},
			// No completed count: the outputs were spread (see syntheticOn).
			Metrics: mt,
		})
	}
	return recs
}

// TestFitChoosesUnstatedRouter fits sweeps simulated under each router,
// which do not state it: the fit must find the router they were made
// with, record both scores, and never override a stated router.
func TestFitChoosesUnstatedRouter(t *testing.T) {
	if testing.Short() {
		t.Skip("fits two synthetic groups under two routers each")
	}
	concs := []int{8, 32, 64}
	for _, truth := range []sim.Routing{sim.RoundRobin, sim.Random} {
		recs := vllmRecords(t, truth, concs)
		prof, _, err := Fit(context.Background(), recs, Options{MaxEvals: 12}, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := prof.Groups[0]
		rc := g.RouterChoice
		if rc == nil {
			t.Fatalf("%s truth: no router choice recorded", truth)
		}
		t.Logf("%s truth: %s", truth, rc.Why)
		if rc.Chosen != string(truth) || g.Settings.Router != string(truth) {
			t.Errorf("%s truth: chose %s (settings %s), scores %v", truth, rc.Chosen, g.Settings.Router, rc.Scores)
		}
		other := sim.Random
		if truth == sim.Random {
			other = sim.RoundRobin
		}
		if !(rc.Scores[string(truth)] < rc.Scores[string(other)]) || math.IsNaN(rc.Scores[string(other)]) {
			t.Errorf("%s truth: scores %v", truth, rc.Scores)
		}
	}
	// A stated router stays, even where the data would choose the other.
	recs := vllmRecords(t, sim.Random, concs)
	for i := range recs {
		recs[i].System.Settings = map[string]string{"router": "round-robin"}
	}
	prof, _, err := Fit(context.Background(), recs, Options{MaxEvals: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := prof.Groups[0]; g.RouterChoice != nil || g.Settings.Router != "round-robin" {
		t.Errorf("stated round-robin: fitted router %s, choice %+v", g.Settings.Router, g.RouterChoice)
	}
}

// Target.Router is the load balancer asked for: it replaces the default
// and is said to be asked for; an unknown one is refused by name.
func TestTargetRouter(t *testing.T) {
	p := pooledProfile()
	tgt := Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("vllm-0.9.0.1"), Topology: mustTopo(t, "4xTP1")}
	d, err := p.Configure(tgt)
	if err != nil {
		t.Fatal(err)
	}
	if d.Config.Router != sim.RoundRobin || d.RouterAsked {
		t.Errorf("default router %q (asked %v), want round-robin, not asked", d.Config.Router, d.RouterAsked)
	}
	tgt.Router = "least-outstanding"
	if d, err = p.Configure(tgt); err != nil || d.Config.Router != sim.LeastOutstanding || !d.RouterAsked {
		t.Errorf("asked least-outstanding: router %q asked %v, err %v", d.Config.Router, d.RouterAsked, err)
	}
	tgt.Router = "sticky"
	var re *RouterError
	if _, err = p.Configure(tgt); !errors.As(err, &re) || re.Router != "sticky" {
		t.Errorf("unknown router: err %v, want a RouterError naming it", err)
	}
}

// A cross-validation fold refines its costs behind the router the group's
// full fit chose (Options.foldRouter), not behind each candidate again;
// without it the fold chooses among both.
func TestFoldKeepsTheFullFitsRouter(t *testing.T) {
	if testing.Short() {
		t.Skip("fits a synthetic group twice")
	}
	groups, keys, _ := preparePoints(vllmRecords(t, sim.Random, []int{8, 32}), 0)
	pts := groups[keys[0]]
	for _, tt := range []struct {
		fold   string
		chosen bool
	}{{"", true}, {string(sim.RoundRobin), false}} {
		gf, err := fitGroup(context.Background(), keys[0], pts, pts, Options{MaxEvals: 2, foldRouter: tt.fold}, func(Progress) {})
		if err != nil {
			t.Fatal(err)
		}
		if (gf.router != nil) != tt.chosen || (tt.fold != "" && gf.env.settings.Router != tt.fold) {
			t.Errorf("fold router %q: router %s, choice %+v", tt.fold, gf.env.settings.Router, gf.router)
		}
	}
}
