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

// TestNormalEquationsAreDense: the sums over each row's terms other than
// zero are the dense loop's over every unknown, bit for bit.
func TestNormalEquationsAreDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		k := 7 + rng.IntN(17)
		scale := make([]float64, k)
		for i := range scale {
			scale[i] = math.Exp(rng.NormFloat64())
		}
		var rows []row
		var scaled []scaledRow
		var w []float64
		for range 1 + rng.IntN(200) {
			r := row{a: make([]float64, k), y: math.Exp(rng.NormFloat64()), fixed: rng.Float64(), w: rng.Float64()}
			for i := range r.a {
				if rng.IntN(2) == 0 {
					r.a[i] = rng.Float64()
				}
			}
			rows = append(rows, r)
			scaled = append(scaled, scaleRow(r, scale))
			w = append(w, r.w*rng.Float64())
		}
		up, atb := normalEquations(scaled, w, k)
		wantUp, wantAtb := make([]float64, k*k), make([]float64, k)
		v := make([]float64, k)
		for i, r := range rows {
			target := 1 - r.fixed/r.y
			for a := range v {
				v[a] = r.a[a] * scale[a] / r.y
			}
			for a, va := range v {
				if va == 0 {
					continue
				}
				wantAtb[a] += w[i] * va * target
				for b := a; b < k; b++ {
					if vb := v[b]; vb != 0 {
						wantUp[a*k+b] += w[i] * va * vb
					}
				}
			}
		}
		for i := range wantUp {
			if math.Float64bits(up[i]) != math.Float64bits(wantUp[i]) {
				t.Fatalf("k %d: upper triangle [%d] = %v, dense %v", k, i, up[i], wantUp[i])
			}
		}
		for i := range wantAtb {
			if math.Float64bits(atb[i]) != math.Float64bits(wantAtb[i]) {
				t.Fatalf("k %d: right-hand side [%d] = %v, dense %v", k, i, atb[i], wantAtb[i])
			}
		}
	}
}
