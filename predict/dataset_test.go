package predict

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// A measured series whose records state their dataset draws the loads
// between them from it too, as the records themselves are simulated, so
// the curve does not jump at a measured point; the prediction says so, and
// a dataset capsim does not hold is an error.
func TestSeriesCurveUsesTheDataset(t *testing.T) {
	prof := defaultProfile(t)
	topo, err := model.ParseTopology("1xTP4")
	if err != nil {
		t.Fatal(err)
	}
	var recs []results.Record
	for i, conc := range []int{1, 4, 16} {
		recs = append(recs, results.Record{ID: fmt.Sprintf("ds:%d", i+1), Source: results.Source{File: "ds.md", Line: i + 1, Format: "markdown"},
			System: results.System{GPU: "H20", GPUCount: 4, Model: "Qwen/Qwen3-32B", Engine: "vllm-0.10.1", Topology: topo,
				Settings: map[string]string{"dataset": "sharegpt"}},
			Workload: results.Workload{ISL: 217, OSL: 202, Load: model.Closed(conc), NumPrompts: 200},
			Metrics:  map[string]float64{model.MeanTPOT: 20}, Completed: 200})
	}
	groups := series.Group(recs)
	if len(groups) != 1 {
		t.Fatalf("%d series, want one", len(groups))
	}
	sp, err := Series(context.Background(), prof, groups[0], recs, SeriesOptions{Metrics: []string{model.MeanTPOT}, NumPrompts: 200})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Dataset != "sharegpt" {
		t.Errorf("series dataset %q, want sharegpt", sp.Dataset)
	}
	var curve float64
	for _, c := range sp.Curve {
		if c.X == 2 {
			curve = c.Metrics[model.MeanE2EL]
		}
	}
	e2e := map[string]float64{}
	for _, ds := range []string{"", "sharegpt"} {
		preds, err := Run(context.Background(), prof, Options{Target: sp.Target, NoBand: true, Mode: sim.BenchmarkReplay, Loads: []model.Load{model.Closed(2)}, Workload: workload.Workload{ISL: 217, OSL: 202, Seed: calibrate.FitSeed, Dataset: ds, NumPrompts: 200}})
		if err != nil {
			t.Fatal(err)
		}
		if preds[0].Dataset != ds || strings.Contains(preds[0].HowSimulated(), "sharegpt dataset") != (ds != "") {
			t.Errorf("prediction says dataset %q (%q), want %q", preds[0].Dataset, preds[0].HowSimulated(), ds)
		}
		e2e[ds] = preds[0].Points[0].Metrics[model.MeanE2EL]
	}
	if e2e[""] == e2e["sharegpt"] {
		t.Fatalf("mean E2E %v ms either way: the test cannot tell the datasets apart", e2e[""])
	}
	if curve != e2e["sharegpt"] {
		t.Errorf("curve at concurrency 2: mean E2E %v ms; want %v as simulated with the dataset (%v at the means)", curve, e2e["sharegpt"], e2e[""])
	}
	if _, err := Run(context.Background(), prof, Options{Target: sp.Target, NoBand: true, Workload: workload.Workload{Dataset: "sonnet"}}); err == nil || !strings.Contains(err.Error(), `unknown dataset "sonnet"`) {
		t.Errorf("unknown dataset: err %v", err)
	}
}
