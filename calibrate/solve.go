package calibrate

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// solveRidge solves a·x = b for stage 1's k×k normal equations (a full,
// row-major and symmetric; overwritten) by the LAPACK calls gonum's
// VecDense.SolveVec makes (Lange, Getrf, Getrs), so x is SolveVec's to
// the bit, and fails where SolveVec does: a zero pivot, or an estimated
// condition number above mat.ConditionTolerance.
//
// The estimate (Gecon) was most of stage 1's solves, and is skipped when
// a bound shows it far below the tolerance: a is a Gram matrix of rows
// rows plus a ridge of at least minRidge on every diagonal entry (a pinned
// unknown's row and column are the identity's), so its smallest eigenvalue
// is at least min(minRidge, 1) less the sums' rounding, and its condition
// at most ‖a‖∞·√k over that.
func solveRidge(a []float64, k int, b []float64, rows int, minRidge float64) ([]float64, error) {
	g := blas64.General{Rows: k, Cols: k, Stride: k, Data: a}
	anorm := lapack64.Lange(mat.CondNorm, g, make([]float64, k))
	ipiv := make([]int, k)
	if !lapack64.Getrf(g, ipiv) {
		return nil, mat.Condition(math.Inf(1))
	}
	const eps = 0x1p-52
	low := math.Min(minRidge, 1) - 2*float64(k*(rows+2))*eps*anorm
	if !(low > 0 && anorm*math.Sqrt(float64(k))/low <= condBound) {
		v := lapack64.Gecon(mat.CondNorm, g, anorm, make([]float64, 4*k), make([]int, k))
		if c := 1 / v; c > mat.ConditionTolerance {
			return nil, mat.Condition(c)
		}
	}
	x := append([]float64(nil), b...)
	lapack64.Getrs(blas.NoTrans, g, blas64.General{Rows: k, Cols: 1, Stride: 1, Data: x}, ipiv)
	return x, nil
}

// condBound is the largest bound on the condition number that skips the
// estimate: ten thousand times below mat.ConditionTolerance, room for
// the estimate's own rounding on the factors.
const condBound = mat.ConditionTolerance / 1e4
