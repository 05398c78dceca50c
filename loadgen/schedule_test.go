package loadgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/capsim/capsim/model"
)

func TestGammaMoments(t *testing.T) {
	// Gamma(shape k, scale θ): mean kθ, variance kθ². 200k seeded draws put
	// the sample mean within ~0.5% and the variance within ~2% (k=0.5 has the
	// heaviest tail); the tolerances leave room for that.
	for _, tt := range []struct{ shape, scale float64 }{{0.5, 2}, {1, 0.25}, {4, 0.1}, {20, 1}} {
		rng := rand.New(rand.NewPCG(42, 7))
		const n = 200000
		var sum, sq float64
		xs := make([]float64, n)
		for i := range xs {
			x := Gamma(rng, tt.shape, tt.scale)
			if x <= 0 {
				t.Fatalf("shape %v: non-positive draw %v", tt.shape, x)
			}
			xs[i] = x
			sum += x
		}
		mean := sum / n
		for _, x := range xs {
			sq += (x - mean) * (x - mean)
		}
		variance := sq / (n - 1)
		wantMean, wantVar := tt.shape*tt.scale, tt.shape*tt.scale*tt.scale
		if math.Abs(mean/wantMean-1) > 0.015 {
			t.Errorf("shape %v scale %v: mean %v, want %v", tt.shape, tt.scale, mean, wantMean)
		}
		if math.Abs(variance/wantVar-1) > 0.05 {
			t.Errorf("shape %v scale %v: variance %v, want %v", tt.shape, tt.scale, variance, wantVar)
		}
	}
}

func TestScheduleOpenLoopArrivals(t *testing.T) {
	const n, rate = 20000, 4.0
	for _, burstiness := range []float64{0.25, 1, 4} {
		due := Schedule(model.Open(rate, burstiness), n, 1)
		// vLLM rescales so the last request is due at exactly n/rate.
		if got, want := due[n-1], time.Duration(n/rate*float64(time.Second)); absDur(got-want) > time.Microsecond {
			t.Errorf("burstiness %v: last due %v, want %v", burstiness, got, want)
		}
		gaps := make([]float64, n)
		prev := time.Duration(0)
		for i, d := range due {
			if d < prev {
				t.Fatalf("burstiness %v: schedule not monotone at %d", burstiness, i)
			}
			gaps[i] = (d - prev).Seconds()
			prev = d
		}
		var sum, sq float64
		for _, g := range gaps {
			sum += g
		}
		mean := sum / n
		for _, g := range gaps {
			sq += (g - mean) * (g - mean)
		}
		cv2 := sq / (n - 1) / (mean * mean) // squared coefficient of variation = 1/shape
		if math.Abs(mean*rate-1) > 1e-6 {
			t.Errorf("burstiness %v: mean gap %v, want %v", burstiness, mean, 1/rate)
		}
		if want := 1 / burstiness; math.Abs(cv2/want-1) > 0.08 {
			t.Errorf("burstiness %v: squared CV of gaps %v, want %v", burstiness, cv2, want)
		}
	}
}

func TestScheduleDeterministicAndShapes(t *testing.T) {
	a := Schedule(model.Open(2, 1), 50, 9)
	b := Schedule(model.Open(2, 1), 50, 9)
	c := Schedule(model.Open(2, 1), 50, 10)
	if !slices.Equal(a, b) {
		t.Error("same seed gave different schedules")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same schedule")
	}
	constant := Schedule(model.Open(10, math.Inf(1)), 5, 1)
	for i, d := range constant {
		if want := time.Duration(i+1) * 100 * time.Millisecond; absDur(d-want) > time.Microsecond {
			t.Errorf("infinite burstiness: due[%d] = %v, want %v", i, d, want)
		}
	}
	for _, load := range []model.Load{model.Closed(4), model.Open(math.Inf(1), 1)} {
		for i, d := range Schedule(load, 5, 1) {
			if d != 0 {
				t.Errorf("%v: due[%d] = %v, want 0", load, i, d)
			}
		}
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func ExampleSchedule() {
	// Five Poisson arrivals at 2 req/s: the last is due at exactly 5/2 s.
	for _, due := range Schedule(model.Open(2, 1), 5, 42) {
		fmt.Println(due.Round(time.Millisecond))
	}
	// Output:
	// 85ms
	// 581ms
	// 598ms
	// 1.377s
	// 2.5s
}
