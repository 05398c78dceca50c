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

// A stated prefix-cache hit rate is simulated (lower TTFT for a long
// prompt) and reported; a rate outside [0, 1) is an error.
func TestRunPrefixHitRate(t *testing.T) {
	prof := defaultProfile(t)
	opts := Options{Target: h20Target(t, prof), NoBand: true, Loads: []model.Load{model.Closed(1)}, Workload: workload.Workload{ISL: 8000, OSL: 50, Seed: 7, NumPrompts: 200}}
	ttft := map[float64]float64{}
	for _, h := range []float64{0, 0.5} {
		opts.Workload.PrefixHitRate = h
		preds, err := Run(context.Background(), prof, opts)
		if err != nil {
			t.Fatal(err)
		}
		p := preds[0]
		ttft[h] = p.Points[0].Metrics[model.MeanTTFT]
		if p.PrefixHitRate != h || strings.Contains(p.HowSimulated(), "prefix cache") != (h > 0) {
			t.Errorf("hit %v: prediction says %v, %q", h, p.PrefixHitRate, p.HowSimulated())
		}
	}
	if !(ttft[0.5] < 0.8*ttft[0]) {
		t.Errorf("mean TTFT %v ms with half of every 8000-token prompt cached, %v ms without: want clearly lower", ttft[0.5], ttft[0])
	}
	for _, h := range []float64{-0.1, 1, 2} {
		opts.Workload.PrefixHitRate = h
		if _, err := Run(context.Background(), prof, opts); err == nil || !strings.HasPrefix(err.Error(), "predict: Options.Workload.PrefixHitRate must be a fraction in [0, 1)") {
			t.Errorf("hit %v: err %v", h, err)
		}
	}
}

// A measured series whose records state prefix-cache hit rates draws the
// loads between them with the records' median rate, as the records
// themselves are simulated, not with no hit at all.
func TestSeriesCurveUsesTheMedianHitRate(t *testing.T) {
	prof := defaultProfile(t)
	topo, err := model.ParseTopology("1xTP4")
	if err != nil {
		t.Fatal(err)
	}
	var recs []results.Record
	for i, c := range []struct {
		conc int
		hit  string
	}{{1, "0.4"}, {4, "0.5"}, {16, "60%"}} {
		recs = append(recs, results.Record{ID: fmt.Sprintf("hit:%d", i+1), Source: results.Source{File: "hit.md", Line: i + 1, Format: "markdown"},
			System: results.System{GPU: "H20", GPUCount: 4, Model: "Qwen/Qwen3-32B", Engine: "vllm-0.10.1", Topology: topo,
				Settings: map[string]string{"prefix_cache_hit_rate": c.hit}},
			Workload: results.Workload{ISL: 6000, OSL: 50, Load: model.Closed(c.conc), NumPrompts: 40},
			Metrics:  map[string]float64{model.MeanTTFT: 500}, Completed: 40})
	}
	groups := series.Group(recs)
	if len(groups) != 1 {
		t.Fatalf("%d series, want one", len(groups))
	}
	sp, err := Series(context.Background(), prof, groups[0], recs, SeriesOptions{Metrics: []string{model.MeanTTFT}, NumPrompts: 40})
	if err != nil {
		t.Fatal(err)
	}
	if sp.PrefixHitRate != 0.5 {
		t.Errorf("series hit rate %v, want the median 0.5", sp.PrefixHitRate)
	}
	// Concurrency 2 lies between the measured 1 and 4.
	var curve float64
	for _, c := range sp.Curve {
		if c.X == 2 {
			curve = c.Metrics[model.MeanTTFT]
		}
	}
	ttft := map[float64]float64{}
	for _, h := range []float64{0, 0.5} {
		preds, err := Run(context.Background(), prof, Options{Target: sp.Target, NoBand: true, Mode: sim.BenchmarkReplay, Loads: []model.Load{model.Closed(2)}, Workload: workload.Workload{ISL: 6000, OSL: 50, Seed: calibrate.FitSeed, PrefixHitRate: h, NumPrompts: 40}})
		if err != nil {
			t.Fatal(err)
		}
		ttft[h] = preds[0].Points[0].Metrics[model.MeanTTFT]
	}
	if !(ttft[0.5] < 0.8*ttft[0]) {
		t.Fatalf("mean TTFT %v ms with a 50%% hit, %v without: the test cannot tell them apart", ttft[0.5], ttft[0])
	}
	if curve != ttft[0.5] {
		t.Errorf("curve at concurrency 2: mean TTFT %v ms; want %v as simulated with the median hit rate (%v with none)", curve, ttft[0.5], ttft[0])
	}
}
