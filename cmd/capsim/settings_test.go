package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capsim/capsim/engine"
)

// The engine settings are flags of predict, validate and plan, named as
// vLLM names them, and listed by help.
func TestEngineSettingsFlagsListed(t *testing.T) {
	for _, cmd := range []string{"predict", "validate", "plan"} {
		var out bytes.Buffer
		if err := run([]string{"help", cmd}, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		for _, f := range append(engine.FlagNames, "no-enable-prefix-caching", "no-async-scheduling") {
			if !strings.Contains(out.String(), "--"+f+" ") {
				t.Errorf("help %s does not list --%s", cmd, f)
			}
		}
	}
}

// A prediction runs with the stated settings and says which it stated
// and which are the engine version's defaults: one table line, a JSON field.
func TestPredictEngineSettingsEndToEnd(t *testing.T) {
	args := []string{"predict", "--gpu", "H100", "--model", "Qwen3-32B", "--replicas", "1xTP2", "--isl", "1024", "--osl", "128",
		"--concurrency", "8", "--no-band", "--num-prompts", "200", "--mode", "benchmark-replay",
		"--max-num-seqs", "64", "--no-enable-prefix-caching", "--kv-cache-dtype", "fp8"}
	var out bytes.Buffer
	if err := run(args, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "engine:") {
			line = l
		}
	}
	for _, want := range []string{"--max-num-seqs 64", "--no-enable-prefix-caching", "--kv-cache-dtype fp8",
		"stated: --max-num-seqs --no-enable-prefix-caching --kv-cache-dtype", "defaults on H100-SXM"} {
		if !strings.Contains(line, want) {
			t.Errorf("engine line %q lacks %q", line, want)
		}
	}
	out.Reset()
	if err := run(append(args, "--format", "json"), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var p struct {
		Flags    []engine.Flag `json:"engine_flags"`
		Defaults string        `json:"engine_defaults"`
		Settings []struct {
			MaxNumSeqs int `json:"max_num_seqs"`
		} `json:"engine_settings"`
	}
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	from := map[string]string{}
	for _, f := range p.Flags {
		from[f.Name] = f.From + " " + f.Value
	}
	if from[engine.FlagMaxNumSeqs] != "stated 64" || from[engine.FlagBlockSize] != "default 16" || p.Defaults == "" ||
		len(p.Settings) != 1 || p.Settings[0].MaxNumSeqs != 64 {
		t.Errorf("JSON: flags %v, defaults %q, pools %+v", from, p.Defaults, p.Settings)
	}
}

// A bad value is a one-line error naming the flag, before anything runs.
func TestEngineSettingsBadValues(t *testing.T) {
	base := []string{"--gpu", "H100", "--model", "Qwen3-32B", "--replicas", "1xTP2", "--isl", "1024", "--osl", "128"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--max-num-batched-tokens", "0"}, "--max-num-batched-tokens must be positive"},
		{[]string{"--max-num-seqs", "-3"}, "--max-num-seqs must be positive"},
		{[]string{"--max-model-len", "0"}, "--max-model-len must be positive"},
		{[]string{"--gpu-memory-utilization", "1.2"}, "--gpu-memory-utilization must be a fraction in (0, 1]"},
		{[]string{"--block-size", "12"}, "--block-size must be one of"},
		{[]string{"--enable-prefix-caching", "--no-enable-prefix-caching"}, "--enable-prefix-caching and --no-enable-prefix-caching contradict"},
		{[]string{"--async-scheduling", "--no-async-scheduling"}, "--async-scheduling and --no-async-scheduling contradict"},
		{[]string{"--kv-cache-dtype", "int4"}, "--kv-cache-dtype must be one of"},
		{[]string{"--max-num-batched-tokens", "256", "--max-num-seqs", "512"}, "--max-num-batched-tokens 256 must be at least --max-num-seqs 512"},
		{[]string{"--max-model-len", "512"}, "exceeds the stated --max-model-len 512"},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"predict", "plan"} {
			args := append([]string{cmd}, base...)
			if cmd == "plan" {
				args = []string{"plan", "--model", "Qwen3-32B", "--isl", "1024", "--osl", "128", "--rate", "1", "--slo", "ttft_p99=2000ms", "--gpu", "H100", "--quiet"}
				if strings.Contains(tt.want, "exceeds") {
					continue // plan checks a workload against each candidate's limits
				}
			}
			err := run(append(args, tt.args...), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s %v: %v, want one line with %q", cmd, tt.args, err, tt.want)
			}
		}
	}
	// Dynamo 0.3's prefill workers run unchunked: vLLM refuses a budget below max-model-len.
	err := run([]string{"predict", "--gpu", "H20", "--prefill", "6xTP2", "--decode", "1xTP4", "--isl", "1024", "--osl", "128",
		"--max-num-batched-tokens", "512"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--max-num-batched-tokens 512 is below --max-model-len 4096") {
		t.Errorf("Dynamo prefill budget below max-model-len: %v", err)
	}
	err = run([]string{"validate", "--url", "http://127.0.0.1:1", "--model", "Qwen3-32B", "--gpu", "H100", "--replicas", "1xTP1",
		"--isl", "100", "--osl", "10", "--concurrency", "1", "--block-size", "7"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--block-size must be one of") {
		t.Errorf("validate --block-size 7: %v", err)
	}
}

// plan runs every candidate with the stated settings and does not search
// a stated max-num-seqs.
func TestPlanPinsStatedSettings(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"plan", "--model", "Qwen3-32B", "--isl", "1000", "--osl", "200", "--rate", "1", "--slo", "ttft_p99=2000ms",
		"--gpu", "H20", "--max-gpus", "8", "--top", "2", "--format", "json", "--quiet", "--max-num-seqs", "48"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Recs []struct {
			Settings []struct {
				Role       string `json:"role"`
				MaxNumSeqs int    `json:"max_num_seqs"`
			} `json:"engine_settings"`
		} `json:"recommendations"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Recs) == 0 {
		t.Fatalf("%v: %s", err, out.String()[:min(out.Len(), 300)])
	}
	for _, rec := range r.Recs {
		for _, s := range rec.Settings {
			if s.MaxNumSeqs != 48 {
				t.Errorf("%s pool runs max-num-seqs %d, want the stated 48", s.Role, s.MaxNumSeqs)
			}
		}
	}
}

// validate --results simulates the record with the stated settings over
// the ones its file states: eager steps and two sequences a step serve
// fewer requests a second, and the engine line says so.
func TestValidateResultsWithStatedSettings(t *testing.T) {
	dir := filepath.Join("testdata", "validate")
	args := []string{"validate", "--quiet", "--results", filepath.Join(dir, "inference-sim.json"),
		"--profile", filepath.Join(dir, "inference-sim.profile.json"), "--format", "json"}
	predicted := func(extra ...string) (float64, []engine.Flag) {
		var out bytes.Buffer
		if err := run(append(append([]string{}, args...), extra...), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Points []struct {
				Metrics []struct {
					Metric    string  `json:"metric"`
					Predicted float64 `json:"predicted"`
				} `json:"metrics"`
			} `json:"points"`
			Flags []engine.Flag `json:"engine_flags"`
		}
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v.Points) == 0 {
			t.Fatalf("%v: %s", err, out.String())
		}
		for _, m := range v.Points[0].Metrics {
			if m.Metric == "request_throughput" {
				return m.Predicted, v.Flags
			}
		}
		t.Fatal("no request_throughput")
		return 0, nil
	}
	base, _ := predicted()
	slow, flags := predicted("--enforce-eager", "--max-num-seqs", "2")
	if !(slow < 0.8*base) {
		t.Errorf("predicted %.2f req/s eager at 2 sequences, %.2f as the file states: want fewer", slow, base)
	}
	stated := 0
	for _, f := range flags {
		if f.From == engine.FromStated {
			stated++
		}
	}
	if stated != 2 {
		t.Errorf("flags %+v: want the two stated", flags)
	}
}

// --async-scheduling prices vLLM 0.12's steps as async V1 (its default
// from 0.14) and --no-async-scheduling 0.14's as synchronous V1: a lone
// request's TPOT falls and rises by the CPU overhead the rows differ by;
// the engine line and engine_flags say what was stated, export writes it
// into vllm serve, and an engine without the flag refuses it in one line.
func TestPredictAsyncScheduling(t *testing.T) {
	base := []string{"predict", "--gpu", "H100", "--model", "Qwen3-32B", "--replicas", "1xTP2", "--isl", "1024", "--osl", "128",
		"--concurrency", "1", "--no-band", "--num-prompts", "20"}
	type result struct {
		tpot float64
		flag engine.Flag
	}
	predict := func(extra ...string) result {
		t.Helper()
		var out bytes.Buffer
		if err := run(append(append(append([]string{}, base...), extra...), "--format", "json"), &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		var p struct {
			Flags  []engine.Flag `json:"engine_flags"`
			Points []struct {
				Metrics map[string]float64 `json:"metrics"`
			} `json:"points"`
		}
		if err := json.Unmarshal(out.Bytes(), &p); err != nil || len(p.Points) != 1 {
			t.Fatalf("%v: %v", extra, err)
		}
		r := result{tpot: p.Points[0].Metrics["mean_tpot_ms"]}
		for _, f := range p.Flags {
			if f.Name == engine.FlagAsyncScheduling {
				r.flag = f
			}
		}
		return r
	}
	sync12, async12 := predict("--engine", "vllm-0.12.0"), predict("--engine", "vllm-0.12.0", "--async-scheduling")
	async14, sync14 := predict("--engine", "vllm-0.14.0"), predict("--engine", "vllm-0.14.0", "--no-async-scheduling")
	if !(async12.tpot < sync12.tpot) || !(sync14.tpot > async14.tpot) {
		t.Errorf("mean TPOT: 0.12 %.2f ms, with --async-scheduling %.2f; 0.14 %.2f ms, with --no-async-scheduling %.2f: want the async runs lower",
			sync12.tpot, async12.tpot, async14.tpot, sync14.tpot)
	}
	for _, tt := range []struct {
		got  result
		want engine.Flag
	}{
		{sync12, engine.Flag{Name: engine.FlagAsyncScheduling, Value: "false", From: engine.FromDefault}},
		{async12, engine.Flag{Name: engine.FlagAsyncScheduling, Value: "true", From: engine.FromStated}},
		{async14, engine.Flag{Name: engine.FlagAsyncScheduling, Value: "true", From: engine.FromDefault}},
		{sync14, engine.Flag{Name: engine.FlagAsyncScheduling, Value: "false", From: engine.FromStated}},
	} {
		if tt.got.flag != tt.want {
			t.Errorf("engine_flags lists %+v, want %+v", tt.got.flag, tt.want)
		}
	}

	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(append(append([]string{}, base...), "--engine", "vllm-0.14.0", "--no-async-scheduling", "--export", dir), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--no-async-scheduling — stated: --no-async-scheduling;", "the V1 engine-table row"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if serve, err := os.ReadFile(filepath.Join(dir, "serve.sh")); err != nil || !strings.Contains(string(serve), " --no-async-scheduling") {
		t.Errorf("serve.sh (%v) does not turn async scheduling off:\n%s", err, serve)
	}

	for _, tt := range []struct{ engine, flag, want string }{
		{"vllm-0.9.0.1", "--async-scheduling", "--async-scheduling needs vLLM 0.10 or later; the engine is vllm-0.9.0.1"},
		{"sglang-0.5.5", "--no-async-scheduling", "--no-async-scheduling is vLLM's flag"},
	} {
		err := run(append(append([]string{}, base...), "--engine", tt.engine, tt.flag), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--engine %s %s: %v, want one line with %q", tt.engine, tt.flag, err, tt.want)
		}
	}
}
