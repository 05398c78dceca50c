package sim

import (
	"math/rand/v2"
	"testing"
)

// boundaryAfter finds what a binary search over the whole run finds:
// the first step ending at or after t, j beyond the run.
func TestBoundaryAfterIsSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 20000 {
		e := &engine{t0: rng.Float64() * 100, base: rng.Float64() * 0.02, perKV: rng.Float64() * 1e-8,
			k1: float64(rng.IntN(1 << 20)), n: 1 + rng.IntN(256), j: 1 + int64(rng.IntN(2000))}
		if trial%10 == 0 {
			e.base, e.perKV = 0, 0 // steps of no time: every boundary at t0
		}
		at := e.t0 + rng.Float64()*1.2*(e.runEnd(e.j)-e.t0)
		if trial%7 == 0 {
			at = e.runEnd(1 + int64(rng.IntN(int(e.j)))) // on a boundary
		}
		want := e.j
		if at < e.runEnd(e.j) {
			lo, hi := int64(1), e.j
			for lo < hi {
				if mid := lo + (hi-lo)/2; e.runEnd(mid) >= at {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			want = lo
		}
		if got := e.boundaryAfter(at); got != want {
			t.Fatalf("trial %d, run %+v, t %v: boundary %d, search %d", trial, e, at, got, want)
		}
	}
}
