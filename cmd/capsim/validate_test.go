package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/simpeer"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// The validate testdata are three load points measured with capsim bench on
// llm-d-inference-sim v0.10.2 (constant TTFT 50 ms, ITL 10 ms, max-num-seqs
// 8; ISL 256, OSL 64, concurrency 1, 4, 16, 48 prompts each; per-request
// lists dropped), the metadata naming a catalog GPU and model for it, and
// the profile `capsim fit --from` made of them.
const (
	validateResults = "testdata/validate/inference-sim.json"
	validateProfile = "testdata/validate/inference-sim.profile.json"
)

func runValidateJSON(t *testing.T, args ...string) predict.Validation {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(append([]string{"validate", "--format", "json"}, args...), &stdout, &stderr); err != nil {
		t.Fatalf("validate: %v\n%s", err, stderr.String())
	}
	var v predict.Validation
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("decoding validate's JSON: %v\n%s", err, stdout.String())
	}
	return v
}

func closeTo(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// TestValidateResultsFileErrorArithmetic recomputes every number validate
// prints: measured from the file, predicted by predict.Run for the same
// deployment, shape, load, prompts and seed, and the error from both.
func TestValidateResultsFileErrorArithmetic(t *testing.T) {
	t.Parallel()
	v := runValidateJSON(t, "--results", validateResults, "--profile", validateProfile)
	if v.GPU != "H100-SXM" || v.Model != "Qwen/Qwen3-8B" || v.Engine != "llm-d-inference-sim-0.10.2" || v.Topology != "1xTP1" {
		t.Fatalf("deployment %s / %s / %s / %s, want the metadata's H100-SXM / Qwen/Qwen3-8B / llm-d-inference-sim-0.10.2 / 1xTP1",
			v.GPU, v.Model, v.Engine, v.Topology)
	}
	recs, err := loadRecords([]string{validateResults})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Points) != len(recs) || len(recs) != 3 {
		t.Fatalf("%d points for %d records, want 3", len(v.Points), len(recs))
	}
	b, err := os.ReadFile(validateProfile)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := calibrate.ParseProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	target := calibrate.Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Qwen/Qwen3-8B"), Engine: engine.Parse("llm-d-inference-sim-0.10.2"),
		Topology: model.Aggregated(model.Pool{Count: 1, TP: 1, PP: 1})}
	wantLoads := []int{1, 4, 16}
	if !v.ExactOutput {
		t.Error("JSON exact_output false: capsim bench counted max_tokens output tokens per request")
	}
	for i, p := range v.Points {
		if !p.ExactOutput {
			t.Errorf("point %d: exact_output false", i)
		}
		r := recs[i]
		if p.Load.Concurrency != wantLoads[i] || p.ISL != 256 || p.OSL != 64 || p.NumPrompts != 48 || p.Completed != 48 || p.Failed != 0 {
			t.Fatalf("point %d: %+v, want concurrency %d, ISL 256, OSL 64, 48 prompts all completed", i, p, wantLoads[i])
		}
		// capsim bench sent max_tokens 64 with ignore_eos and counted
		// 48 × 64 output tokens: every output is simulated at exactly 64.
		preds, err := predict.Run(context.Background(), prof, predict.Options{Target: target, Loads: []model.Load{model.Closed(wantLoads[i])}, NoBand: true, Mode: sim.BenchmarkReplay, Workload: workload.Workload{ISL: 256, OSL: 64, NumPrompts: 48, Seed: calibrate.FitSeed, ExactOutput: true}})
		if err != nil {
			t.Fatal(err)
		}
		want := preds[0].Points[0].Metrics
		if len(p.Metrics) != len(predict.ValidationMetrics) || len(p.Missing) != 0 {
			t.Fatalf("point %d compares %d metrics (missing %v), want all %d", i, len(p.Metrics), p.Missing, len(predict.ValidationMetrics))
		}
		for j, c := range p.Metrics {
			if c.Metric != predict.ValidationMetrics[j] {
				t.Fatalf("point %d metric %d is %s, want %s", i, j, c.Metric, predict.ValidationMetrics[j])
			}
			if m := r.Metrics[c.Metric]; c.Measured != m {
				t.Errorf("point %d %s: measured %v, file says %v", i, c.Metric, c.Measured, m)
			}
			if !closeTo(c.Predicted, want[c.Metric], 1e-12) {
				t.Errorf("point %d %s: predicted %v, predict.Run gives %v", i, c.Metric, c.Predicted, want[c.Metric])
			}
			if e := 100 * math.Abs(c.Predicted-c.Measured) / c.Measured; !closeTo(c.AbsPctError, e, 1e-12) {
				t.Errorf("point %d %s: error %v%%, want |%v − %v| / %v = %v%%", i, c.Metric, c.AbsPctError, c.Predicted, c.Measured, c.Measured, e)
			}
		}
	}
	// Summary: median of three is the middle error, max the largest.
	for _, s := range v.Summary {
		var errs []float64
		for _, p := range v.Points {
			for _, c := range p.Metrics {
				if c.Metric == s.Metric {
					errs = append(errs, c.AbsPctError)
				}
			}
		}
		lo, hi := math.Min(errs[0], math.Min(errs[1], errs[2])), math.Max(errs[0], math.Max(errs[1], errs[2]))
		mid := errs[0] + errs[1] + errs[2] - lo - hi
		if s.Points != 3 || !closeTo(s.Median, mid, 1e-12) || s.Max != hi {
			t.Errorf("summary %s: median %v max %v over %d, want %v and %v over 3", s.Metric, s.Median, s.Max, s.Points, mid, hi)
		}
	}
	if len(v.Summary) != len(predict.ValidationMetrics) {
		t.Errorf("summary has %d metrics, want %d", len(v.Summary), len(predict.ValidationMetrics))
	}
}

// A metric the measurement lacks, or measured as zero, is listed as missing, never compared.
func TestValidateCompareSkipsAbsentMetrics(t *testing.T) {
	t.Parallel()
	pred := map[string]float64{model.RequestThroughput: 2, model.MeanTTFT: 50, model.MeanTPOT: 10}
	measured := map[string]float64{model.RequestThroughput: 1, model.MeanTTFT: 0}
	p := predict.ComparePoint(model.Closed(4), workload.Workload{ISL: 10, OSL: 5}, pred, measured)
	if len(p.Metrics) != 1 || p.Metrics[0].Metric != model.RequestThroughput || p.Metrics[0].AbsPctError != 100 {
		t.Fatalf("compared %+v, want only request_throughput at 100%%", p.Metrics)
	}
	if len(p.Missing) != len(predict.ValidationMetrics)-1 {
		t.Errorf("missing %v, want the other %d metrics", p.Missing, len(predict.ValidationMetrics)-1)
	}
}

func TestValidateTable(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if err := run([]string{"validate", "--results", validateResults, "--profile", validateProfile}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"Qwen3-8B on H100-SXM, llm-d-inference-sim-0.10.2, 1xTP1",
		// capsim bench's outputs all ran to max_tokens: said once, here.
		"as a benchmark replay (the same prompts, ramp-up and drain); every output exactly OSL tokens long (ignore_eos), not spread ±20%\n",
		"concurrency 1, ISL 256, OSL 64: 48 prompts, 48 completed, 0 failed",
		"concurrency 16, ISL 256, OSL 64",
		"metric  measured  predicted  abs % error",
		"Absolute % error over 3 load points:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, m := range predict.ValidationMetrics {
		if n := strings.Count(out, " "+m+" "); n != 4 { // three points and the summary
			t.Errorf("%s appears %d times, want 4:\n%s", m, n, out)
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("unexpected warnings: %s", stderr.String())
	}
}

// With the embedded profile, which knows no llm-d-inference-sim engine,
// validate predicts with the profile's default engine and says so.
func TestValidateWarnsWhenTheProfileLacksTheEngine(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if err := run([]string{"validate", "--results", validateResults, "--format", "json"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), `engine llm-d-inference-sim-0.10.2 not calibrated for H100-SXM / Qwen3-8B: simulated with vllm-0.9.0.1`) {
		t.Errorf("stderr %q lacks the engine warning", stderr.String())
	}
	if strings.Count(stderr.String(), "warning:") != 1 {
		t.Errorf("want the warning once, got:\n%s", stderr.String())
	}
}

// Flags override the metadata: another topology changes the prediction.
func TestValidateFlagsOverrideMetadata(t *testing.T) {
	t.Parallel()
	one := runValidateJSON(t, "--results", validateResults, "--profile", validateProfile)
	two := runValidateJSON(t, "--results", validateResults, "--profile", validateProfile, "--replicas", "2xTP1")
	if two.Topology != "2xTP1" {
		t.Fatalf("topology %s, want 2xTP1 from --replicas", two.Topology)
	}
	// Concurrency 16 on two replicas of 8 sequences queues no request, unlike one replica.
	a, b := one.Points[2].Metrics[2], two.Points[2].Metrics[2]
	if a.Metric != model.MeanTTFT || !(b.Predicted < a.Predicted/2) {
		t.Errorf("mean TTFT at concurrency 16: %v on one replica, %v on two; want the queueing gone", a.Predicted, b.Predicted)
	}
}

func TestValidateRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	noMeta := filepath.Join(dir, "bare.json")
	b, err := os.ReadFile(validateResults)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noMeta, b, 0o644); err != nil {
		t.Fatal(err)
	}
	notResults := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(notResults, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// No server listens on port 1: a test that got past its check would fail differently.
	live := []string{"validate", "--url", "http://127.0.0.1:1", "--model", "Qwen3-8B", "--gpu", "H100", "--replicas", "1xTP1",
		"--isl", "100", "--osl", "10", "--concurrency", "1", "--num-prompts", "2", "--skip-check"}
	with := func(extra ...string) []string { return append(append([]string{}, live...), extra...) }
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing to validate", []string{"validate", "--gpu", "H100"}, "give --url to measure a server, or --results FILE"},
		{"url and results", with("--results", validateResults), "not both"},
		{"missing file", []string{"validate", "--results", filepath.Join(dir, "nope.json")}, "nope.json"},
		{"not a result file", []string{"validate", "--results", notResults}, "empty.json"},
		{"no GPU in file or flags", []string{"validate", "--results", noMeta, "--replicas", "1xTP1"}, "no GPU: give --gpu"},
		{"no topology in file or flags", []string{"validate", "--results", noMeta, "--gpu", "H100"}, "no topology"},
		{"shape flag with results", []string{"validate", "--results", validateResults, "--isl", "5"}, "--isl does not apply with --results"},
		{"load flag with results", []string{"validate", "--results", validateResults, "--concurrency", "5"}, "--concurrency does not apply"},
		{"live flag with results", []string{"validate", "--results", validateResults, "--out", filepath.Join(dir, "x.json")}, "--out applies to a live server"},
		{"unknown GPU", []string{"validate", "--results", validateResults, "--gpu", "Z80"}, `unknown GPU "Z80"`},
		{"unknown router", []string{"validate", "--results", validateResults, "--router", "sticky"}, `--router: unknown router "sticky" (want round-robin, least-outstanding, random or prefix-aware)`},
		{"bad format", []string{"validate", "--results", validateResults, "--format", "xml"}, "--format must be table, json or csv"},
		{"bad profile", []string{"validate", "--results", validateResults, "--profile", notResults}, "empty.json"},
		{"stray argument", []string{"validate", "--results", validateResults, "extra"}, `unexpected argument "extra"`},
		{"live without model", []string{"validate", "--url", "http://127.0.0.1:1", "--gpu", "H100", "--replicas", "1xTP1", "--isl", "1", "--osl", "1", "--concurrency", "1"}, "--model is required"},
		{"live without GPU", []string{"validate", "--url", "http://127.0.0.1:1", "--model", "Qwen3-8B", "--replicas", "1xTP1", "--isl", "1", "--osl", "1", "--concurrency", "1"}, "--gpu is required"},
		{"live without topology", []string{"validate", "--url", "http://127.0.0.1:1", "--model", "Qwen3-8B", "--gpu", "H100", "--isl", "1", "--osl", "1", "--concurrency", "1"}, "give a topology"},
		{"live without loads", []string{"validate", "--url", "http://127.0.0.1:1", "--model", "Qwen3-8B", "--gpu", "H100", "--replicas", "1xTP1", "--isl", "1", "--osl", "1"}, "give load points"},
		{"zero concurrency", with("--concurrency", "0"), `--concurrency: "0" is not a positive integer`},
		{"bad rate", with("--rate", "fast"), `--rate: "fast"`},
		{"zero isl", with("--isl", "0"), "--isl and --osl must be positive"},
		{"negative prompts", with("--num-prompts", "-1"), "--num-prompts must be positive"},
		{"bad endpoint", with("--endpoint", "embeddings"), "--endpoint must be completions or chat"},
		{"bad topology", with("--replicas", "twoxTP1"), "--replicas"},
		{"unknown router, live", with("--router", "sticky"), `--router: unknown router "sticky"`},
		{"negative dp attention, results", []string{"validate", "--results", validateResults, "--dp-attention", "-1"}, "--dp-attention must be 1 or more, got -1"},
		{"negative dp attention, live", with("--dp-attention", "-2"), "--dp-attention must be 1 or more, got -2"},
		{"dp attention on vLLM", with("--engine", "vllm", "--dp-attention", "2"), "data-parallel attention is SGLang's"},
		{"unset api key", with("--api-key-env", "CAPSIM_VALIDATE_TEST_UNSET_KEY"), "CAPSIM_VALIDATE_TEST_UNSET_KEY"},
		{"server down", live, "validate:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := run(tt.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one mentioning %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

// TestValidateLiveAgainstMock drives the live mode end to end against an
// httptest server: the measured side must be what bench writes with --out.
func TestValidateLiveAgainstMock(t *testing.T) {
	m := newBenchMock(t, nil)
	defer m.Close()
	out := filepath.Join(t.TempDir(), "measured.json")
	v := runValidateJSON(t, "--url", m.URL, "--model", "Qwen3-8B", "--gpu", "H100", "--replicas", "1xTP1",
		"--profile", validateProfile, "--isl", "16", "--osl", "4", "--concurrency", "1,2", "--num-prompts", "4", "--out", out)
	rs := readResults(t, out)
	if len(v.Points) != 2 || len(rs) != 2 {
		t.Fatalf("%d points and %d results written, want 2 of each", len(v.Points), len(rs))
	}
	for i, p := range v.Points {
		if p.Load.Concurrency != i+1 || p.Completed != 4 || p.NumPrompts != 4 || p.ISL != 16 || p.OSL != 4 {
			t.Errorf("point %d: %+v", i, p)
		}
		for _, c := range p.Metrics {
			if c.Measured != rs[i][c.Metric].(float64) {
				t.Errorf("point %d %s: measured %v, the written result says %v", i, c.Metric, c.Measured, rs[i][c.Metric])
			}
		}
	}
	if v.Source != m.URL || v.Engine != "llm-d-inference-sim-0.10.2" {
		t.Errorf("source %s engine %s", v.Source, v.Engine)
	}
	// The kept measurements, validated offline with the same profile, give the same comparison.
	meta := `{"document": "measured.json", "defaults": {"gpu": "H100", "engine": "llm-d-inference-sim-0.10.2", "topology": "1xTP1"}}`
	if err := os.WriteFile(filepath.Join(filepath.Dir(out), "measured.meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	off := runValidateJSON(t, "--results", out, "--profile", validateProfile)
	for i := range v.Points {
		off.Points[i].Record = ""
		if a, b := fmt.Sprintf("%+v", v.Points[i]), fmt.Sprintf("%+v", off.Points[i]); a != b {
			t.Errorf("point %d live:\n%s\noffline:\n%s", i, a, b)
		}
	}
}

// TestEndToEndValidateAgainstInferenceSim runs the README's loop against
// llm-d-inference-sim: bench two loads, fit a profile from them with
// metadata naming a catalog GPU, then validate two loads the fit never saw.
//
// Tolerances: throughput, TPOT, ITL and E2E within 20% — what the fit
// reproduces in sample on this server. TTFT is only held within a factor of
// three: the server's TTFT is a constant 50 ms that does not slow other
// requests' decoding, which capsim's step-cost model of a GPU (where a
// prefill occupies the engine) cannot express, and the simulated API
// server's serial work staggers a wave of requests sent at once, which this
// step-less server does not (docs/validate.md: mean TTFT 35% high at
// concurrency 8).
func TestEndToEndValidateAgainstInferenceSim(t *testing.T) {
	sim := simpeer.Start(t, "--model", "Qwen3-8B", "--latency-calculator", "constant",
		"--time-to-first-token", "50ms", "--inter-token-latency", "10ms",
		"--max-num-seqs", "8", "--max-model-len", "4096", "--seed", "42")
	dir := t.TempDir()
	measured := filepath.Join(dir, "sim.json")
	meta := `{"document": "sim.json", "defaults": {"gpu": "H100", "engine": "llm-d-inference-sim-0.10.2", "topology": "1xTP1", "settings": {"max-num-seqs": "8"}}}`
	if err := os.WriteFile(filepath.Join(dir, "sim.meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(dir, "profile.json")
	shape := []string{"--isl", "128", "--osl", "32", "--num-prompts", "16"}
	simpeer.RetryTiming(t, func() []string {
		var stderr bytes.Buffer
		if err := run(append([]string{"bench", "--url", sim.URL, "--model", "Qwen3-8B", "--concurrency", "1,4", "--out", measured}, shape...), io.Discard, &stderr); err != nil {
			t.Fatalf("bench: %v\n%s", err, stderr.String())
		}
		if err := run([]string{"fit", "--from", measured, "--out", profile}, io.Discard, &stderr); err != nil {
			t.Fatalf("fit: %v\n%s", err, stderr.String())
		}
		v := runValidateJSON(t, append([]string{"--url", sim.URL, "--model", "Qwen3-8B", "--gpu", "H100", "--replicas", "1xTP1",
			"--profile", profile, "--concurrency", "2,8"}, shape...)...)
		if v.Engine != "llm-d-inference-sim-0.10.2" || len(v.Points) != 2 {
			t.Fatalf("engine %s, %d points: want the fitted engine and 2 points", v.Engine, len(v.Points))
		}
		var problems []string
		for _, p := range v.Points {
			if p.Completed != 16 || p.Failed != 0 || len(p.Metrics) != len(predict.ValidationMetrics) {
				t.Fatalf("%s: %d completed, %d failed, %d metrics compared", p.Load, p.Completed, p.Failed, len(p.Metrics))
			}
			for _, c := range p.Metrics {
				switch c.Metric {
				case model.RequestThroughput, model.OutputThroughput, model.MeanTPOT, model.MedianTPOT,
					model.MeanITL, model.MedianITL, model.MeanE2EL, model.MedianE2EL:
					if c.AbsPctError > 20 {
						problems = append(problems, fmt.Sprintf("%s %s: measured %.2f, predicted %.2f: %.1f%% off, tolerance 20%%",
							p.Load, c.Metric, c.Measured, c.Predicted, c.AbsPctError))
					}
				case model.MeanTTFT:
					if r := c.Predicted / c.Measured; r < 1.0/3 || r > 3 {
						problems = append(problems, fmt.Sprintf("%s mean TTFT: measured %.2f, predicted %.2f: beyond a factor 3",
							p.Load, c.Measured, c.Predicted))
					}
				}
			}
		}
		return problems
	})
}

// A record that states no request counts (a markdown table) shows "-" for
// them, not "0 completed"; a vLLM result file shows its counts (above).
func TestValidateTableAbsentCounts(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if err := run([]string{"validate", "--results", filepath.Join("testdata", "data", "h100-sweep.md")}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "concurrency 1, ISL 1024, OSL 256: 200 prompts, - completed, - failed") || strings.Contains(out, " 0 completed") {
		t.Errorf("absent counts not shown as -:\n%s", out)
	}
}

// A profile fitted for an older step-cost form (no cost_model) is used,
// with one warning naming it.
func TestOldCostModelProfileWarns(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(validateProfile)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(b), `"cost_model": 2,`, "", 1)
	if old == string(b) {
		t.Fatalf("%s states no cost_model", validateProfile)
	}
	path := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run([]string{"validate", "--results", validateResults, "--profile", path}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if want := "capsim: warning: " + path + " was fitted for cost model 0 and this capsim prices steps with cost model 2"; !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "warning:") != 1 {
		t.Errorf("stderr %q, want one warning starting %q", stderr.String(), want)
	}
}

// --frontend-ms applies to a results file's records as to predict: the
// comparison says the frontend was stated and prices it.
func TestValidateResultsStatedFrontend(t *testing.T) {
	t.Parallel()
	plain := runValidateJSON(t, "--results", validateResults, "--profile", validateProfile)
	stated := runValidateJSON(t, "--results", validateResults, "--profile", validateProfile, "--frontend-ms", "3")
	if plain.Frontend != "" || !strings.HasPrefix(stated.Frontend, "3.0 ms a request, stated (no band)") {
		t.Errorf("frontend %q without the flag, %q with --frontend-ms 3; want none, then the stated one", plain.Frontend, stated.Frontend)
	}
	ttft := func(v predict.Validation) float64 {
		for _, c := range v.Points[0].Metrics {
			if c.Metric == model.MeanTTFT {
				return c.Predicted
			}
		}
		t.Fatal("no mean TTFT compared")
		return 0
	}
	if a, b := ttft(plain), ttft(stated); !(b < a) {
		t.Errorf("mean TTFT at one client %.1f ms with its own frontend, %.1f ms with 3 ms stated; want less", a, b)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--results", validateResults, "--profile", validateProfile, "--frontend-ms", "-1"}, "validate: --frontend-ms must be 0 to 60000, got -1"},
		{[]string{"--results", "testdata/fit/h20-dynamo.md", "--frontend-ms", "5"},
			"validate: --frontend-ms: predict: testdata/fit/h20-dynamo.md line 7: calibrate: a stated frontend latency applies to aggregated deployments: a disaggregated deployment's frontend is priced with its KV transfer (its own fitted costs, or the engine's prior)"},
	} {
		err := run(append([]string{"validate"}, tt.args...), io.Discard, io.Discard)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
}

// validate --format csv is tidy: one header, one row a load point and
// metric, numbers a spreadsheet reads.
func TestValidateCSV(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if err := run([]string{"validate", "--results", validateResults, "--format", "csv"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil || len(rows) < 3 || rows[0][9] != "metric" || rows[0][12] != "abs_pct_error" {
		t.Fatalf("csv: %v %v", err, rows[:min(3, len(rows))])
	}
	for _, r := range rows[1:] {
		if _, err := strconv.ParseFloat(r[10], 64); err != nil || r[1] == "" {
			t.Errorf("row %v: measured %q is not a number or no load: %v", r, r[10], err)
		}
	}
}
