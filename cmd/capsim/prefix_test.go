package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capsim/capsim/predict"
)

// --prefix-hit-rate: a good value is simulated (lower TTFT for long
// prompts) and stated in both outputs; a bad one is a one-line error
// naming the flag.
func TestPredictPrefixHitRate(t *testing.T) {
	t.Parallel()
	args := []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "6000", "--osl", "50",
		"--concurrency", "1", "--no-band", "--num-prompts", "100"}
	ttft := map[string]float64{}
	for _, h := range []string{"0", "0.5"} {
		p := predictJSON(t, append(append([]string{}, args...), "--prefix-hit-rate", h)...)
		if (h == "0.5") != (p.PrefixHitRate == 0.5) {
			t.Errorf("--prefix-hit-rate %s: JSON says %v", h, p.PrefixHitRate)
		}
		ttft[h] = p.Points[0].Metrics["mean_ttft_ms"]
	}
	if !(ttft["0.5"] < 0.8*ttft["0"]) {
		t.Errorf("mean TTFT %.0f ms with half of every prompt cached, %.0f ms without", ttft["0.5"], ttft["0"])
	}
	var out bytes.Buffer
	if err := run(append(append([]string{}, args...), "--prefix-hit-rate", "0.5"), &out, io.Discard); err != nil || !strings.Contains(out.String(), "50% of every prompt from the prefix cache") {
		t.Errorf("table output does not state the hit rate (err %v):\n%s", err, out.String())
	}
	for _, bad := range []string{"1", "-0.2", "NaN"} {
		err := run(append(append([]string{}, args...), "--prefix-hit-rate", bad), io.Discard, io.Discard)
		if err == nil || !strings.HasPrefix(err.Error(), "--prefix-hit-rate must be a fraction in [0, 1)") || strings.Contains(err.Error(), "\n") {
			t.Errorf("--prefix-hit-rate %s: err %v", bad, err)
		}
	}
}

// plan states a hit rate in its table's first line (only when one is set)
// and plan --export and predict --export carry it into the README.
func TestPlanAndExportStateThePrefixHitRate(t *testing.T) {
	t.Parallel()
	const clause = "; 40% of every prompt from the prefix cache"
	for _, h := range []string{"0", "0.4"} {
		dir := t.TempDir()
		var out, errb bytes.Buffer
		args := append(append([]string(nil), planArgs...), "--prefix-hit-rate", h, "--no-margin", "--top", "1", "--export", dir)
		if err := run(args, &out, &errb); err != nil {
			t.Fatalf("plan --prefix-hit-rate %s: %v\nstderr: %s", h, err, errb.String())
		}
		first, _, _ := strings.Cut(out.String(), "\n")
		if want := "Qwen3-32B, ISL 3000 / OSL 150 at rate 4 req/s; SLOs ttft_p99<=2500ms, tpot_p99<=60ms"; !strings.HasPrefix(first, want) {
			t.Errorf("plan --prefix-hit-rate %s: first line %q, want it to start %q", h, first, want)
		}
		if strings.HasSuffix(first, clause) != (h != "0") || strings.Count(out.String(), "prefix cache") != strings.Count(first, "prefix cache") {
			t.Errorf("plan --prefix-hit-rate %s: the table's first line %q should end %q only with a hit rate, and be the only one saying it:\n%s", h, first, clause, out.String())
		}
		readmes, _ := filepath.Glob(filepath.Join(dir, "README.md")) // one recommendation: no subdirectory
		if len(readmes) == 0 {
			t.Fatalf("plan --prefix-hit-rate %s --export: no README in %s", h, dir)
		}
		text, _ := os.ReadFile(readmes[0])
		if strings.Contains(string(text), "prefix-cache hit rate of 40%") != (h != "0") {
			t.Errorf("plan --prefix-hit-rate %s --export: README:\n%s", h, text)
		}
	}
	dir := t.TempDir()
	args := []string{"predict", "--gpu", "H20", "--replicas", "1xTP4", "--isl", "3000", "--osl", "150", "--concurrency", "1",
		"--no-band", "--num-prompts", "50", "--prefix-hit-rate", "0.4", "--export", dir}
	if err := run(args, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if text, err := os.ReadFile(filepath.Join(dir, "README.md")); err != nil || !strings.Contains(string(text), clause) || !strings.Contains(string(text), "prefix-cache hit rate of 40%") {
		t.Errorf("predict --prefix-hit-rate 0.4 --export: README (%v):\n%s", err, text)
	}
}

// --exact-output simulates every output at exactly --osl tokens, as capsim
// bench's ignore_eos requests get them: a lone closed-loop client's
// requests then all take the same time, where the default ±20% spread
// gives them a tail. Both outputs say so; with --dataset it is a one-line
// error, since the dataset's own lengths are simulated.
func TestPredictExactOutput(t *testing.T) {
	t.Parallel()
	args := []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "1000", "--osl", "100",
		"--concurrency", "1", "--no-band", "--num-prompts", "50", "--mode", "benchmark-replay"}
	spread := map[bool]float64{}
	for _, exact := range []bool{false, true} {
		a := append([]string{}, args...)
		if exact {
			a = append(a, "--exact-output")
		}
		p := predictJSON(t, a...)
		if p.ExactOutput != exact {
			t.Errorf("--exact-output %v: JSON says %v", exact, p.ExactOutput)
		}
		m := p.Points[0].Metrics
		spread[exact] = m["p99_e2el_ms"]/m["median_e2el_ms"] - 1
	}
	if !(spread[true] < 0.01 && spread[false] > 0.05) {
		t.Errorf("p99 E2E over the median: %.3f with exact outputs, %.3f spread; want under 0.01 and over 0.05", spread[true], spread[false])
	}
	var out bytes.Buffer
	if err := run(append(append([]string{}, args...), "--exact-output"), &out, io.Discard); err != nil || !strings.Contains(out.String(), "every output exactly OSL tokens long (ignore_eos)") {
		t.Errorf("table output does not say the outputs are exact (err %v):\n%s", err, out.String())
	}
	err := run(append(append([]string{}, args...), "--exact-output", "--dataset", "sharegpt"), io.Discard, io.Discard)
	if want := "--exact-output does not apply with --dataset sharegpt: the dataset's own output lengths are simulated"; err == nil || err.Error() != want {
		t.Errorf("--exact-output with --dataset: err %v, want %q", err, want)
	}
}

// predictJSON runs capsim predict with args and --format json.
func predictJSON(t *testing.T, args ...string) predict.Prediction {
	t.Helper()
	var out bytes.Buffer
	if err := run(append(append([]string{}, args...), "--format", "json"), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var p predict.Prediction
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A disaggregated deployment's prefill workers keep prefix caches where
// the engine does (vLLM V1): the shared prefix is served, TTFT falls
// against the same workload without sharing, the table says where it was
// simulated, and a prefix-aware router sends a prompt to the prefill
// worker that holds it: 64 system prompts of 6,144 tokens are more than
// one worker's cache holds, so the shared queue, which sends every group
// to every worker, evicts them, and the router keeps each on one worker.
func TestPredictDisaggregatedPrefixCache(t *testing.T) {
	t.Parallel()
	base := []string{"predict", "--gpu", "H100", "--engine", "vllm-0.11.0", "--model", "Qwen3-32B", "--prefill", "4xTP2", "--decode", "1xTP4",
		"--isl", "8192", "--osl", "64", "--concurrency", "32", "--no-band", "--num-prompts", "1500"}
	shared := []string{"--prefix-groups", "64", "--prompts-per-group", "1024", "--system-prompt-len", "6144"}
	plain := predictJSON(t, base...)
	hit := map[string]float64{}
	var ttft float64
	for _, r := range []string{"shared-queue", "prefix-aware"} {
		args := append(append([]string{}, base...), shared...)
		if r == "prefix-aware" {
			args = append(args, "--router", r)
		}
		p := predictJSON(t, args...)
		if !p.PrefixCaching || !p.Disaggregated {
			t.Fatalf("router %s: prefix caching %v, disaggregated %v", r, p.PrefixCaching, p.Disaggregated)
		}
		hit[r] = p.Points[0].PrefixHitRate
		if r == "shared-queue" {
			ttft = p.Points[0].Metrics["mean_ttft_ms"]
		}
	}
	if !(hit["shared-queue"] > 0.2) || !(hit["prefix-aware"] > hit["shared-queue"]+0.2) || hit["prefix-aware"] > 0.75 {
		t.Errorf("prefill prefix hit rates %v: want most of the shared prefix served, more when routed by prefix", hit)
	}
	if base := plain.Points[0].Metrics["mean_ttft_ms"]; !(ttft < 0.8*base) {
		t.Errorf("mean TTFT %.0f ms with shared prefixes cached, %.0f ms without sharing", ttft, base)
	}
	var out bytes.Buffer
	if err := run(append(append([]string{}, base...), shared...), &out, io.Discard); err != nil || !strings.Contains(out.String(), "simulated per prefill worker, routed shared-queue") {
		t.Errorf("table output does not say where the cache was simulated (err %v):\n%s", err, out.String())
	}
}
