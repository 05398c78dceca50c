//go:build research

package predict

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/workload"
)

// mlEnergySweep is testdata/mlenergy-v3-lm-arena-chat.json or its -moe
// twin: ML.ENERGY's published dense-model or mixture-of-experts sweeps on
// H100 and B200 (the source field says where every number came from).
type mlEnergySweep struct {
	Source string        `json:"source"`
	Rows   []mlEnergyRow `json:"rows"`
}

// mlEnergyRow is one published configuration: a model on TP GPUs kept at
// MaxNumSeqs in flight.
type mlEnergyRow struct {
	Model        string  `json:"model"`
	GPU          string  `json:"gpu"`
	TP           int     `json:"tp"`
	MaxNumSeqs   int     `json:"max_num_seqs"`
	AvgOutputLen float64 `json:"avg_output_len"`
	MedianITLMs  float64 `json:"median_itl_ms"`
	OutputTokS   float64 `json:"output_throughput"`
}

// errors predicts r from prof as a closed loop of its MaxNumSeqs (512-token
// prompts assumed: the lengths are not published) and returns the median
// ITL's and output throughput's relative errors; ok is false, with the
// test marked failed, when it cannot be predicted.
func (r mlEnergyRow) errors(t *testing.T, prof *calibrate.Profile) (itl, tput float64, ok bool) {
	tgt := mlEnergyTarget(t, mustGPU(t, r.GPU), r.Model, r.TP, r.MaxNumSeqs)
	p, err := tryPredict(prof, tgt, workload.Workload{ISL: 512, OSL: int(math.Round(r.AvgOutputLen))}, 4*r.MaxNumSeqs, model.Closed(r.MaxNumSeqs))
	if err != nil {
		t.Errorf("%s %s TP%d at %d: %v", r.GPU, model.ShortName(r.Model), r.TP, r.MaxNumSeqs, err)
		return 0, 0, false
	}
	return metric(p, 0, model.MedianITL)/r.MedianITLMs - 1, metric(p, 0, model.OutputThroughput)/r.OutputTokS - 1, true
}

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

// readSweep reads one of the ML.ENERGY sweep files of testdata.
func readSweep(t *testing.T, path string) mlEnergySweep {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sw mlEnergySweep
	if err := json.Unmarshal(raw, &sw); err != nil {
		t.Fatal(err)
	}
	return sw
}

// medianAbs is the median of |x|.
func medianAbs(x []float64) float64 {
	a := make([]float64, len(x))
	for i, v := range x {
		a[i] = math.Abs(v)
	}
	return stats.Median(a)
}
