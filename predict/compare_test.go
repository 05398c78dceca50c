package predict

import (
	"fmt"
	"math"
	"testing"

	"github.com/capsim/capsim/model"
)

func TestAbsPctErrorAndSummary(t *testing.T) {
	for _, tt := range []struct{ measured, predicted, want float64 }{
		{50, 40, 20},
		{10, 15, 50},
		{2, 2, 0},
		{0.5, 1.5, 200},
	} {
		if got, ok := model.AbsPctError(tt.measured, tt.predicted); !ok || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("AbsPctError(%v, %v) = %v, %v; want %v", tt.measured, tt.predicted, got, ok, tt.want)
		}
	}
	for _, bad := range [][2]float64{{0, 1}, {-1, 1}, {math.Inf(1), 1}, {1, math.NaN()}, {1, math.Inf(-1)}} {
		if _, ok := model.AbsPctError(bad[0], bad[1]); ok {
			t.Errorf("AbsPctError(%v, %v) compared", bad[0], bad[1])
		}
	}
	cs := []Comparison{
		{Metric: model.MeanTTFT, AbsPctError: 30}, {Metric: model.MeanTPOT, AbsPctError: 1},
		{Metric: model.MeanTTFT, AbsPctError: 10},
		{Metric: model.MeanTTFT, AbsPctError: 20}, {Metric: model.MeanTPOT, AbsPctError: 3},
	}
	got := Summarise(cs, []string{model.MeanTTFT, model.MeanTPOT, model.MeanE2EL})
	want := []ErrorSummary{
		{Metric: model.MeanTTFT, Median: 20, Max: 30, Points: 3},
		{Metric: model.MeanTPOT, Median: 2, Max: 3, Points: 2}, // even count: mean of the middle two
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Summarise = %v, want %v", got, want)
	}
	if m := MedianError(cs); m != 10 {
		t.Errorf("MedianError = %v, want 10", m)
	}
}
