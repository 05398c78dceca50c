package loadgen

import (
	"fmt"
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestPercentileMatchesNumpyLinear(t *testing.T) {
	// Expected values worked by hand from numpy's definition:
	// rank = p/100·(n−1), interpolate between neighbours.
	tests := []struct {
		name   string
		values []float64
		p      float64
		want   float64
	}{
		{"empty is zero like vLLM", nil, 99, 0},
		{"single value", []float64{7}, 99, 7},
		{"median of even count", []float64{4, 1, 3, 2}, 50, 2.5},
		{"p90 of four", []float64{1, 2, 3, 4}, 90, 3.7},
		{"p40 unsorted", []float64{50, 15, 40, 20, 35}, 40, 29},
		{"p99 of 1..10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 9.91},
		{"p0 is min", []float64{3, 1, 2}, 0, 1},
		{"p100 is max", []float64{3, 1, 2}, 100, 3},
		{"p above 100 clamps", []float64{3, 1, 2}, 150, 3},
		// nearest-rank (montanaflynn/stats) would give 10 here.
		{"p95 of 1..10 interpolates", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 9.55},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.values, tt.p); !near(got, tt.want, 1e-12) {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.values, tt.p, got, tt.want)
			}
		})
	}
}

func TestPercentileDoesNotReorderInput(t *testing.T) {
	v := []float64{3, 1, 2}
	Percentile(v, 50)
	if v[0] != 3 || v[1] != 1 || v[2] != 2 {
		t.Errorf("input reordered: %v", v)
	}
}

func TestSummarize(t *testing.T) {
	// Seconds in, milliseconds out; population std of this set is exactly 2.
	s := Summarize([]float64{0.002, 0.004, 0.004, 0.004, 0.005, 0.005, 0.007, 0.009})
	want := Summary{Mean: 5, Median: 4.5, Std: 2, P90: 7.6, P95: 8.3, P99: 8.86}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", s.Mean, want.Mean}, {"median", s.Median, want.Median}, {"std", s.Std, want.Std},
		{"p90", s.P90, want.P90}, {"p95", s.P95, want.P95}, {"p99", s.P99, want.P99}} {
		if !near(c.got, c.want, 1e-9) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if (Summarize(nil) != Summary{}) {
		t.Errorf("Summarize(nil) = %+v, want zeros", Summarize(nil))
	}
}

func ExamplePercentile() {
	ttfts := []float64{120, 80, 100, 90, 110}
	fmt.Printf("p50=%.1f p90=%.1f p99=%.2f\n", Percentile(ttfts, 50), Percentile(ttfts, 90), Percentile(ttfts, 99))
	// Output: p50=100.0 p90=116.0 p99=119.60
}
