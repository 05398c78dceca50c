//go:build research

package calibrate

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

// ownTPExcess names the sources whose dense TP2–8 runs are priced far
// faster held out than measured while their own fits explain them, each
// in a different term: seed 004's H20 groups (`unexplained` 1.7–8 ms a
// step), dennislee22's Kubernetes pods joined by Ray (collectives at 5.3×
// the catalog for its Qwen2-7B group, 12.8 ms a step of overhead for its
// Qwen2.5-32B group) and dstack's ROCm vLLM 0.6.3 on MI300X (4.5× the
// collectives, 2× the weight reads). docs/accuracy.md gives the figures.
var ownTPExcess = []string{"004_40ae512a668d8e46", "b-dennislee-a100-qwen", "c-dstack-mi300x"}

// Whether dense tensor-parallel decode is priced too fast on GPUs the fit
// never saw, or a few deployments are slower than the physics: every
// point predicted with its GPU's groups left out, dense models' signed
// errors split by the decoding worker's TP (docs/accuracy.md's table) and
// TP2–8's TPOT by source. Away from ownTPExcess the TP2–8 TPOT must stay
// within ±15% and three times closer to zero than each of theirs: a step
// cost every TP>1 deployment pays but the pricing leaves out would show
// there too. ±15% rather than tighter because the catalog prices PCIe
// hosts with peer-to-peer (5–6 µs at TP2) and the corpus's PCIe pairs,
// in a cloud, may have had none (docs/accuracy.md).
func TestHeldOutDenseTPBySource(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates every point of the corpus twice")
	}
	_, held := heldOutByGPU(t)
	type key struct {
		wide   bool // the decoding worker's TP is 2 or more
		metric string
	}
	signed := map[key][]float64{}
	points := map[bool]int{}
	bySource := map[string][]float64{} // TP2–8 TPOT, signed %
	own := map[string][]float64{}      // the same by ownTPExcess entry
	var rest []float64
	for _, gpu := range slices.Sorted(maps.Keys(held)) {
		for _, h := range held[gpu] {
			if h.failure != "" || isMoE(recordModel(h.p.rec)) {
				continue
			}
			wide := decodeTP(h.p.topo) >= 2
			points[wide]++
			for _, m := range []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT} {
				e, ok := heldSignedPct(h, m)
				if !ok {
					continue
				}
				signed[key{wide, m}] = append(signed[key{wide, m}], e)
				if wide && m == model.MeanTPOT {
					src := path.Base(h.p.rec.Source.File)
					bySource[src] = append(bySource[src], e)
					if i := slices.IndexFunc(ownTPExcess, func(s string) bool { return strings.Contains(src, s) }); i >= 0 {
						own[ownTPExcess[i]] = append(own[ownTPExcess[i]], e)
					} else {
						rest = append(rest, e)
					}
				}
			}
		}
	}
	for _, wide := range []bool{false, true} {
		which := "dense, TP1  "
		if wide {
			which = "dense, TP2–8"
		}
		line := ""
		for _, m := range []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT} {
			e := signed[key{wide, m}]
			line += fmt.Sprintf(" %s %s,", m, signedAbs(e))
		}
		t.Logf("%s (%d points):%s", which, points[wide], strings.TrimSuffix(line, ","))
	}
	srcs := slices.SortedFunc(maps.Keys(bySource), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(bySource[b]), len(bySource[a])), strings.Compare(a, b))
	})
	for _, s := range srcs {
		t.Logf("  TP2–8 TPOT %-52s %3d points %s", s, len(bySource[s]), signedAbs(bySource[s]))
	}
	for _, s := range ownTPExcess {
		t.Logf("TP2–8 TPOT, %-25s %3d points %s", s+":", len(own[s]), signedAbs(own[s]))
	}
	t.Logf("TP2–8 TPOT, every other source:   %3d points %s", len(rest), signedAbs(rest))
	if len(rest) < 30 {
		t.Fatalf("only %d TP2–8 TPOT points outside %v, want 30 or more", len(rest), ownTPExcess)
	}
	m := median(rest)
	if m < -15 || m > 15 {
		t.Errorf("TP2–8 TPOT outside %v: median signed error %+.0f%%, want within ±15%%", ownTPExcess, m)
	}
	for _, s := range ownTPExcess {
		if o := median(own[s]); math.Abs(o) < 3*math.Abs(m) {
			t.Errorf("TP2–8 TPOT of %s: median signed error %+.0f%%, not three times the other sources' %+.0f%%", s, o, m)
		}
	}
}

// decodeTP is the TP of the workers that decode: the decode pool's when
// the deployment is disaggregated, else the replicas'.
func decodeTP(t model.Topology) int {
	if t.Disaggregated() {
		return t.Decode.TP
	}
	return t.Replicas.TP
}

// heldSignedPct is h's signed % error on metric m, false where the
// record measured none or either value is not positive.
func heldSignedPct(h heldOut, m string) (float64, bool) {
	want, ok := h.p.meas[m]
	if !ok || want <= 0 || h.central[m] <= 0 {
		return 0, false
	}
	return 100 * (h.central[m]/want - 1), true
}

// signedAbs prints the median signed and absolute % errors of e.
func signedAbs(e []float64) string {
	if len(e) == 0 {
		return "–"
	}
	abs := make([]float64, len(e))
	for i, v := range e {
		abs[i] = max(v, -v)
	}
	return fmt.Sprintf("%+.0f / %.0f%%", median(e), median(abs))
}
