//go:build research

package calibrate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/capsim/capsim/fixtures"
)

// TestCompareProfiles predicts every seed and corpus record (as a
// hold-out predicts it: the record's GPU, model, engine, topology and
// settings, at the centre and both ±1σ band edges) from two profiles and
// fails where they differ by more than CAPSIM_COMPARE_TOL (default 0.005,
// 0.5%). It checks that a faster fit gives the profile the slower one gave:
//
//	CAPSIM_BASE_PROFILE=base.json CAPSIM_NEW_PROFILE=new.json \
//	  go test -tags research -count=1 -run TestCompareProfiles -v ./calibrate/
func TestCompareProfiles(t *testing.T) {
	basePath, newPath := os.Getenv("CAPSIM_BASE_PROFILE"), os.Getenv("CAPSIM_NEW_PROFILE")
	if basePath == "" || newPath == "" {
		t.Skip("set CAPSIM_BASE_PROFILE and CAPSIM_NEW_PROFILE to two profile files")
	}
	tol := 0.005
	if s := os.Getenv("CAPSIM_COMPARE_TOL"); s != "" {
		if _, err := fmt.Sscan(s, &tol); err != nil {
			t.Fatalf("CAPSIM_COMPARE_TOL=%q: %v", s, err)
		}
	}
	base, err := LoadProfile(basePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	next, err := LoadProfile(newPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := fixtures.CrossValidationRecords()
	if err != nil {
		t.Fatal(err)
	}
	groups, order, _ := preparePoints(recs, 0)
	var pts []*point
	for _, k := range order {
		for _, p := range groups[k] {
			if p.rec.System.GPU != "" && p.rec.System.Model != "" {
				pts = append(pts, p)
			}
		}
	}
	opts := Options{}.withRunner()
	a, err := predictHeldOut(context.Background(), base, pts, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := predictHeldOut(context.Background(), next, pts, opts)
	if err != nil {
		t.Fatal(err)
	}
	var diffs []float64
	compared, worst, worstAt := 0, 0.0, ""
	for i := range pts {
		if (a[i].failure == "") != (b[i].failure == "") {
			t.Errorf("record %s: base fails %q, new fails %q", pts[i].rec.ID, a[i].failure, b[i].failure)
			continue
		}
		for _, band := range []struct {
			name string
			x, y map[string]float64
		}{{"central", a[i].central, b[i].central}, {"low", a[i].lo, b[i].lo}, {"high", a[i].hi, b[i].hi}} {
			for _, m := range holdoutMetrics {
				x, okx := band.x[m]
				y, oky := band.y[m]
				if !okx && !oky {
					continue
				}
				d := math.Abs(y/x - 1)
				if !(x > 0) || !(y > 0) {
					d = math.Inf(1)
					if x == y {
						d = 0
					}
				}
				compared++
				diffs = append(diffs, d)
				if d > worst {
					worst, worstAt = d, pts[i].rec.ID+" "+band.name+" "+m
				}
				if d > tol {
					t.Errorf("record %s %s %s: base %.6g, new %.6g (%.2f%%)", pts[i].rec.ID, band.name, m, x, y, 100*d)
				}
			}
		}
	}
	sort.Float64s(diffs)
	if len(diffs) > 0 {
		t.Logf("%d records, %d predictions compared: median difference %.4f%%, max %.4f%% (%s)",
			len(pts), compared, 100*diffs[len(diffs)/2], 100*worst, worstAt)
	}
}

// TestCompareCVReports compares two `capsim fit --cv --format json`
// outputs row by row: every median and maximum APE of the series, the
// within-group folds and the cross-group hold-outs, and every coverage,
// and fails where they differ by more than CAPSIM_COMPARE_POINTS
// (default 0.5 percentage points; coverage in points of 100%):
//
//	CAPSIM_BASE_CV=base-cv.json CAPSIM_NEW_CV=new-cv.json \
//	  go test -tags research -count=1 -run TestCompareCVReports -v ./calibrate/
func TestCompareCVReports(t *testing.T) {
	basePath, newPath := os.Getenv("CAPSIM_BASE_CV"), os.Getenv("CAPSIM_NEW_CV")
	if basePath == "" || newPath == "" {
		t.Skip("set CAPSIM_BASE_CV and CAPSIM_NEW_CV to two fit --cv JSON outputs")
	}
	tol := 0.5
	if s := os.Getenv("CAPSIM_COMPARE_POINTS"); s != "" {
		if _, err := fmt.Sscan(s, &tol); err != nil {
			t.Fatalf("CAPSIM_COMPARE_POINTS=%q: %v", s, err)
		}
	}
	type cvOut struct {
		Series  []SeriesReport  `json:"series"`
		CV      []SeriesReport  `json:"cv"`
		Holdout []HoldoutReport `json:"holdout"`
	}
	read := func(path string) cvOut {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var o cvOut
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return o
	}
	a, b := read(basePath), read(newPath)
	var diffs []float64
	worst, worstAt := 0.0, ""
	cmpNum := func(at string, x, y float64) {
		d := math.Abs(x - y)
		diffs = append(diffs, d)
		if d > worst {
			worst, worstAt = d, at
		}
		if d > tol {
			t.Errorf("%s: base %.2f, new %.2f", at, x, y)
		}
	}
	cmpAPE := func(at string, x, y map[string]APE) {
		for m, ax := range x {
			ay, ok := y[m]
			if !ok {
				t.Errorf("%s: %s only in the base", at, m)
				continue
			}
			cmpNum(at+" "+m+" median", ax.Median, ay.Median)
			cmpNum(at+" "+m+" max", ax.Max, ay.Max)
		}
		if len(x) != len(y) {
			t.Errorf("%s: metrics %d in the base, %d new", at, len(x), len(y))
		}
	}
	for _, rows := range [][2][]SeriesReport{{a.Series, b.Series}, {a.CV, b.CV}} {
		if len(rows[0]) != len(rows[1]) {
			t.Fatalf("%d rows in the base, %d new", len(rows[0]), len(rows[1]))
		}
		for i, x := range rows[0] {
			y := rows[1][i]
			at := fmt.Sprintf("%s %s %s %g:%g %s", x.Source, x.GPU, x.Topology, x.ISL, x.OSL, x.Holdout)
			if x.Source != y.Source || x.Topology != y.Topology || x.Points != y.Points || x.Holdout != y.Holdout {
				t.Errorf("row %d: base %s (%d points), new %s %s (%d points)", i, at, x.Points, y.Source, y.Topology, y.Points)
				continue
			}
			cmpAPE(at, x.APE, y.APE)
		}
	}
	if len(a.Holdout) != len(b.Holdout) {
		t.Fatalf("%d hold-out rows in the base, %d new", len(a.Holdout), len(b.Holdout))
	}
	for i, x := range a.Holdout {
		y := b.Holdout[i]
		at := x.Kind + " " + x.Fold
		if x.Kind != y.Kind || x.Fold != y.Fold || x.Points != y.Points || x.Failed != y.Failed {
			t.Errorf("hold-out row %d: base %s (%d points, %d failed), new %s %s (%d, %d)", i, at, x.Points, x.Failed, y.Kind, y.Fold, y.Points, y.Failed)
			continue
		}
		cmpAPE(at, x.APE, y.APE)
		for m, cx := range x.Coverage {
			cmpNum(at+" coverage "+m, 100*cx, 100*y.Coverage[m])
		}
	}
	sort.Float64s(diffs)
	if len(diffs) > 0 {
		t.Logf("%d numbers compared: median difference %.3f points, max %.3f (%s)", len(diffs), diffs[len(diffs)/2], worst, worstAt)
	}
}
