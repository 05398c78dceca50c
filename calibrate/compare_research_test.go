//go:build research

package calibrate

import (
	"context"
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
