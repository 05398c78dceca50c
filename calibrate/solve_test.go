package calibrate

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// ridgeSystem is a k×k Gram matrix of rows random rows of scale's size plus a
// ridge, with its first pinned unknowns' rows and columns the identity's.
func ridgeSystem(rng *rand.Rand, k, rows, pinned int, ridge, scale float64) ([]float64, []float64) {
	a := make([]float64, k*k)
	v := make([]float64, k)
	for range rows {
		for i := range v {
			v[i] = 0
			if rng.IntN(3) > 0 {
				v[i] = scale * rng.NormFloat64()
			}
		}
		for i := range k {
			for j := range k {
				a[i*k+j] += v[i] * v[j]
			}
		}
	}
	b := make([]float64, k)
	for i := range k {
		a[i*k+i] += ridge
		b[i] = rng.NormFloat64()
	}
	for p := range pinned {
		for j := range k {
			a[p*k+j], a[j*k+p] = 0, 0
		}
		a[p*k+p] = 1
	}
	return a, b
}

func solveVec(a, b []float64, k int) ([]float64, error) {
	var x mat.VecDense
	err := x.SolveVec(mat.NewDense(k, k, append([]float64(nil), a...)), mat.NewVecDense(k, append([]float64(nil), b...)))
	return x.RawVector().Data, err
}

// TestSolveRidgeIsSolveVec: stage 1's solve gives SolveVec's solution to
// the bit, whether or not its bound skips the condition estimate, and
// SolveVec's error where the system is singular or near it.
func TestSolveRidgeIsSolveVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		k := 7 + rng.IntN(17)
		rows := 1 + rng.IntN(300)
		scale := math.Pow(10, float64(rng.IntN(9)-2))
		a, b := ridgeSystem(rng, k, rows, rng.IntN(3), 4e-4, scale)
		want, werr := solveVec(a, b, k)
		got, err := solveRidge(append([]float64(nil), a...), k, b, rows, 4e-4)
		if werr != nil || err != nil {
			t.Fatalf("system %d: errors %v and %v", i, err, werr)
		}
		for j := range want {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("system %d (k %d, scale %g): x[%d] = %v, SolveVec %v", i, k, scale, j, got[j], want[j])
			}
		}
	}
	// Near-singular (no ridge, fewer rows than unknowns) and singular.
	for _, tc := range []struct {
		name string
		a    []float64
	}{
		{"rank-deficient", func() []float64 { a, _ := ridgeSystem(rng, 9, 3, 0, 0, 1); return a }()},
		{"zero", make([]float64, 9*9)},
	} {
		b := make([]float64, 9)
		b[0] = 1
		_, werr := solveVec(tc.a, b, 9)
		_, err := solveRidge(append([]float64(nil), tc.a...), 9, b, 3, 0)
		if werr == nil || err == nil || err.Error() != werr.Error() {
			t.Errorf("%s: error %v, SolveVec's %v", tc.name, err, werr)
		}
	}
}
