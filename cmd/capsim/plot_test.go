package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/figures"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/series"
)

// plotTestProfilePath fits a quick (stage-1 only) profile from the fixtures
// once, so these tests do not depend on the embedded profile's contents.
var plotTestProfilePath = sync.OnceValues(func() (string, error) {
	recs, err := fixtures.Records()
	if err != nil {
		return "", err
	}
	prof, _, err := calibrate.Fit(context.Background(), recs, calibrate.Options{SkipRefine: true}, nil)
	if err != nil {
		return "", err
	}
	b, err := prof.Marshal()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "capsim-plot-test")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "profile.json")
	return path, os.WriteFile(path, b, 0o644)
})

func plotTestProfile(t *testing.T) string {
	t.Helper()
	p, err := plotTestProfilePath()
	if err != nil {
		t.Fatalf("fitting the test profile: %v", err)
	}
	return p
}

// runPlotCmd runs capsim plot end to end and returns stdout and stderr.
func runPlotCmd(t *testing.T, args ...string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(append([]string{"plot"}, args...), &out, &errb); err != nil {
		t.Fatalf("capsim plot %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// plotFigureFiles lists the figures in dir other than the summary.
func plotFigureFiles(t *testing.T, dir, ext string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "*."+ext))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range matches {
		if filepath.Base(m) != "summary."+ext {
			out = append(out, filepath.Base(m))
		}
	}
	return out
}

func TestPlotEveryFixtureSeries(t *testing.T) {
	t.Parallel()
	recs, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	groups := series.Group(recs)
	dir := t.TempDir()
	stdout, stderr := runPlotCmd(t, "--out", dir, "--format", "svg", "--num-prompts", "40", "--profile", plotTestProfile(t))

	files := plotFigureFiles(t, dir, "svg")
	if len(files) != len(groups) {
		t.Fatalf("%d figures for %d series", len(files), len(groups))
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if len(f) >= 80 {
			t.Errorf("figure name %q has %d characters, want under 80", f, len(f))
		}
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("measured")) && !bytes.Contains(b, []byte("flagged")) {
			t.Errorf("%s: no measured points drawn", f)
		}
		if !bytes.Contains(index, []byte(`href="`+f+`"`)) {
			t.Errorf("index.html does not link %s", f)
		}
		if !strings.Contains(stdout, f) {
			t.Errorf("the listing does not name %s", f)
		}
	}
	// Every series whose source names its GPU and model is simulated; one
	// that names neither is simulated as the calibration's assumed pair or
	// else drawn without a line and reported on stderr.
	names := map[string]int{}
	for _, s := range groups {
		f := figures.UniqueName(names, figures.FileName(s)) + ".svg"
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		simulated := bytes.Contains(b, []byte("calibrated simulation"))
		stated := s.First().System.GPU != "" && s.First().System.Model != ""
		if stated && !simulated || !simulated && !strings.Contains(stderr, f+": not simulated") {
			t.Errorf("%s: simulated %v (GPU and model stated: %v)\nstderr:\n%s", f, simulated, stated, stderr)
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(sum, []byte("predicted = measured")) || !bytes.Contains(sum, []byte("within ±10%")) {
		t.Error("summary lacks the predicted = measured line or the ±10% count")
	}
	if !bytes.Contains(index, []byte(`href="summary.svg"`)) {
		t.Error("index.html does not link the summary")
	}
	if last := fmt.Sprintf("plot: [%d/%d]", len(groups), len(groups)); !strings.Contains(stderr, last) {
		t.Errorf("no progress for the last series on stderr:\n%s", stderr)
	}
}

func TestPlotIsDeterministic(t *testing.T) {
	t.Parallel()
	args := []string{"--source", "004", "--engine", "dynamo", "--format", "svg", "--num-prompts", "40", "--profile", plotTestProfile(t)}
	a, b := t.TempDir(), t.TempDir()
	runPlotCmd(t, append([]string{"--out", a}, args...)...)
	runPlotCmd(t, append([]string{"--out", b}, args...)...)
	files := plotFigureFiles(t, a, "svg")
	if len(files) != 8 {
		t.Fatalf("%d figures for the 8 Dynamo series of seed 004: %v", len(files), files)
	}
	for _, f := range append(files, "summary.svg", "index.html") {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", f, err1, err2)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", f)
		}
	}
}

// TestPlotSinglePointAndZeroValues plots a user's file whose series have a
// single point each, one of them with zero values.
func TestPlotSinglePointAndZeroValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := `# one-off runs

## Benchmark Result (ISL:OSL=512:128)

| Concurrency | Request Throughput (req/s) | Output Token Throughput (tok/s) | Mean TTFT (ms) | Mean TPOT (ms) | Mean E2E Latency (ms) |
|---|---|---|---|---|---|
| 4 | 0 | 0 | 0 | 12.0 | 1600 |

## Benchmark Result (ISL:OSL=1024:256)

| Concurrency | Request Throughput (req/s) | Output Token Throughput (tok/s) | Mean TTFT (ms) | Mean TPOT (ms) | Mean E2E Latency (ms) |
|---|---|---|---|---|---|
| 1 | 0.36 | 92.1 | 31.2 | 10.8 | 2785.2 |
`
	meta := `{"document": "runs.md", "defaults": {"gpu": "H100-SXM", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm-0.10.1", "topology": "1xTP1"}}`
	if err := os.WriteFile(filepath.Join(dir, "runs.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runs.meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "figures")
	stdout, _ := runPlotCmd(t, "--out", out, "--format", "svg", "--num-prompts", "40", "--from", filepath.Join(dir, "runs.md"))
	files := plotFigureFiles(t, out, "svg")
	if len(files) != 2 {
		t.Fatalf("want 2 single-point series, got %v\n%s", files, stdout)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"calibrated simulation", "request throughput", "mean TTFT", "concurrency"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s: %q not drawn", f, want)
			}
		}
	}
	// The zero measurements are drawn but not compared: only TPOT and E2E count.
	if !strings.Contains(stdout, "H100-SXM") {
		t.Errorf("listing:\n%s", stdout)
	}
}

// TestPlotUnconfigurableSeries: a file that names no GPU cannot be
// simulated; its measurements are still drawn and stderr says why.
// writeAnonRuns writes dir/anon.md: two closed-loop points that name
// neither GPU nor model.
func writeAnonRuns(t *testing.T, dir string) {
	t.Helper()
	doc := `## Benchmark Result (ISL:OSL=512:128)

| Concurrency | Request Throughput (req/s) | Mean TTFT (ms) | Mean TPOT (ms) | Mean E2E Latency (ms) |
|---|---|---|---|---|
| 1 | 0.5 | 40 | 12.0 | 1600 |
| 8 | 3.1 | 90 | 15.0 | 2000 |
`
	if err := os.WriteFile(filepath.Join(dir, "anon.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPlotUnconfigurableSeries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeAnonRuns(t, dir)
	out := filepath.Join(dir, "figures")
	stdout, stderr := runPlotCmd(t, "--out", out, "--format", "svg", "--from", filepath.Join(dir, "anon.md"))
	if !strings.Contains(stderr, "not simulated: calibrate: record anon:5: no GPU or no model stated") {
		t.Errorf("stderr does not say why:\n%s", stderr)
	}
	files := plotFigureFiles(t, out, "svg")
	if len(files) != 1 {
		t.Fatalf("figures %v", files)
	}
	b, err := os.ReadFile(filepath.Join(out, files[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("measured")) || bytes.Contains(b, []byte("calibrated simulation")) || !bytes.Contains(b, []byte("not simulated")) {
		t.Error("want the measurements only, titled not simulated")
	}
	if !strings.Contains(stdout, files[0]+"  2       -") {
		t.Errorf("listing:\n%s", stdout)
	}
}

// With --from, --gpu, --model and --engine state what the files measured
// (as for data, fit and validate), so a file that names neither can be
// simulated against its stated system.
func TestPlotStatesTheSystemOfFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeAnonRuns(t, dir)
	out := filepath.Join(dir, "figures")
	stdout, stderr := runPlotCmd(t, "--out", out, "--format", "svg", "--num-prompts", "40", "--from", filepath.Join(dir, "anon.md"),
		"--gpu", "H100", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--engine", "vllm-0.10.1", "--topology", "1xTP1")
	if strings.Contains(stderr, "not simulated") || !strings.Contains(stdout, "H100-SXM · Llama-3.1-8B-Instruct · vllm-0.10.1") {
		t.Errorf("want the series simulated on its stated system:\n%s\n%s", stdout, stderr)
	}
	var o, e bytes.Buffer
	if err := run([]string{"plot", "--out", out, "--topology", "1xTP1"}, &o, &e); err == nil || err.Error() != "plot: --topology states the system of --from files" {
		t.Errorf("--topology without --from: %v", err)
	}
}

func TestPlotErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{}, "--out DIR is required"},
		{"bad format", []string{"--out", dir, "--format", "table"}, "--format must be png or svg"},
		{"no match", []string{"--out", dir, "--gpu", "B200-nothing"}, "no records match"},
		{"stray argument", []string{"--out", dir, "extra"}, "unexpected argument"},
		{"negative prompts", []string{"--out", dir, "--num-prompts", "-1"}, "--num-prompts"},
		{"missing file", []string{"--out", dir, "--from", filepath.Join(dir, "nope.json")}, "nope.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(append([]string{"plot"}, c.args...), &out, &errb)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestPredictPlot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "dynamo.svg")
	var out, errb bytes.Buffer
	err := run([]string{"predict", "--profile", plotTestProfile(t), "--gpu", "H20", "--model", "Qwen3-32B", "--prefill", "12xTP1", "--decode", "1xTP4",
		"--isl", "3000", "--osl", "150", "--concurrency", "1,2,4,8,16,32,64,128", "--num-prompts", "64", "--plot", file}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"knee: c=", "uncertainty band", "measured: 8 points from 004_", "predicted"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("%q not drawn", want)
		}
	}
	// The figure marks the blow-up exactly when the table reports one.
	if found := strings.Contains(out.String(), "TTFT blow-up: mean TTFT"); found != bytes.Contains(b, []byte("TTFT blow-up: c=")) {
		t.Errorf("table reports a blow-up: %v; figure marks one: %v", found, !found)
	}
}

func TestPredictPlotSeveralShapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	err := run([]string{"predict", "--profile", plotTestProfile(t), "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "4xTP4", "--engine", "vllm-0.9",
		"--concurrency", "1,8,64", "--num-prompts", "32", "--no-band", "--plot", filepath.Join(dir, "p.png")}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p-isl*-osl*.png"))
	if len(files) < 2 {
		t.Fatalf("want one file per calibrated shape, got %v", files)
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s: not a PNG (%v)", f, err)
		}
	}
}

func TestPredictPlotRejectsUnknownExtension(t *testing.T) {
	t.Parallel()
	err := plotPrediction(filepath.Join(t.TempDir(), "p.jpg"), []predict.Prediction{{}}, nil, "", io.Discard)
	if err == nil || !strings.Contains(err.Error(), ".png or .svg") {
		t.Fatalf("got %v", err)
	}
}

// predict --plot with a user's --profile overlays the records that profile
// was fitted from (a configuration the fixtures do not hold), with the GPU
// and topology its sidecar gave them; without the profile there are none.
func TestPredictPlotOverlaysProfileSources(t *testing.T) {
	dir := t.TempDir()
	md, err := os.ReadFile("testdata/fit/h20-dynamo.md")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile("testdata/fit/h20-dynamo.meta.json")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "mine.md")
	if err := os.WriteFile(src, bytes.ReplaceAll(md, []byte("ISL:OSL=2500:100"), []byte("ISL:OSL=2400:120")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.meta.json"), bytes.ReplaceAll(meta, []byte("h20-dynamo.md"), []byte("mine.md")), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(dir, "profile.json")
	var out, errb bytes.Buffer
	if err := run([]string{"fit", "--from", src, "--max-evals", "5", "--out", profile}, &out, &errb); err != nil {
		t.Fatalf("fit: %v\n%s", err, errb.String())
	}
	predictArgs := []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--prefill", "3xTP4", "--decode", "1xTP4", "--isl", "2400", "--osl", "120", "--concurrency", "1,2,8"}
	for _, c := range []struct {
		profile, want string
	}{{profile, "measured: 3 points from mine.md"}, {"", "no measurements of this configuration in the fixtures"}} {
		fig := filepath.Join(dir, "p.svg")
		args := append(append([]string(nil), predictArgs...), "--plot", fig)
		if c.profile != "" {
			args = append(args, "--profile", c.profile)
		}
		out.Reset()
		errb.Reset()
		if err := run(args, &out, &errb); err != nil {
			t.Fatalf("predict: %v\n%s", err, errb.String())
		}
		svg, err := os.ReadFile(fig)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(svg, []byte(c.want)) {
			t.Errorf("profile %q: the figure does not say %q", c.profile, c.want)
		}
	}
}
