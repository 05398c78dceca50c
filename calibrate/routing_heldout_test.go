package calibrate

import (
	"fmt"
	"maps"
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// TestHeldOutRoutingVLLMUnderLoad asks how seed 004's vLLM 4xTP4 runs
// spread requests over their four replicas, which the source does not say.
// Each vLLM group is fitted on its decode-heavy series (1000:1000 and
// 500:1000) with the records' router set to round-robin (capsim's
// assumption) or random (a connection-level balancer such as a Kubernetes
// Service, which vLLM 0.8/0.9's benchmark client, opening a connection per
// request, would meet), then predicts the prefill-heavy 2500:100 and
// 3000:150 series at concurrency 32–128 (issue 12's target).
//
// p99 TPOT is never fitted, so it tells the routers apart: a balanced
// router cannot give some requests two to three times the mean TPOT, as
// these runs measured; a replica that random routing loads more than the
// others does. Random routing also brings mean TTFT closer. It costs
// request throughput and E2E (the simulated replicas are already slower
// than measured at these loads, and imbalance idles some of them), which is
// why it is not the default yet. Print the numbers with
//
//	go test -v -run TestHeldOutRoutingVLLMUnderLoad ./calibrate/
func TestHeldOutRoutingVLLMUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("four fits of one group each: about 4 s of CPU")
	}
	metrics := []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL, model.P99TTFT, model.P99TPOT}
	for _, engine := range []string{"vllm-0.8.4", "vllm-0.9.0.1"} {
		median := map[string]map[string]float64{}
		for _, router := range []string{"round-robin", "random"} {
			prof, held := predictPrefillHeavy(t, engine, func(r *results.Record) {
				r.System.Settings = maps.Clone(r.System.Settings)
				if r.System.Settings == nil {
					r.System.Settings = map[string]string{}
				}
				r.System.Settings["router"] = router
			})
			if got := prof.Groups[0].Settings.Router; got != router {
				t.Fatalf("%s: fitted group router %q, want %q", engine, got, router)
			}
			median[router] = map[string]float64{}
			line := ""
			for _, m := range metrics {
				med, _ := heldOutErrors(t, held, m)
				median[router][m] = med
				line += fmt.Sprintf(" %s %.1f%%", m, 100*med)
			}
			t.Logf("%s, %s routing, %d held-out points, median |error|:%s", engine, router, len(held), line)
		}
		rr, rnd := median["round-robin"], median["random"]
		if !(rnd[model.P99TPOT] < rr[model.P99TPOT]/2) {
			t.Errorf("%s: held-out p99 TPOT median |error| %.1f%% with random routing, %.1f%% with round-robin: imbalance no longer explains the TPOT tail",
				engine, 100*rnd[model.P99TPOT], 100*rr[model.P99TPOT])
		}
		if !(rnd[model.MeanTTFT] < rr[model.MeanTTFT]) {
			t.Errorf("%s: held-out mean TTFT median |error| %.1f%% with random routing, %.1f%% with round-robin",
				engine, 100*rnd[model.MeanTTFT], 100*rr[model.MeanTTFT])
		}
	}
}
