//go:build research

package calibrate

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
)

// How much of the leave-one-GPU-out error is one offset per source and
// GPU: every point of seeds and corpus is predicted with its GPU's groups
// left out (as fit --cv's leave-one-GPU-out folds do) and from the full
// profile (fit --cv's in-sample row). Within each block of one source file
// on one GPU (dense and mixture-of-experts models apart) with three or
// more points, dividing the held-out predictions
// by the block's median ratio to measured leaves the scatter that no price
// carried to that GPU could remove, since every point of a block shares
// its GPU, model family, host and client. docs/accuracy.md
// (sixteenth pass) quotes its log.
func TestHeldOutByGPUSourceOffsets(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates every point of the corpus twice")
	}
	inSample, held := heldOutByGPU(t)
	type block struct {
		file, gpu string
		moe       bool // a file can mix dense and mixture-of-experts models
	}
	ratios := map[string]map[block][]float64{} // metric → block → held-out predicted ÷ measured
	inErr := map[string]map[block][]float64{}  // the same points' in-sample |error| (%)
	for _, m := range holdoutMetrics {
		ratios[m], inErr[m] = map[block][]float64{}, map[block][]float64{}
	}
	for _, gpu := range slices.Sorted(maps.Keys(held)) {
		for _, h := range held[gpu] {
			own, ok := inSample[h.p]
			if h.failure != "" || !ok {
				continue
			}
			b := block{h.p.rec.Source.File, gpu, isMoE(recordModel(h.p.rec))}
			for _, m := range holdoutMetrics {
				want, measured := h.p.meas[m]
				if !measured || want <= 0 || h.central[m] <= 0 || own[m] <= 0 {
					continue
				}
				ratios[m][b] = append(ratios[m][b], h.central[m]/want)
				inErr[m][b] = append(inErr[m][b], pct(want, own[m]))
			}
		}
	}
	// Each subset with the least it must hold: the corpus's points and blocks.
	subsets := []struct {
		name              string
		keep              func(block) bool
		minPoints, blocks int
	}{
		{"every model", func(block) bool { return true }, 300, 25},
		{"dense models", func(b block) bool { return !b.moe }, 300, 25},
		{"mixture of experts", func(b block) bool { return b.moe }, 100, 8},
	}
	for _, m := range []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT} {
		for _, sub := range subsets {
			var raw, offset, self []float64
			blocks := 0
			for b, rs := range ratios[m] {
				if len(rs) < 3 || !sub.keep(b) {
					continue
				}
				blocks++
				mid := median(rs)
				for i, r := range rs {
					raw = append(raw, pct(1, r))
					offset = append(offset, pct(mid, r))
					self = append(self, inErr[m][b][i])
				}
			}
			t.Logf("%-18s %-18s %3d points in %2d blocks of 3+ (source file, GPU), median |error|: GPU held out %5.1f%%, less each block's median offset %5.1f%%, in-sample %5.1f%%",
				m, sub.name, len(raw), blocks, median(raw), median(offset), median(self))
			if len(raw) < sub.minPoints || blocks < sub.blocks {
				t.Fatalf("%s, %s: %d points in %d blocks, want the corpus's %d or more in %d or more", m, sub.name, len(raw), blocks, sub.minPoints, sub.blocks)
			}
			if !(median(offset) < median(raw)) {
				t.Errorf("%s, %s: the per-block offsets should explain part of the held-out error: %.1f%% left of %.1f%%", m, sub.name, median(offset), median(raw))
			}
		}
	}
}

// heldOutByGPU predicts every point of seeds and corpus that names its GPU
// and model twice: from the full profile (fit --cv's in-sample row; the
// points that price) and, GPU by GPU, with that GPU's groups left out (as
// fit --cv's leave-one-GPU-out folds do).
func heldOutByGPU(t *testing.T) (inSample map[*point]map[string]float64, held map[string][]heldOut) {
	t.Helper()
	recs, err := fixtures.CrossValidationRecords()
	if err != nil {
		t.Fatal(err)
	}
	full := corpusProfile(t)
	groups, order, _ := preparePoints(recs, 0)
	byGPU := map[string][]*point{}
	var all []*point
	for _, k := range order {
		for _, p := range groups[k] {
			if p.rec.System.GPU == "" || p.rec.System.Model == "" {
				continue
			}
			gpu := model.CanonicalGPU(p.rec.System.GPU)
			byGPU[gpu] = append(byGPU[gpu], p)
			all = append(all, p)
		}
	}
	ctx := context.Background()
	in, err := predictHeldOut(ctx, full, all, Options{})
	if err != nil {
		t.Fatal(err)
	}
	inSample = map[*point]map[string]float64{}
	for _, h := range in {
		if h.failure == "" {
			inSample[h.p] = h.central
		}
	}
	held = map[string][]heldOut{}
	for _, gpu := range slices.Sorted(maps.Keys(byGPU)) {
		hs, err := predictHeldOut(ctx, full.without(func(g *Group) bool { return g.GPU == gpu }), byGPU[gpu], Options{})
		if err != nil {
			t.Fatal(err)
		}
		held[gpu] = hs
	}
	return inSample, held
}

// pct is model.AbsPctError of a pair the callers checked positive.
func pct(measured, predicted float64) float64 {
	e, _ := model.AbsPctError(measured, predicted)
	return e
}
