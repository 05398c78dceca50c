package predict

import (
	"cmp"
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
)

func TestLoadGrid(t *testing.T) {
	cases := []struct {
		name  string
		xs    []float64
		whole bool
		want  []float64
	}{
		{"concurrencies get midpoints", []float64{1, 4, 16}, true, []float64{1, 2, 4, 8, 16}},
		{"rates get geometric midpoints", []float64{10, 40}, false, []float64{10, 20, 40}},
		{"single point gets half and double", []float64{10}, true, []float64{5, 10, 20}},
		{"single concurrency 1 keeps 1", []float64{1}, true, []float64{1, 2}},
		{"neighbours stay whole and distinct", []float64{1, 2}, true, []float64{1, 2}},
		{"duplicates and bad values dropped", []float64{8, 8, 0, math.Inf(1), math.NaN(), -2}, true, []float64{4, 8, 16}},
		{"nothing", nil, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := loadGrid(c.xs, c.whole); !reflect.DeepEqual(got, c.want) {
				t.Errorf("loadGrid(%v) = %v, want %v", c.xs, got, c.want)
			}
		})
	}
}

func TestMatching(t *testing.T) {
	recs, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	p := Prediction{GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "dynamo-0.3.0",
		Topology: model.Disaggregated(model.Pool{Count: 12, TP: 1, PP: 1}, model.Pool{Count: 1, TP: 4, PP: 1}).String(), ISL: 1000, OSL: 1000}
	count := func(p Prediction, kind model.LoadKind) int {
		l := model.Closed(1)
		if kind == model.OpenLoop {
			l = model.Open(1, 1)
		}
		p.Points = []Point{{Load: l}}
		return len(Matching(p, recs))
	}
	if n := count(p, model.ClosedLoop); n != 8 {
		t.Errorf("ISL 1000 / OSL 1000 (max_tokens): %d records, want 8", n)
	}
	p.OSL = 860 // the measured mean output lengths (799–935) match too
	if n := count(p, model.ClosedLoop); n != 8 {
		t.Errorf("ISL 1000 / OSL 860: %d records, want 8", n)
	}
	if n := count(p, model.OpenLoop); n != 0 {
		t.Errorf("open-loop prediction matched %d closed-loop records", n)
	}
	p.Topology = "prefill 3xTP4 + decode 1xTP4"
	p.ISL = 2000
	if n := count(p, model.ClosedLoop); n != 0 {
		t.Errorf("ISL 2000 matched %d records", n)
	}
}

// A series whose records ran every output to exactly its length is
// simulated so between its measured loads too: dstack's DeepSeek-R1 sweep on
// MI300X with vLLM prefills in waves whose mean TTFT grows with the
// concurrency, and the loads between the measured ones must not fall back
// to spread outputs (a TTFT several times lower, a zigzag curve).
func TestSeriesExactOutputCurve(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a 500-request DeepSeek-R1 sweep")
	}
	recs, err := fixtures.CorpusRecords()
	if err != nil {
		t.Fatal(err)
	}
	var sel []results.Record
	for _, r := range recs {
		if strings.Contains(r.Source.File, "dstack-h200-mi300x-deepseek") && r.System.GPU == "MI300X" && strings.HasPrefix(r.System.Engine, "vllm") &&
			r.Workload.ISL == 3200 && slices.Contains([]int{8, 16, 32}, r.Workload.Load.Concurrency) {
			sel = append(sel, r)
		}
	}
	ss := series.Group(sel)
	if len(ss) != 1 || len(ss[0].Records) != 3 {
		t.Fatalf("%d series from %d records, want one of 3", len(ss), len(sel))
	}
	prof, err := calibrate.ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Series(context.Background(), prof, ss[0], recs, SeriesOptions{NumPrompts: 200})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(sp.Curve, func(a, b CurvePoint) int { return cmp.Compare(a.X, b.X) })
	var xs, ttfts []float64
	for _, p := range sp.Curve {
		xs, ttfts = append(xs, p.X), append(ttfts, p.Metrics[model.MeanTTFT])
	}
	if len(xs) < 5 {
		t.Fatalf("curve at %v, want the three measured loads and those between", xs)
	}
	for i := 1; i < len(ttfts); i++ {
		if !(ttfts[i] > ttfts[i-1]) {
			t.Errorf("mean TTFT %v ms at concurrencies %v: not rising with the load", ttfts, xs)
			break
		}
	}
}
