package figures

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
)

func TestUniqueName(t *testing.T) {
	used := map[string]int{}
	var got []string
	for _, n := range []string{"a", "b", "a", "a"} {
		got = append(got, UniqueName(used, n))
	}
	if strings.Join(got, " ") != "a b a-2 a-3" {
		t.Errorf("got %v", got)
	}
}

func TestWritePredictionRejects(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		path  string
		preds []predict.Prediction
		want  string
	}{
		{filepath.Join(dir, "p.png"), nil, "no prediction"},
		{filepath.Join(dir, "p.jpg"), []predict.Prediction{{}}, ".png or .svg"},
	} {
		if err := WritePrediction(tc.path, tc.preds, nil, "the fixtures"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.path, err, tc.want)
		}
	}
}

// A series figure is named by its system and shape, not after its first
// file (a vLLM result file's name ran to 147 characters), in at most
// MaxNameLen characters, and repeats are numbered.
func TestFileNameBySystemAndShape(t *testing.T) {
	long := "/data/runs/" + strings.Repeat("vllm-bench-serve-results-", 5) + "Meta-Llama-3.1-8B-Instruct-20250101-120000.json"
	rec := func(file, gpu, mdl, deployment string) results.Record {
		r := results.Record{Source: results.Source{File: file, Format: results.FormatVLLMJSON},
			System:   results.System{GPU: gpu, Model: mdl, Engine: "vllm-0.9.0.1", Topology: model.Aggregated(model.Pool{Count: 2, TP: 4})},
			Workload: results.Workload{ISL: 1000, OSL: 200, ISLMax: 1000, OSLMax: 200, Load: model.Closed(8)}}
		if deployment != "" {
			r.System.Settings = map[string]string{"deployment": deployment}
		}
		return r
	}
	recs := []results.Record{
		rec(long, "H100-SXM", "meta-llama/Llama-3.1-8B-Instruct", ""),
		rec(long+"x", "H100-SXM", "meta-llama/Llama-3.1-8B-Instruct", strings.Repeat("a-very-long-deployment-label-", 4)),
	}
	names := map[string]int{}
	var got []string
	for _, s := range series.Group(recs) {
		n := UniqueName(names, FileName(s)) + ".png"
		if len(n) >= 80 || strings.Contains(n, "bench") || !strings.HasPrefix(n, "h100-sxm-llama-3.1-8b-instruct-vllm-0.9.0.1-2xtp4") || !strings.Contains(n, "isl1000-osl200-conc") {
			t.Errorf("figure name %q (%d characters): want system and shape, under 80", n, len(n))
		}
		got = append(got, n)
	}
	if len(got) != 2 || got[0] == got[1] {
		t.Errorf("names %q: want two, distinct", got)
	}
}
