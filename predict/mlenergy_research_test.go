//go:build research

package predict

import (
	"math"
	"testing"

	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
)

// Every published H100 and B200 point of the sweep predicted by the
// embedded profile (no group of the profile ran these GPUs with these
// engines), with each GPU's median absolute and signed errors. The prompts'
// lengths are not published: 512 tokens assumed. It only reports:
// docs/accuracy.md quotes its log.
func TestMLEnergySweepHeldOut(t *testing.T) {
	sw := readSweep(t, "testdata/mlenergy-v3-lm-arena-chat.json")
	prof := defaultProfile(t)
	itl, tput := map[string][]float64{}, map[string][]float64{}
	for _, r := range sw.Rows {
		ei, et, ok := r.errors(t, prof)
		if !ok {
			continue
		}
		itl[r.GPU], tput[r.GPU] = append(itl[r.GPU], ei), append(tput[r.GPU], et)
		t.Logf("%-9s %-24s TP%d %4d in flight: median ITL %+5.0f%%, output tok/s %+5.0f%%", r.GPU, model.ShortName(r.Model), r.TP, r.MaxNumSeqs, 100*ei, 100*et)
	}
	for _, g := range []string{"H100-SXM", "B200"} {
		t.Logf("%s, %d points: median |error| (signed) median ITL %.1f%% (%+.1f%%), output tok/s %.1f%% (%+.1f%%)", g, len(itl[g]),
			100*medianAbs(itl[g]), 100*stats.Median(itl[g]), 100*medianAbs(tput[g]), 100*stats.Median(tput[g]))
	}
}

// The same harness's mixture-of-experts sweeps (testdata/
// mlenergy-v3-lm-arena-chat-moe.json, whose source field says where every
// number came from): Qwen3-30B-A3B at TP1–2, Qwen3-235B-A22B (BF16 and
// FP8) at TP2–8, Llama-4-Scout at TP4–8 and DeepSeek-V3.1 at TP8, on H100
// and B200, predicted by the embedded profile, which has no MoE group on
// either GPU with this engine. It only reports: docs/accuracy.md quotes
// its log.
func TestMLEnergyMoESweepHeldOut(t *testing.T) {
	sw := readSweep(t, "testdata/mlenergy-v3-lm-arena-chat-moe.json")
	prof := defaultProfile(t)
	type key struct {
		model, gpu string
		tp         int
	}
	var order []key
	itl, tput := map[key][]float64{}, map[key][]float64{}
	var allITL, allTput []float64
	for _, r := range sw.Rows {
		ei, et, ok := r.errors(t, prof)
		if !ok {
			continue
		}
		k := key{model.ShortName(r.Model), r.GPU, r.TP}
		if _, ok := itl[k]; !ok {
			order = append(order, k)
		}
		itl[k], tput[k] = append(itl[k], ei), append(tput[k], et)
		allITL, allTput = append(allITL, ei), append(allTput, et)
		t.Logf("%-9s %-36s TP%d %4d in flight: median ITL %6.2f ms (%+5.0f%%), output tok/s %+5.0f%%", r.GPU, k.model, r.TP, r.MaxNumSeqs, r.MedianITLMs, 100*ei, 100*et)
	}
	for _, k := range order {
		t.Logf("%-9s %-36s TP%d, %2d points: median ITL %+5.0f%%, output tok/s %+5.0f%% (signed medians)", k.gpu, k.model, k.tp, len(itl[k]), 100*stats.Median(itl[k]), 100*stats.Median(tput[k]))
	}
	t.Logf("every MoE point, %d: median |error| (signed) median ITL %.1f%% (%+.1f%%), output tok/s %.1f%% (%+.1f%%)", len(allITL),
		100*medianAbs(allITL), 100*stats.Median(allITL), 100*medianAbs(allTput), 100*stats.Median(allTput))
}

// medianAbs is the median of |x|.
func medianAbs(x []float64) float64 {
	a := make([]float64, len(x))
	for i, v := range x {
		a[i] = math.Abs(v)
	}
	return stats.Median(a)
}
