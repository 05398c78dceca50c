package calibrate

import (
	"math"
	"testing"

	"github.com/capsim/capsim/model"
)

// A role's GEMM split settles when its solution's compute-to-weight ratio
// is within splitTolerance (in log) of the ratio its rows were split with,
// for every role; a ratio that is not positive never settles.
func TestSplitSettled(t *testing.T) {
	at := map[string]model.Coeffs{RolePrefill: {Compute: 1.5, Weight: 1.2}, RoleDecode: {Compute: 2, Weight: 1}}
	roles := []string{RolePrefill, RoleDecode}
	for _, c := range []struct {
		name     string
		solution map[string]model.Coeffs
		want     bool
	}{
		{"same ratio, other levels", map[string]model.Coeffs{RolePrefill: {Compute: 3, Weight: 2.4}, RoleDecode: {Compute: 4, Weight: 2}}, true},
		{"within tolerance", map[string]model.Coeffs{RolePrefill: {Compute: 1.5 * math.Exp(0.9*splitTolerance), Weight: 1.2}, RoleDecode: {Compute: 2, Weight: 1}}, true},
		{"one role beyond tolerance", map[string]model.Coeffs{RolePrefill: {Compute: 1.5, Weight: 1.2}, RoleDecode: {Compute: 2 * math.Exp(1.1*splitTolerance), Weight: 1}}, false},
		{"zero weight", map[string]model.Coeffs{RolePrefill: {Compute: 1.5, Weight: 0}, RoleDecode: {Compute: 2, Weight: 1}}, false},
		{"NaN compute", map[string]model.Coeffs{RolePrefill: {Compute: math.NaN(), Weight: 1.2}, RoleDecode: {Compute: 2, Weight: 1}}, false},
		{"role missing", map[string]model.Coeffs{RolePrefill: {Compute: 1.5, Weight: 1.2}}, false},
	} {
		if got := splitSettled(at, c.solution, roles); got != c.want {
			t.Errorf("%s: settled %v, want %v", c.name, got, c.want)
		}
	}
}

// Each pass moves every role's compute and weight coefficients halfway
// (geometric mean) to the solution's and leaves the other coefficients and
// roles as they were, without changing the map it was given.
func TestSplitBetween(t *testing.T) {
	at := map[string]model.Coeffs{
		RoleAggregated: {Overhead: 0.002, Compute: 1, Weight: 4, KV: 1.5},
		RolePrefill:    {Compute: 9, Weight: 1}, // not among the roles passed: untouched
	}
	solution := map[string]model.Coeffs{RoleAggregated: {Overhead: 0.001, Compute: 4, Weight: 1, KV: 3}}
	got := splitBetween(at, solution, []string{RoleAggregated})
	want := model.Coeffs{Overhead: 0.002, Compute: 2, Weight: 2, KV: 1.5}
	if g := got[RoleAggregated]; math.Abs(g.Compute-want.Compute) > 1e-12 || math.Abs(g.Weight-want.Weight) > 1e-12 || g.Overhead != want.Overhead || g.KV != want.KV {
		t.Errorf("aggregated: %+v, want %+v", g, want)
	}
	if got[RolePrefill] != at[RolePrefill] {
		t.Errorf("prefill changed: %+v", got[RolePrefill])
	}
	if at[RoleAggregated].Compute != 1 || at[RoleAggregated].Weight != 4 {
		t.Errorf("the given map was changed: %+v", at[RoleAggregated])
	}
	// The ratio moves halfway in log: from 1/4 towards 4/1, to 1.
	if r := splitRatio(got[RoleAggregated]); math.Abs(r-1) > 1e-12 {
		t.Errorf("ratio %v, want 1", r)
	}
}
