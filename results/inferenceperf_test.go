package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

// The stage reports of a synthetic inference-perf run, read with the
// config beside them: the model and engine, each stage's Poisson rate and
// the shared-prefix workload come from config.yaml, the measurements from
// each stage's report (testdata/golden/inference-perf-dir.json).
func TestInferencePerfRunWithConfig(t *testing.T) {
	recs, err := LoadFiles([]string{"testdata/inference-perf/stage_0_lifecycle_metrics.json", "testdata/inference-perf/stage_1_lifecycle_metrics.json"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "golden", "inference-perf-dir.json"), append(got, '\n'))
	want := model.Sharing{Groups: 4, PromptsPerGroup: 8, SharedLen: 1024}
	for i, rate := range []float64{1, 4} {
		r := recs[i]
		if r.System.Model != "Qwen/Qwen3-32B" || r.System.Engine != "vllm" || r.Workload.Sharing != want ||
			r.Workload.Load != model.Open(rate, 1) || r.Workload.ISLMax != 1536 || r.Workload.OSLMax != 64 || r.Workload.ISL != 1536 {
			t.Errorf("stage %d: %+v %+v", i, r.System, r.Workload)
		}
	}
}

// A stage report that does not state its rate takes it from the config's
// stage list (constant: evenly spaced arrivals); one the list lacks is an
// error naming the field.
func TestInferencePerfConfigStages(t *testing.T) {
	dir := t.TempDir()
	var rep map[string]any
	data, _ := os.ReadFile("testdata/inference-perf/stage_0_lifecycle_metrics.json")
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	delete(rep["load_summary"].(map[string]any), "requested_rate")
	data, _ = json.Marshal(rep)
	for _, n := range []string{"stage_0_lifecycle_metrics.json", "stage_1_lifecycle_metrics.json"} {
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "load:\n  type: constant\n  stages:\n  - rate: 3\n    duration: 30\nserver:\n  type: vllm\n  model_name: m\n"
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := LoadFiles([]string{filepath.Join(dir, "stage_0_lifecycle_metrics.json")})
	if err != nil {
		t.Fatal(err)
	}
	if l := recs[0].Workload.Load; l != model.Open(3, constantArrivalShape) || recs[0].Workload.Sharing.On() {
		t.Errorf("load %+v, sharing %+v", l, recs[0].Workload.Sharing)
	}
	_, err = LoadFiles([]string{filepath.Join(dir, "stage_1_lifecycle_metrics.json")})
	if err == nil || !strings.Contains(err.Error(), `field "load.stages"`) || !strings.Contains(err.Error(), "is stage 1; the config lists 1 stages") {
		t.Errorf("stage beyond the config: err %v", err)
	}
	mt := "data:\n  type: shared_prefix\n  shared_prefix:\n    num_groups: 2\n    num_prompts_per_group: 3\n    enable_multi_turn_chat: true\nload:\n  type: poisson\n"
	recs[0].Anomalies = nil
	if err := ApplyInferencePerfConfig("c.yaml", []byte(mt), recs); err != nil || recs[0].Workload.Sharing.On() || len(recs[0].Anomalies) != 1 || !strings.HasPrefix(recs[0].Anomalies[0], AnomalyMultiTurn) {
		t.Errorf("multi-turn chat: err %v, sharing %+v, anomalies %q", err, recs[0].Workload.Sharing, recs[0].Anomalies)
	}
	bad := "data:\n  type: shared_prefix\n  shared_prefix:\n    num_groups: 0\nload:\n  type: poisson\n"
	if err := ApplyInferencePerfConfig("c.yaml", []byte(bad), recs); err == nil || !strings.Contains(err.Error(), "num_groups") {
		t.Errorf("shared_prefix without groups: err %v", err)
	}
}

// A metadata sidecar states the sharing of results whose file does not
// (vllm bench serve --dataset-name prefix_repetition); a bad one is an
// error naming the field.
func TestMetaSharing(t *testing.T) {
	recs := []Record{{ID: "x:1", Source: Source{File: "x.json", Line: 1}}}
	m, err := ParseMeta("x.meta.json", []byte(`{"document": "x.json", "defaults": {"sharing": {"groups": 5, "shared_len": 512}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(recs); err != nil {
		t.Fatal(err)
	}
	if want := (model.Sharing{Groups: 5, SharedLen: 512}); recs[0].Workload.Sharing != want {
		t.Errorf("sharing %+v, want %+v", recs[0].Workload.Sharing, want)
	}
	_, err = ParseMeta("x.meta.json", []byte(`{"document": "x.json", "defaults": {"sharing": {"groups": -1}}}`))
	if err == nil || !strings.Contains(err.Error(), `field "defaults.sharing"`) {
		t.Errorf("negative groups: err %v", err)
	}
}
