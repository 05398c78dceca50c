package stats

import (
	"fmt"
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestPercentileMatchesNumpy(t *testing.T) {
	// Each want is np.percentile(xs, p) with numpy's default method
	// ("linear": rank p/100·(n−1), interpolated between neighbours).
	cases := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{nil, 50, 0}, // vLLM: np.percentile(xs or 0, p)
		{[]float64{5}, 99, 5},
		{[]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 99, 9.91},
		{[]float64{15, 20, 35, 40, 50}, 40, 29},
		{[]float64{0.5, 0.25}, 25, 0.3125},
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 75, 5.5},
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 50, 4.5},
		{[]float64{1, 2}, 0, 1},
		{[]float64{1, 2}, 100, 2},
		{[]float64{1, 2}, -5, 1},  // clamped to p0
		{[]float64{1, 2}, 101, 2}, // clamped to p100
		// A nearest-rank rule (montanaflynn/stats) gives 10.
		{[]float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, 95, 9.55},
	}
	for _, c := range cases {
		if got := Percentile(c.xs, c.p); !near(got, c.want, 1e-12) {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.xs, c.p, got, c.want)
		}
		if got := PercentileSorted(Sorted(c.xs), c.p); !near(got, c.want, 1e-12) {
			t.Errorf("PercentileSorted(sorted %v, %v) = %v, want %v", c.xs, c.p, got, c.want)
		}
	}
}

func TestInputsAreNotReordered(t *testing.T) {
	xs := []float64{3, 1, 2}
	Percentile(xs, 90)
	Median(xs)
	Sorted(xs)
	if xs[0] != 3 || xs[1] != 1 || xs[2] != 2 {
		t.Errorf("input reordered: %v", xs)
	}
}

func TestMedianMeanStd(t *testing.T) {
	// np.median, np.mean and np.std of the same sets.
	tests := []struct {
		name            string
		values          []float64
		median, mean, s float64
	}{
		{"empty gives zeros", nil, 0, 0, 0},
		{"single", []float64{4}, 4, 4, 0},
		{"odd count", []float64{5, 1, 3}, 3, 3, math.Sqrt(8.0 / 3)},
		{"even count", []float64{4, 1, 3, 2}, 2.5, 2.5, math.Sqrt(1.25)},
		{"population std is 2", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 4.5, 5, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Median(tt.values); !near(got, tt.median, 1e-12) {
				t.Errorf("Median = %v, want %v", got, tt.median)
			}
			if got := Mean(tt.values); !near(got, tt.mean, 1e-12) {
				t.Errorf("Mean = %v, want %v", got, tt.mean)
			}
			if got := Std(tt.values); !near(got, tt.s, 1e-12) {
				t.Errorf("Std = %v, want %v", got, tt.s)
			}
		})
	}
}

func ExampleSorted() {
	itls := Sorted([]float64{0.031, 0.012, 0.018, 0.025})
	fmt.Printf("median %.4f, p99 %.4f, mean %.4f\n", PercentileSorted(itls, 50), PercentileSorted(itls, 99), Mean(itls))
	// Output: median 0.0215, p99 0.0308, mean 0.0215
}
