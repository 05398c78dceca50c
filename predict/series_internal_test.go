package predict

import (
	"math"
	"reflect"
	"testing"

	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
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
