package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// ints reads a JSON array of numbers.
func ints(t *testing.T, v any) []int {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%v is not an array", v)
	}
	out := make([]int, len(a))
	for i, x := range a {
		out[i] = int(x.(float64))
	}
	return out
}

// bench --dataset sends each request its own lengths, dealt from the
// dataset scaled to --isl and --osl with --seed; the result says which
// dataset, and reading it back gives records whose workload draws the
// dataset's lengths (as fit and validate --results simulate them).
func TestBenchDataset(t *testing.T) {
	ds, _ := datasets.Lookup("sharegpt")
	ins, outs := ds.Scaled(16, 4)
	for _, c := range []struct {
		dataset, seed string
		seedN         uint64
	}{{"sharegpt", "0", 0}, {"ShareGPT", "7", 7}, {"", "0", 0}} {
		m := newBenchMock(t, nil)
		out := filepath.Join(t.TempDir(), "results.json")
		args := []string{"bench", "--url", m.URL, "--model", "m", "--isl", "16", "--osl", "4", "--concurrency", "3",
			"--num-prompts", "12", "--seed", c.seed, "--out", out, "--quiet"}
		if c.dataset != "" {
			args = append(args, "--dataset", c.dataset)
		}
		var stderr bytes.Buffer
		if err := run(args, io.Discard, &stderr); err != nil {
			t.Fatalf("--dataset %q: %v\n%s", c.dataset, err, stderr.String())
		}
		r := readResults(t, out)[0]
		gotIn, gotOut := ints(t, r["input_lens"]), ints(t, r["output_lens"])
		wantIn, wantOut := slices.Repeat([]int{16}, 12), slices.Repeat([]int{4}, 12)
		var wantDataset any // null without a dataset
		if c.dataset != "" {
			wantIn, wantOut = datasets.Deal(ins, 12, c.seedN, datasets.InputStream), datasets.Deal(outs, 12, c.seedN, datasets.OutputStream)
			wantDataset = "sharegpt"
		}
		if !slices.Equal(gotIn, wantIn) || !slices.Equal(gotOut, wantOut) {
			t.Errorf("--dataset %q --seed %s: input_lens %v output_lens %v, want %v and %v", c.dataset, c.seed, gotIn, gotOut, wantIn, wantOut)
		}
		if r["capsim_dataset"] != wantDataset || r["capsim_prompt_token_mismatches"] != 0.0 || r["capsim_output_token_mismatches"] != 0.0 {
			t.Errorf("--dataset %q: capsim_dataset %v, mismatches %v and %v: want %v and none", c.dataset, r["capsim_dataset"],
				r["capsim_prompt_token_mismatches"], r["capsim_output_token_mismatches"], wantDataset)
		}
		recs, err := results.ParseFile(out)
		if err != nil {
			t.Fatal(err)
		}
		ws, errs := series.Workloads(recs, 0)
		if errs[0] != nil || ws[0].Dataset != wantDataset && !(wantDataset == nil && ws[0].Dataset == "") {
			t.Errorf("--dataset %q: read back as a workload of dataset %q (%v)", c.dataset, ws[0].Dataset, errs[0])
		}
	}
	err := run([]string{"bench", "--url", "http://127.0.0.1:1", "--model", "m", "--isl", "8", "--osl", "3", "--concurrency", "1",
		"--dataset", "sonnet"}, io.Discard, io.Discard)
	if err == nil || err.Error() != `bench: --dataset: unknown dataset "sonnet" (known: sharegpt)` {
		t.Errorf("bench --dataset sonnet: err %v", err)
	}
}

// validate --url --dataset predicts with the dataset's lengths, the ones it
// sends; the file it writes validates offline with them too, where
// --dataset is the file's to say.
func TestValidateLiveDataset(t *testing.T) {
	m := newBenchMock(t, nil)
	out := filepath.Join(t.TempDir(), "measured.json")
	v := runValidateJSON(t, "--url", m.URL, "--model", "Qwen3-8B", "--gpu", "H100", "--replicas", "1xTP1", "--profile", validateProfile,
		"--isl", "16", "--osl", "4", "--concurrency", "4", "--num-prompts", "24", "--dataset", "sharegpt", "--out", out)
	if v.Dataset != "sharegpt" || len(v.Points) != 1 || v.Points[0].Completed != 24 {
		t.Fatalf("dataset %q, points %+v", v.Dataset, v.Points)
	}
	b, err := os.ReadFile(validateProfile)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := calibrate.ParseProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	predicted := func(dataset string) map[string]float64 {
		target := calibrate.Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Qwen/Qwen3-8B"), Engine: engine.Parse("llm-d-inference-sim-0.10.2"),
			Topology: model.Aggregated(model.Pool{Count: 1, TP: 1, PP: 1})}
		preds, err := predict.Run(context.Background(), prof, predict.Options{Target: target, Loads: []model.Load{model.Closed(4)}, NoBand: true, Mode: sim.BenchmarkReplay, Workload: workload.Workload{ISL: 16, OSL: 4, NumPrompts: 24, Seed: calibrate.FitSeed, Dataset: dataset}})
		if err != nil {
			t.Fatal(err)
		}
		return preds[0].Points[0].Metrics
	}
	with, without := predicted("sharegpt"), predicted("")
	differs := false
	for _, c := range v.Points[0].Metrics {
		if !closeTo(c.Predicted, with[c.Metric], 1e-12) {
			t.Errorf("%s: predicted %v, predict.Run with the dataset gives %v", c.Metric, c.Predicted, with[c.Metric])
		}
		differs = differs || !closeTo(with[c.Metric], without[c.Metric], 1e-6)
	}
	if !differs {
		t.Error("the dataset's lengths predict what fixed lengths do: the test shows nothing")
	}
	meta := `{"document": "measured.json", "defaults": {"gpu": "H100", "engine": "llm-d-inference-sim-0.10.2", "topology": "1xTP1"}}`
	if err := os.WriteFile(filepath.Join(filepath.Dir(out), "measured.meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	off := runValidateJSON(t, "--results", out, "--profile", validateProfile)
	if off.Dataset != "sharegpt" || !slices.ContainsFunc(off.Warnings, func(w string) bool { return strings.HasPrefix(w, "lengths: the sharegpt dataset's") }) {
		t.Errorf("offline: dataset %q, warnings %q", off.Dataset, off.Warnings)
	}
	var table bytes.Buffer
	if err := run([]string{"validate", "--results", out, "--profile", validateProfile}, &table, io.Discard); err != nil ||
		!strings.Contains(table.String(), "; request lengths drawn from the sharegpt dataset, scaled to ISL and OSL\n") {
		t.Errorf("offline table (%v): want the dataset in its first line:\n%s", err, table.String())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--results", out, "--profile", validateProfile, "--dataset", "sharegpt"},
			"validate: --dataset does not apply with --results (loads, shape and dataset come from the file)"},
		{[]string{"validate", "--url", m.URL, "--model", "Qwen3-8B", "--gpu", "H100", "--replicas", "1xTP1", "--isl", "16", "--osl", "4",
			"--concurrency", "1", "--dataset", "sonnet"}, `validate: --dataset: unknown dataset "sonnet" (known: sharegpt)`},
	} {
		if err := run(c.args, io.Discard, io.Discard); err == nil || err.Error() != c.want {
			t.Errorf("%v: err %v, want %q", c.args[len(c.args)-2:], err, c.want)
		}
	}
}
