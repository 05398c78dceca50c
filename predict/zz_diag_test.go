package predict

import (
	"math"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/model"
)

func TestZZDynamoRows(t *testing.T) {
	for _, heldTP := range []int{4, 1} {
		prof, test := heldOutProfile(t, heldTP)
		for _, r := range test {
			sh := Shape{int(math.Round(r.Workload.ISL)), int(math.Round(r.Workload.OSL))}
			p := replayAt(t, prof, calibrate.Target{GPU: "H20", Model: qwen32, Engine: "dynamo", Topology: r.System.Topology}, sh, r.Workload.NumPrompts, r.Workload.Load)
			w, _ := r.Metric(model.MeanTTFT)
			w2, _ := r.Metric(model.MeanTPOT)
			t.Logf("TP%d %s %v %s ttft %.0f/%.0f (%+.0f%%) tpot %.1f/%.1f (%+.0f%%)", heldTP, r.System.Topology, sh, r.Workload.Load, metric(p, 0, model.MeanTTFT), w, 100*(metric(p, 0, model.MeanTTFT)/w-1), metric(p, 0, model.MeanTPOT), w2, 100*(metric(p, 0, model.MeanTPOT)/w2-1))
		}
	}
}
