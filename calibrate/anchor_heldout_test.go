//go:build research

package calibrate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// What one measured point on the GPU is worth: each deployment of seeds
// and corpus with load points at three or more loads of one shape is
// fitted on its lightest load alone (capsim fit --from one result) and
// predicts its points at other loads, against the same points predicted
// with their GPU held out (fit --cv's leave-one-GPU-out folds: no point on
// that GPU at all). Repeat runs at the anchor's own load are not
// predicted: they would test repeatability, not transfer across loads.
// README.md (Accuracy) quotes its log.
func TestOnePointPerDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("fits every deployment of the corpus on one point")
	}
	recs, err := fixtures.CrossValidationRecords()
	if err != nil {
		t.Fatal(err)
	}
	full := corpusProfile(t)
	groups, order, _ := preparePoints(recs, 0)
	blocks := map[string][]*point{}
	var keys []string
	for _, k := range order {
		for _, p := range groups[k] {
			if p.rec.System.GPU == "" || p.rec.System.Model == "" {
				continue
			}
			// One deployment (its topology and engine settings) at one shape
			// (prompt and output lengths to 64 tokens).
			b := fmt.Sprintf("%s|%s|%s|%s|%s|%d:%d", p.rec.Source.File, p.rec.System.GPU, p.rec.System.Model, p.rec.System.Engine, p.config, p.w.ISL/64, p.w.OSL/64)
			if _, ok := blocks[b]; !ok {
				keys = append(keys, b)
			}
			blocks[b] = append(blocks[b], p)
		}
	}
	ctx := context.Background()
	metrics := []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL}
	errs := map[string][2][]float64{} // one point, GPU held out
	deployments := map[string]bool{}  // that gave a compared point
	for _, k := range keys {
		pts := blocks[k]
		anchor := slices.MinFunc(pts, compareLoads)
		var rest []*point
		loads := map[model.Load]bool{anchor.w.Load: true}
		for _, p := range pts {
			if p.w.Load != anchor.w.Load {
				rest = append(rest, p)
				loads[p.w.Load] = true
			}
		}
		if len(loads) < 3 {
			continue
		}
		one, _, err := Fit(ctx, []results.Record{*anchor.rec}, Options{}, func(Progress) {})
		if err != nil {
			t.Fatalf("%s: fitting its lightest load: %v", k, err)
		}
		gpu := model.CanonicalGPU(anchor.rec.System.GPU)
		var held [2][]heldOut
		for i, prof := range []*Profile{one, full.without(func(g *Group) bool { return g.GPU == gpu })} {
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
				e[0] = append(e[0], pct(want, a.central[m]))
				e[1] = append(e[1], pct(want, h.central[m]))
				errs[m] = e
				deployments[k] = true
			}
		}
	}
	line := fmt.Sprintf("%d deployments, median |error| at their other loads, one point fitted vs GPU held out:", len(deployments))
	for _, m := range metrics {
		line += fmt.Sprintf(" %s %.1f vs %.1f%% (%d points);", m, median(errs[m][0]), median(errs[m][1]), len(errs[m][0]))
	}
	t.Log(line)
	for _, m := range []string{model.MeanTTFT, model.MeanTPOT} {
		if one, held := median(errs[m][0]), median(errs[m][1]); !(one < held) {
			t.Errorf("%s: %.1f%% from one point on the GPU, %.1f%% with none: the point should help", m, one, held)
		}
	}
}

// compareLoads orders two points of one deployment by how heavy their
// load is: closed loops by concurrency, open loops by rate, bursts by
// their prompts; loads of different kinds by measured request rate.
func compareLoads(a, b *point) int {
	if a.w.Load.Kind == b.w.Load.Kind {
		switch a.w.Load.Kind {
		case model.ClosedLoop:
			return a.w.Load.Concurrency - b.w.Load.Concurrency
		case model.OpenLoop:
			return cmp.Compare(a.w.Load.Rate, b.w.Load.Rate)
		case model.Burst:
			return a.w.NumPrompts - b.w.NumPrompts
		}
	}
	return cmp.Compare(a.meas[model.RequestThroughput], b.meas[model.RequestThroughput])
}
