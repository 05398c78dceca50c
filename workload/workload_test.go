package workload

import (
	"fmt"
	"math"
	"testing"
)

// Outputs that stop early are drawn as capped exponentials whose mean,
// after rounding to whole tokens and capping, is the measured mean; those
// that run to their length stay within ±OutputSpread of it.
func TestBenchmarkOutputOfOutputsThatStopEarly(t *testing.T) {
	for _, tt := range []struct{ osl, cap int }{{438, 1000}, {465, 1000}, {100, 2048}, {900, 1000}} {
		d := BenchmarkOutput(tt.osl, tt.cap)
		if d.Kind != "exponential" || d.Min != 1 || d.Max != tt.cap {
			t.Fatalf("BenchmarkOutput(%d, %d) = %+v, want an exponential over 1..%d", tt.osl, tt.cap, d, tt.cap)
		}
		// The mean of the drawn lengths: round(x) clipped to 1..cap, x ~ Exp(mean d.Mean).
		cdf := func(x float64) float64 { return -math.Expm1(-x / d.Mean) }
		mean := 0.0
		for n := 1; n <= tt.cap; n++ {
			lo, hi := float64(n)-0.5, float64(n)+0.5
			p := cdf(hi) - cdf(lo)
			if n == 1 {
				p = cdf(hi)
			}
			if n == tt.cap {
				p = 1 - cdf(lo)
			}
			mean += float64(n) * p
		}
		if math.Abs(mean/float64(tt.osl)-1) > 0.005 {
			t.Errorf("BenchmarkOutput(%d, %d): drawn lengths average %.1f tokens", tt.osl, tt.cap, mean)
		}
	}
	for _, cap := range []int{0, 200} { // no cap, or outputs that reach it
		if d := BenchmarkOutput(200, cap); d.Kind != "uniform" || d.Min != 160 || d.Max != 240 {
			t.Errorf("BenchmarkOutput(200, %d) = %+v, want uniform 160..240", cap, d)
		}
	}
}

// The spread messages and help name is the one BenchmarkOutput draws.
func TestOutputSpreadText(t *testing.T) {
	d := BenchmarkOutput(1000, 0)
	if want := fmt.Sprintf("%d%%", (1000-d.Min)/10); OutputSpreadText != want || d.Max-1000 != 1000-d.Min {
		t.Errorf("OutputSpreadText %q; outputs of OSL 1000 drawn over %d..%d (±%s)", OutputSpreadText, d.Min, d.Max, want)
	}
}
