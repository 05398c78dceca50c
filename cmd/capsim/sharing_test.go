package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var sharingBase = []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--engine", "vllm-0.9.0.1",
	"--isl", "1536", "--osl", "64", "--concurrency", "4", "--no-band", "--num-prompts", "200"}

func withArgs(base []string, more ...string) []string {
	return append(append([]string{}, base...), more...)
}

// A shared-prefix workload on vLLM V1 (prefix caching on by default) is
// simulated with the replica's prefix cache: its hit rate is stated in
// JSON, table and CSV, and its TTFT is below the same prompts' unshared.
func TestPredictSharedPrefixFlags(t *testing.T) {
	shared := withArgs(sharingBase, "--prefix-groups", "4", "--prompts-per-group", "8", "--system-prompt-len", "1024")
	p := predictJSON(t, shared...)
	plain := predictJSON(t, sharingBase...)
	if p.Sharing.Groups != 4 || p.Sharing.PromptsPerGroup != 8 || p.Sharing.SharedLen != 1024 || !p.PrefixCaching {
		t.Fatalf("JSON sharing %+v, prefix caching %v", p.Sharing, p.PrefixCaching)
	}
	// 32 distinct prompts cycled: after the warm-up every prompt is cached
	// but its last, partial block (1536 = 96 blocks; 95 hit).
	if got := p.Points[0].PrefixHitRate; !(got > 0.9 && got <= 95.0*16/1536) {
		t.Errorf("simulated prefix hit rate %v, want about %v", got, 95.0*16/1536)
	}
	if plain.Points[0].PrefixHitRate != 0 {
		t.Errorf("unshared prompts: hit rate %v", plain.Points[0].PrefixHitRate)
	}
	if a, b := p.Points[0].Metrics["mean_ttft_ms"], plain.Points[0].Metrics["mean_ttft_ms"]; !(a < 0.5*b) {
		t.Errorf("mean TTFT %.0f ms shared, %.0f ms unshared", a, b)
	}
	var out bytes.Buffer
	if err := run(shared, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"prefix hit", "prefix cache: shared prefix: 4 groups × 8 prompts, 1024-token system prompt; simulated per replica, routed round-robin"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(withArgs(shared, "--format", "csv"), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	n := len(rows[0])
	if rows[0][n-2] != "prefix_hit_rate" || rows[0][n-1] != "router" || rows[1][n-1] != "round-robin" {
		t.Errorf("csv header ends %v, row %v", rows[0][n-2:], rows[1][n-2:])
	}
	if h, _ := strconv.ParseFloat(rows[1][n-2], 64); math.Abs(h-p.Points[0].PrefixHitRate) > 1e-5 {
		t.Errorf("csv hit rate %v, JSON %v", h, p.Points[0].PrefixHitRate)
	}
}

// vLLM bench's prefix_repetition: the prompt is prefix + suffix, every
// suffix new, so the hit is the prefix's share once each prefix is cached.
func TestPredictPrefixRepetitionFlags(t *testing.T) {
	args := []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--engine", "vllm-0.9.0.1", "--osl", "64",
		"--concurrency", "4", "--no-band", "--num-prompts", "200",
		"--prefix-repetition-prefix-len", "1024", "--prefix-repetition-suffix-len", "512", "--prefix-repetition-num-prefixes", "4"}
	p := predictJSON(t, args...)
	if p.ISL != 1536 || p.Sharing.Groups != 4 || p.Sharing.PromptsPerGroup != 0 {
		t.Fatalf("ISL %d, sharing %+v", p.ISL, p.Sharing)
	}
	if got, want := p.Points[0].PrefixHitRate, 1024.0/1536; got != want {
		t.Errorf("hit rate %v, want %v", got, want)
	}
}

// A prefix-aware router keeps each group on the replica that caches it;
// round-robin computes every group's prefix on every replica, and under
// KV pressure evicts more.
func TestPredictPrefixAwareRouter(t *testing.T) {
	args := []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "4xTP4", "--engine", "vllm-0.9.0.1",
		"--isl", "4096", "--osl", "64", "--concurrency", "64", "--no-band", "--num-prompts", "2000", "--mode", "benchmark-replay",
		"--prefix-groups", "64", "--prompts-per-group", "64", "--system-prompt-len", "3072"}
	rr := predictJSON(t, withArgs(args, "--router", "round-robin")...)
	pa := predictJSON(t, withArgs(args, "--router", "prefix-aware")...)
	if pa.PrefixRouter != "prefix-aware" || rr.PrefixRouter != "round-robin" {
		t.Fatalf("routers %q, %q", rr.PrefixRouter, pa.PrefixRouter)
	}
	if !(pa.Points[0].PrefixHitRate > rr.Points[0].PrefixHitRate+0.05) {
		t.Errorf("hit rate %v prefix-aware, %v round-robin", pa.Points[0].PrefixHitRate, rr.Points[0].PrefixHitRate)
	}
}

// An engine with prefix caching off by default (vLLM V0) prefills every
// prompt in full and says so; --prefix-hit-rate overrides the workload.
func TestPredictSharedPrefixCachingOff(t *testing.T) {
	shared := withArgs(sharingBase, "--prefix-groups", "4", "--prompts-per-group", "8", "--system-prompt-len", "1024")
	for i, a := range shared {
		if a == "vllm-0.9.0.1" {
			shared[i] = "vllm-0.6.3"
		}
	}
	var out, errb bytes.Buffer
	if err := run(shared, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "prefix caching is off") || !strings.Contains(out.String(), "prefix caching off") {
		t.Errorf("V0: stderr %q\nstdout %s", errb.String(), out.String())
	}
	if p := predictJSON(t, shared...); p.PrefixCaching || p.Points[0].PrefixHitRate != 0 {
		t.Errorf("V0: prefix caching %v, hit rate %v", p.PrefixCaching, p.Points[0].PrefixHitRate)
	}
	flat := withArgs(sharingBase, "--prefix-groups", "4", "--prompts-per-group", "8", "--system-prompt-len", "1024", "--prefix-hit-rate", "0.25")
	if p := predictJSON(t, flat...); p.Points[0].PrefixHitRate < 0.249 || p.Points[0].PrefixHitRate > 0.25 {
		t.Errorf("--prefix-hit-rate 0.25 with a shared-prefix workload: hit rate %v", p.Points[0].PrefixHitRate)
	}
}

func TestPredictSharingFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--prompts-per-group", "8", "--system-prompt-len", "100"}, "--prefix-groups and --prompts-per-group must both be positive"},
		{[]string{"--prefix-groups", "4", "--prompts-per-group", "8", "--system-prompt-len", "1536"}, "--isl 1536 must exceed --system-prompt-len 1536"},
		{[]string{"--prefix-groups", "4", "--prompts-per-group", "8", "--prefix-repetition-num-prefixes", "3"}, "describe two workloads"},
		{[]string{"--prefix-repetition-prefix-len", "100", "--prefix-repetition-suffix-len", "50", "--prefix-repetition-num-prefixes", "3"}, "--isl 1536 is not --prefix-repetition-prefix-len + -suffix-len (150)"},
		{[]string{"--prefix-repetition-prefix-len", "100"}, "must all be positive"},
	} {
		err := run(withArgs(sharingBase, tt.args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.want)
		}
	}
}

// plan takes the same workload flags: on 8 H20s no deployment serves 4
// req/s of 3000-token prompts within the SLOs when every prompt is
// prefilled, while prompts that share a 2048-token system prompt (and
// repeat) are served from the prefix cache and fit.
func TestPlanSharedPrefix(t *testing.T) {
	args := []string{"plan", "--model", "Qwen3-32B", "--isl", "3000", "--osl", "150", "--rate", "4", "--slo", "ttft_p99=2500ms,tpot_p99=60ms",
		"--gpu", "H20", "--max-gpus", "8", "--top", "1", "--no-margin", "--mode", "aggregated", "--no-settings-search", "--num-prompts", "400"}
	if err := run(args, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "no deployment within 8 GPUs meets") {
		t.Fatalf("unshared prompts: err %v, want no deployment", err)
	}
	var out bytes.Buffer
	shared := withArgs(args, "--prefix-groups", "8", "--prompts-per-group", "64", "--system-prompt-len", "2048", "--format", "json")
	if err := run(shared, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Sharing struct {
			Groups int `json:"groups"`
		} `json:"sharing"`
		Recommendations []json.RawMessage `json:"recommendations"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Sharing.Groups != 8 || len(res.Recommendations) == 0 {
		t.Errorf("shared prompts: sharing %+v, %d recommendations", res.Sharing, len(res.Recommendations))
	}
	if err := run(withArgs(args, "--prefix-groups", "8", "--prompts-per-group", "4", "--system-prompt-len", "3000"), io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "plan: --isl 3000 must exceed --system-prompt-len 3000") {
		t.Errorf("system prompt as long as the prompt: err %v", err)
	}
}

// --turns makes each prompt a conversation whose turns grow: the hit rate
// (the history) rises and the table says the mean prompt; plan refuses it.
func TestPredictTurns(t *testing.T) {
	single := withArgs(sharingBase, "--prefix-groups", "2", "--prompts-per-group", "4", "--system-prompt-len", "512")
	one := predictJSON(t, single...)
	multi := withArgs(single, "--turns", "4")
	p := predictJSON(t, multi...)
	if p.Sharing.Turns != 4 || !(p.Points[0].PrefixHitRate > 0.5) {
		t.Fatalf("sharing %+v, hit rate %v", p.Sharing, p.Points[0].PrefixHitRate)
	}
	// A turn prompts with the history: the mean prompt is well above ISL.
	m := p.Points[0].Metrics
	if mean := m["total_input_tokens"] / m["completed"]; !(mean > 2000) || one.Points[0].Metrics["total_input_tokens"]/one.Points[0].Metrics["completed"] != 1536 {
		t.Errorf("mean prompt %v tokens with 4 turns of 1024-token questions", mean)
	}
	var out bytes.Buffer
	if err := run(multi, &out, io.Discard); err != nil || !strings.Contains(out.String(), "2 groups × 4 conversations of 4 turns, 512-token system prompt; mean prompt") {
		t.Errorf("table (err %v):\n%s", err, out.String())
	}
	plan := []string{"plan", "--model", "Qwen3-32B", "--isl", "3000", "--osl", "150", "--rate", "4", "--slo", "ttft_p99=2500ms", "--gpu", "H20",
		"--prefix-groups", "2", "--prompts-per-group", "4", "--turns", "3"}
	if err := run(plan, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "multi-turn conversations are not planned") {
		t.Errorf("plan --turns: err %v", err)
	}
}

// validate reads inference-perf's stage reports with the config beside
// them and simulates each stage with its shared-prefix workload: the same
// reports without their config (no sharing) predict a longer TTFT.
func TestValidateInferencePerfSharedPrefix(t *testing.T) {
	const dir = "../../results/testdata/inference-perf/"
	bare := t.TempDir()
	for _, n := range []string{"stage_0_lifecycle_metrics.json", "stage_1_lifecycle_metrics.json"} {
		data, err := os.ReadFile(dir + n)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bare, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ttft := func(files string) (float64, string) {
		var out, errb bytes.Buffer
		args := []string{"validate", "--results", files, "--gpu", "H20", "--model", "Qwen3-32B", "--topology", "1xTP4", "--engine", "vllm-0.10.1", "--format", "csv"}
		if err := run(args, &out, &errb); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows[1:] {
			if r[1] == "4 req/s" && r[9] == "mean_ttft_ms" {
				v, _ := strconv.ParseFloat(r[11], 64)
				return v, errb.String()
			}
		}
		t.Fatalf("no mean TTFT at 4 req/s in %v", rows)
		return 0, ""
	}
	shared, note := ttft(dir + "stage_0_lifecycle_metrics.json," + dir + "stage_1_lifecycle_metrics.json")
	unshared, _ := ttft(filepath.Join(bare, "stage_0_lifecycle_metrics.json") + "," + filepath.Join(bare, "stage_1_lifecycle_metrics.json"))
	if !strings.Contains(note, "shared prefix: 4 groups × 8 prompts, 1024-token system prompt (stated)") {
		t.Errorf("stderr does not say the workload: %q", note)
	}
	if !(shared < 0.8*unshared) {
		t.Errorf("predicted mean TTFT %.1f ms with the config's shared prefix, %.1f ms without", shared, unshared)
	}
}
