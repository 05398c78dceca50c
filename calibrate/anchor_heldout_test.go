package calibrate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// What one measured point on the GPU is worth: each deployment of seeds
// and corpus with three or more load points of one shape is fitted on its
// lightest load alone (capsim fit --from one result) and predicts its
// other loads, against the same points predicted with their GPU held out
// (fit --cv's leave-one-GPU-out folds: no point on that GPU at all).
// README.md (Accuracy) quotes its log.
func TestOnePointPerDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("fits every deployment of the corpus on one point")
	}
	recs, err := fixtures.CrossValidationRecords()
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	// Seeds and corpus fitted alike: the profile's groups and its pool.
	full := Profile{Schema: embedded.Schema, CostModel: embedded.CostModel, Groups: append(slices.Clone(embedded.Groups), embedded.Pool...)}
	groups, order, _ := preparePoints(recs, 0)
	blocks := map[string][]*point{}
	var keys []string
	for _, k := range order {
		for _, p := range groups[k] {
			if p.rec.System.GPU == "" || p.rec.System.Model == "" {
				continue
			}
			// One deployment at one shape (prompt and output lengths to 64 tokens).
			b := fmt.Sprintf("%s|%s|%s|%s|%s|%d:%d", p.rec.Source.File, p.rec.System.GPU, p.rec.System.Model, p.rec.System.Engine, p.topo, p.isl/64, p.osl/64)
			if _, ok := blocks[b]; !ok {
				keys = append(keys, b)
			}
			blocks[b] = append(blocks[b], p)
		}
	}
	ctx := context.Background()
	metrics := []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL}
	errs := map[string][2][]float64{} // one point, GPU held out
	deployments := 0
	for _, k := range keys {
		pts := blocks[k]
		if len(pts) < 3 {
			continue
		}
		deployments++
		anchor := 0 // the lightest load: the least measured request throughput
		for i, p := range pts {
			if r := p.meas[model.RequestThroughput]; r > 0 && (pts[anchor].meas[model.RequestThroughput] == 0 || r < pts[anchor].meas[model.RequestThroughput]) {
				anchor = i
			}
		}
		rest := slices.Delete(slices.Clone(pts), anchor, anchor+1)
		one, _, err := Fit(ctx, []results.Record{*pts[anchor].rec}, Options{}, func(Progress) {})
		if err != nil {
			t.Fatalf("%s: fitting its lightest load: %v", k, err)
		}
		gpu := model.CanonicalGPU(pts[anchor].rec.System.GPU)
		without := &Profile{Schema: full.Schema, CostModel: full.CostModel}
		for _, g := range full.Groups {
			if g.GPU != gpu {
				without.Groups = append(without.Groups, g)
			}
		}
		var held [2][]heldOut
		for i, prof := range []*Profile{one, without} {
			if held[i], err = predictHeldOut(ctx, prof, rest, Options{}); err != nil {
				t.Fatal(err)
			}
		}
		for j := range rest {
			a, h := held[0][j], held[1][j]
			if a.failure != "" || h.failure != "" {
				continue
			}
			for _, m := range metrics {
				want, ok := a.measured[m]
				if !ok || !(a.central[m] > 0) || !(h.central[m] > 0) {
					continue
				}
				e := errs[m]
				e[0] = append(e[0], 100*math.Abs(a.central[m]/want-1))
				e[1] = append(e[1], 100*math.Abs(h.central[m]/want-1))
				errs[m] = e
			}
		}
	}
	med := func(x []float64) float64 { x = slices.Clone(x); slices.Sort(x); return median(x) }
	line := fmt.Sprintf("%d deployments, median |error| of their other loads, one point fitted vs GPU held out:", deployments)
	for _, m := range metrics {
		line += fmt.Sprintf(" %s %.1f vs %.1f%% (%d);", m, med(errs[m][0]), med(errs[m][1]), len(errs[m][0]))
	}
	t.Log(line)
	for _, m := range []string{model.MeanTTFT, model.MeanTPOT} {
		if one, held := med(errs[m][0]), med(errs[m][1]); !(one < held) {
			t.Errorf("%s: %.1f%% from one point on the GPU, %.1f%% with none: the point should help", m, one, held)
		}
	}
}
