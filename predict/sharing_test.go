package predict

import (
	"context"
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// The synthetic inference-perf run's records carry their shared-prefix
// workload into validation: each stage is simulated with the replica's
// prefix cache (vLLM V1: on by default), which serves most of every
// prompt, and its TTFT falls below the same records' without sharing.
func TestRecordsSimulateInferencePerfSharing(t *testing.T) {
	prof := defaultProfile(t)
	recs, err := results.LoadFiles([]string{"../results/testdata/inference-perf/stage_0_lifecycle_metrics.json", "../results/testdata/inference-perf/stage_1_lifecycle_metrics.json"})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := model.ParseTopology("1xTP4")
	if err != nil {
		t.Fatal(err)
	}
	plain := make([]results.Record, len(recs))
	for i := range recs {
		recs[i].System.GPU, recs[i].System.GPUCount, recs[i].System.Engine, recs[i].System.Topology = "H20", 4, "vllm-0.10.1", topo
		if !recs[i].Workload.Sharing.On() {
			t.Fatalf("record %s carries no sharing", recs[i].ID)
		}
		plain[i] = recs[i]
		plain[i].Workload.Sharing = model.Sharing{}
	}
	shared, err := Records(context.Background(), prof, recs, nil, RecordOptions{NumPrompts: 200})
	if err != nil {
		t.Fatal(err)
	}
	unshared, err := Records(context.Background(), prof, plain, nil, RecordOptions{NumPrompts: 200})
	if err != nil {
		t.Fatal(err)
	}
	for i := range shared {
		s, u := shared[i], unshared[i]
		if s.Err != nil || u.Err != nil {
			t.Fatalf("record %d: %v / %v", i, s.Err, u.Err)
		}
		if !(s.PrefixHitRate > 0.5) || u.PrefixHitRate != 0 {
			t.Errorf("stage %d: simulated hit rate %v shared, %v unshared", i, s.PrefixHitRate, u.PrefixHitRate)
		}
		if a, b := s.Metrics[model.MeanTTFT], u.Metrics[model.MeanTTFT]; !(a < 0.7*b) {
			t.Errorf("stage %d: mean TTFT %.1f ms shared, %.1f ms unshared", i, a, b)
		}
	}
}
