package calibrate

import (
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// A record's shared-prefix workload reaches the workload the fit
// simulates it with, and the replicas of an engine with prefix caching on
// (vLLM V1) cache it; a stated --no-enable-prefix-caching turns it off.
func TestFitPointsCarrySharing(t *testing.T) {
	topo, err := model.ParseTopology("1xTP4")
	if err != nil {
		t.Fatal(err)
	}
	sh := model.Sharing{Groups: 4, PromptsPerGroup: 8, SharedLen: 1024}
	rec := results.Record{ID: "ip:1", Source: results.Source{File: "stage_0_lifecycle_metrics.json", Line: 1, Format: results.FormatInferencePerf},
		System:   results.System{GPU: "H20", GPUCount: 4, Model: "Qwen/Qwen3-32B", Engine: "vllm-0.10.1", Topology: topo},
		Workload: results.Workload{ISL: 1536, OSL: 64, Load: model.Open(2, 1), NumPrompts: 100, Sharing: sh},
		Metrics:  map[string]float64{model.MeanTTFT: 100, model.MeanTPOT: 15}, Completed: 100}
	groups, keys, _ := preparePoints([]results.Record{rec}, 0)
	if len(keys) != 1 || len(groups[keys[0]]) != 1 {
		t.Fatalf("%d groups", len(keys))
	}
	if w := groups[keys[0]][0].workload(); w.Sharing != sh {
		t.Errorf("fit workload sharing %+v, want %+v", w.Sharing, sh)
	}
	for _, tt := range []struct {
		settings map[string]string
		want     string
	}{{nil, engine.PrefixOn}, {map[string]string{"no-enable-prefix-caching": "true"}, engine.PrefixOff}, {map[string]string{"enable_prefix_caching": "false"}, engine.PrefixOff}} {
		rec.System.Settings = tt.settings
		p := &point{rec: &rec, topo: topo}
		if got := settingsFrom("vllm-0.10.1", []*point{p}).PrefixCaching; got != tt.want {
			t.Errorf("settings %v: prefix caching %q, want %q", tt.settings, got, tt.want)
		}
	}
	bare := []*point{{rec: &results.Record{System: results.System{GPU: "H20", Model: "Qwen/Qwen3-32B"}}, topo: topo}}
	if got := settingsFrom("vllm-0.6.3", bare).PrefixCaching; got != engine.PrefixOff {
		t.Errorf("vLLM V0: prefix caching %q, want off", got)
	}
	if got := settingsFrom("vllm", bare).PrefixCaching; got != engine.PrefixOn {
		t.Errorf("vLLM without a version (an inference-perf config's): prefix caching %q, want on", got)
	}
}
