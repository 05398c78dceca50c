package calibrate

import (
	"context"
	"math"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
)

// TestStage1CostsKeptArePriced: a point's rows from the worker costs a
// stage-1 pass kept (env.kept, built at other split coefficients) are
// the rows of freshly built costs, bit for bit, on every seed group.
func TestStage1CostsKeptArePriced(t *testing.T) {
	ctx := context.Background()
	kept := 0
	for _, sg := range seedGroups(t) {
		key, pts, settings, c, e := sg.key, sg.pts, sg.settings, sg.c, sg.e
		l := layoutOf(pts)
		prior := priorParams(l, c.gpu, deployed(c.llm, settings), pts, settings, key.engine)
		// Another pass's split: compute and weight moved apart.
		other := map[string]model.Coeffs{}
		for r, co := range prior.coeffs {
			co.Compute *= 3
			co.Weight /= 2
			other[r] = co
		}
		for _, p := range pts {
			cached := e.forPoint(p)
			cached.kept = newKeptShapes()
			cached.at = other
			if _, err := rowsFor(ctx, cached, l, p); err != nil {
				t.Fatal(err)
			}
			cached.at = prior.coeffs
			got, err := rowsFor(ctx, cached, l, p)
			if err != nil {
				t.Fatal(err)
			}
			fresh := e.forPoint(p)
			fresh.at = prior.coeffs
			want, err := rowsFor(ctx, fresh, l, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d rows, fresh %d", key, p.rec.ID, len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				same := g.y == w.y && g.w == w.w && math.Float64bits(g.fixed) == math.Float64bits(w.fixed) && len(g.a) == len(w.a)
				for j := 0; same && j < len(w.a); j++ {
					same = math.Float64bits(g.a[j]) == math.Float64bits(w.a[j])
				}
				if !same {
					t.Fatalf("%s %s row %d (%s): kept costs give %+v, fresh %+v", key, p.rec.ID, i, w.what, g, w)
				}
			}
			kept += len(cached.kept.costs)
		}
	}
	if kept == 0 {
		t.Fatal("no worker cost was kept")
	}
}

// TestKeptShapesPriceAsFresh: a point's simulator configuration priced
// from the shapes a refinement kept (keptEnvs, first priced at other
// coefficients) is the one priced afresh, value for value (configKey).
func TestKeptShapesPriceAsFresh(t *testing.T) {
	kept := 0
	for _, sg := range seedGroups(t) {
		key, pts, settings, c, e := sg.key, sg.pts, sg.settings, sg.c, sg.e
		prm := priorParams(layoutOf(pts), c.gpu, deployed(c.llm, settings), pts, settings, key.engine)
		other := prm.clone()
		for r, co := range other.coeffs {
			co.Overhead *= 2
			co.Compute *= 3
			other.coeffs[r] = co
		}
		envs := keptEnvs(e, pts)
		for i, p := range pts {
			if _, err := envs[i].deployment(other, p.topo); err != nil {
				continue // a shape this candidate cannot hold
			}
			got, err := envs[i].deployment(prm, p.topo)
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.forPoint(p).deployment(prm, p.topo)
			if err != nil {
				t.Fatal(err)
			}
			if configKey(got.Config) != configKey(want.Config) {
				t.Fatalf("%s %s: kept shapes price %+v, afresh %+v", key, p.rec.ID, got.Config, want.Config)
			}
			kept += len(envs[i].kept.costs)
		}
	}
	if kept == 0 {
		t.Fatal("no worker shape was kept")
	}
}

// seedGroup is one fitted group of the seeds as stage 1 sees it: its
// points, settings, first candidate and environment.
type seedGroup struct {
	key      groupKey
	pts      []*point
	settings engine.Settings
	c        candidate
	e        env
}

func seedGroups(t *testing.T) []seedGroup {
	t.Helper()
	recs, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	groups, order, _ := preparePoints(recs, 0)
	var out []seedGroup
	for _, key := range order {
		pts := groups[key]
		cands, _, err := candidates(key, pts)
		if err != nil || len(cands) == 0 {
			continue
		}
		settings := settingsFrom(key.engine, pts)
		settings.KVCacheGiB = 0
		c := cands[0]
		out = append(out, seedGroup{key, pts, settings, c, env{gpu: c.gpu.AcrossNodes(settings.Nodes), llm: c.llm, settings: settings, engine: engine.Parse(key.engine)}})
	}
	return out
}
