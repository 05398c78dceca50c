package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/capsim/capsim/calibrate"
)

const fitFile = "testdata/fit/h20-dynamo.md"

func TestFitTable(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if err := run([]string{"fit", "--from", fitFile, "--max-evals", "5"}, &out, &errb); err != nil {
		t.Fatalf("fit: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"In-sample absolute % error", "h20-dynamo.md", "3P(TP4) 1D(TP4)", "2500:100", "1000:1000", "What the data determine", "stay at the roofline prior"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "fit: H20 / Qwen3-32B / dynamo-0.3.0: residuals") {
		t.Errorf("no progress on stderr:\n%s", errb.String())
	}
}

func TestFitJSONShapeAndCV(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	profile := filepath.Join(t.TempDir(), "profile.json")
	if err := run([]string{"fit", "--from", fitFile, "--format", "json", "--cv", "--max-evals", "5", "--out", profile}, &out, &errb); err != nil {
		t.Fatalf("fit: %v\n%s", err, errb.String())
	}
	var rep struct {
		Series []map[string]json.RawMessage `json:"series"`
		CV     []map[string]json.RawMessage `json:"cv"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if len(rep.Series) != 2 || len(rep.CV) != 2 {
		t.Fatalf("series %d, cv %d; want 2 and 2 (two shapes, each held out once)", len(rep.Series), len(rep.CV))
	}
	for _, k := range []string{"source", "gpu", "model", "engine", "topology", "isl", "osl", "points", "ape", "flagged"} {
		if _, ok := rep.Series[0][k]; !ok {
			t.Errorf("series entry lacks %q: %v", k, rep.Series[0])
		}
	}
	var ape map[string]calibrate.APE
	if err := json.Unmarshal(rep.Series[0]["ape"], &ape); err != nil {
		t.Fatal(err)
	}
	for _, m := range calibrate.ReportMetrics {
		if _, ok := ape[m]; !ok {
			t.Errorf("ape lacks %s (the source gives it)", m)
		}
	}
	if a := ape["request_throughput"]; a.Median > 10 {
		t.Errorf("in-sample throughput median APE %.1f%%, want ≤ 10%%", a.Median)
	}
	b, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := calibrate.ParseProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Engines("H20", "Qwen3-32B"); len(got) != 1 || got[0] != "dynamo-0.3.0" {
		t.Errorf("profile engines %v", got)
	}
}

func TestFitErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--format", "xml"}, `--format must be table, json or csv, got "xml"`},
		{[]string{"fit", "--from", "testdata/fit/missing.md"}, "missing.md"},
		{[]string{"fit", "--from", " , "}, "results: no result files named"},
		{[]string{"fit", fitFile}, `fit: unexpected argument "testdata/fit/h20-dynamo.md" (files go after --from)`},
		{[]string{"fit", "--from", fitFile, "--max-evals", "many"}, `--max-evals: "many" is not an integer`},
		{[]string{"fit", "--from", fitFile, "--max-evals", "-1"}, "fit: --max-evals must be 0 (the default, 40) or more, got -1"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		err := run(tt.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want it to contain %q", tt.args, err, tt.want)
		}
	}
}

// The CLI collects garbage at gcPercent unless GOGC says otherwise.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "100")
	os.Unsetenv("GOGC")
	tuneGC()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, gcPercent)
	}
	t.Setenv("GOGC", "100")
	tuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=100: GC percent %d, want the environment's 100", got)
	}
}
