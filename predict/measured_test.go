package predict

import (
	"math"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/workload"
)

func TestAddMeasured(t *testing.T) {
	pred := Prediction{Points: []Point{
		{Load: model.Closed(1), Metrics: map[string]float64{model.MeanTTFT: 110}},
		{Load: model.Closed(4), Metrics: map[string]float64{model.MeanTTFT: 150}},
	}}
	v := &Validation{}
	v.AddMeasured(workload.Workload{ISL: 100, OSL: 10}, pred, []Measured{
		{Load: model.Closed(1), Metrics: map[string]float64{model.MeanTTFT: 100}, NumPrompts: 8, Completed: 8},
		{Load: model.Closed(4), Metrics: map[string]float64{model.MeanTTFT: 200}, NumPrompts: 8, Completed: 6, Failed: 2, FailureNote: " (http_500 2)"},
	})
	if len(v.Points) != 2 {
		t.Fatalf("%d points, want 2", len(v.Points))
	}
	for i, want := range []float64{10, 25} {
		p := v.Points[i]
		var got float64 = math.NaN()
		for _, c := range p.Metrics {
			if c.Metric == model.MeanTTFT {
				got = c.AbsPctError
			}
		}
		if math.Abs(got-want) > 1e-9 || p.ISL != 100 || p.OSL != 10 || p.NumPrompts != 8 {
			t.Errorf("point %d: %+v, want mean TTFT error %v%%", i, p, want)
		}
	}
	if p := v.Points[1]; p.Completed != 6 || p.Failed != 2 {
		t.Errorf("counts %d completed, %d failed", p.Completed, p.Failed)
	}
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "concurrency 4: 2 of 8 requests failed (http_500 2)") {
		t.Errorf("warnings %q", v.Warnings)
	}
}
