package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capsim/capsim/internal/simpeer"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// benchMock is a minimal OpenAI-compatible streaming server. onRequest, if
// set, runs with the 1-based request count before the response is written.
type benchMock struct {
	*httptest.Server
	count     atomic.Int64
	auth      atomic.Value
	onRequest func(n int64)
}

func newBenchMock(t *testing.T, onRequest func(int64)) *benchMock {
	m := &benchMock{onRequest: onRequest}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := m.count.Add(1)
		m.auth.Store(r.Header.Get("Authorization"))
		var body struct {
			Prompt    []int `json:"prompt"`
			MaxTokens int   `json:"max_tokens"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if m.onRequest != nil {
			m.onRequest(n)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		time.Sleep(5 * time.Millisecond)
		for k := range body.MaxTokens {
			if k > 0 {
				time.Sleep(2 * time.Millisecond)
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\"x\"}]}\n\n")
			f.Flush()
		}
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n",
			len(body.Prompt), body.MaxTokens)
	}))
	t.Cleanup(m.Close)
	return m
}

// readResults reads a --out file: JSON objects one after another.
func readResults(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []map[string]any
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

func TestBenchWritesOneResultPerLoadPoint(t *testing.T) {
	m := newBenchMock(t, nil)
	out := filepath.Join(t.TempDir(), "results.json")
	t.Setenv("CAPSIM_TEST_KEY", "k123")
	var stdout, stderr bytes.Buffer
	err := run([]string{"bench", "--url", m.URL, "--model", "m", "--isl", "16", "--osl", "4",
		"--concurrency", "1,2", "--rate", "50,inf", "--num-prompts", "6", "--out", out,
		"--metadata", "gpu=H20", "--metadata", "tensor_parallel_size=2", "--label", "mock",
		"--api-key-env", "CAPSIM_TEST_KEY"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if got := m.count.Load(); got != 1+4*6 { // the test request, then 4 load points of 6
		t.Errorf("server saw %d requests, want 25", got)
	}
	if got := m.auth.Load(); got != "Bearer k123" {
		t.Errorf("Authorization %v", got)
	}
	rs := readResults(t, out)
	if len(rs) != 4 {
		t.Fatalf("%d results in %s, want 4", len(rs), out)
	}
	want := []struct {
		rate        any
		concurrency any
	}{{"inf", 1.0}, {"inf", 2.0}, {50.0, nil}, {"inf", nil}}
	for i, r := range rs {
		if r["request_rate"] != want[i].rate || r["max_concurrency"] != want[i].concurrency {
			t.Errorf("result %d: request_rate %v max_concurrency %v, want %v %v",
				i, r["request_rate"], r["max_concurrency"], want[i].rate, want[i].concurrency)
		}
		if r["completed"] != 6.0 || r["capsim_partial"] != false || r["gpu"] != "H20" || r["label"] != "mock" ||
			r["total_input_tokens"] != 96.0 || r["model_id"] != "m" {
			t.Errorf("result %d: %v", i, r)
		}
		if _, ok := r["mean_e2el_ms"]; !ok {
			t.Errorf("result %d lacks mean_e2el_ms", i)
		}
	}
	// The results package reads the file back: same load points, same metrics.
	recs, err := results.ParseFile(out)
	if err != nil {
		t.Fatalf("results.ParseFile: %v", err)
	}
	wantLoads := []model.Load{model.Closed(1), model.Closed(2), model.Open(50, 1), model.Open(math.Inf(1), 1)}
	if len(recs) != len(wantLoads) {
		t.Fatalf("results.ParseFile read %d records, want %d", len(recs), len(wantLoads))
	}
	for i, rec := range recs {
		if rec.Workload.Load.String() != wantLoads[i].String() || rec.Completed != 6 || rec.Errors != 0 ||
			rec.Workload.ISL != 16 || rec.Workload.OSL != 4 || rec.System.Model != "m" {
			t.Errorf("record %d: load %v completed %d errors %d ISL %v OSL %v model %q", i, rec.Workload.Load,
				rec.Completed, rec.Errors, rec.Workload.ISL, rec.Workload.OSL, rec.System.Model)
		}
		for _, name := range []string{"mean_ttft_ms", "p99_tpot_ms", "median_itl_ms", "mean_e2el_ms", "request_throughput"} {
			if got, ok := rec.Metric(name); !ok || got != rs[i][name].(float64) {
				t.Errorf("record %d: %s = %v (present %v), file has %v", i, name, got, ok, rs[i][name])
			}
		}
	}
	table := stdout.String()
	for _, s := range []string{"concurrency 1", "concurrency 2", "rate 50 req/s", "burst", "mean_ttft_ms", "p99_e2el_ms"} {
		if !strings.Contains(table, s) {
			t.Errorf("table lacks %q:\n%s", s, table)
		}
	}
	if !strings.Contains(stderr.String(), "6/6 done") {
		t.Errorf("no progress on stderr:\n%s", stderr.String())
	}
}

func TestBenchJSONSummary(t *testing.T) {
	m := newBenchMock(t, nil)
	var stdout, stderr bytes.Buffer
	err := run([]string{"bench", "--url", m.URL, "--model", "m", "--isl", "8", "--osl", "3",
		"--concurrency", "2", "--num-prompts", "4", "--format", "json", "--skip-check"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rs []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &rs); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(rs) != 1 || rs[0]["completed"] != 4.0 || rs[0]["ttfts"] != nil || rs[0]["mean_tpot_ms"] == nil {
		t.Errorf("json summary %v", rs)
	}
}

func TestBenchInterruptKeepsCompletedPointsAndMarksPartial(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Point one takes requests 1–4; the interruption comes during point two.
	m := newBenchMock(t, func(n int64) {
		if n == 6 {
			cancel()
		}
	})
	out := filepath.Join(t.TempDir(), "results.json")
	var stdout, stderr bytes.Buffer
	err := benchContext(ctx, []string{"--url", m.URL, "--model", "m", "--isl", "8", "--osl", "3",
		"--concurrency", "1,1,1", "--num-prompts", "4", "--out", out, "--skip-check"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "interrupted during concurrency 1;") || strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("err %v, want an interruption naming the load point, without Go's context wording", err)
	}
	rs := readResults(t, out)
	if len(rs) != 2 {
		t.Fatalf("%d results written, want the completed point and the partial one", len(rs))
	}
	if rs[0]["capsim_partial"] != false || rs[0]["completed"] != 4.0 {
		t.Errorf("first point %v", rs[0])
	}
	if rs[1]["capsim_partial"] != true || rs[1]["completed"].(float64) >= 4 {
		t.Errorf("second point partial %v completed %v", rs[1]["capsim_partial"], rs[1]["completed"])
	}
	if !strings.Contains(stdout.String(), "(partial)") {
		t.Errorf("summary does not mark the partial point:\n%s", stdout.String())
	}
}

func TestBenchRejectsBadFlags(t *testing.T) {
	base := []string{"bench", "--url", "http://127.0.0.1:1", "--model", "m", "--isl", "8", "--osl", "3", "--concurrency", "1"}
	without := func(flag string) []string {
		var out []string
		for i := 0; i < len(base); i++ {
			if base[i] == flag {
				i++
				continue
			}
			out = append(out, base[i])
		}
		return out
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no url", without("--url"), "--url is required"},
		{"no model", without("--model"), "--model is required"},
		{"no isl", without("--isl"), "--isl"},
		{"no osl", without("--osl"), "--osl"},
		{"no load points", without("--concurrency"), "--concurrency and/or --rate"},
		{"zero concurrency", append(without("--concurrency"), "--concurrency", "0"), "positive"},
		{"bad rate", append(base, "--rate", "fast"), "--rate"},
		{"negative rate", append(base, "--rate", "-2"), "--rate"},
		{"bad burstiness", append(base, "--burstiness", "0"), "--burstiness"},
		{"infinite burstiness", append(base, "--burstiness", "inf"), "--burstiness: burstiness must be a positive finite number, got +Inf"},
		{"bad endpoint", append(base, "--endpoint", "embeddings"), "--endpoint"},
		{"bad format", append(base, "--format", "yaml"), "--format"},
		{"bad metadata", append(base, "--metadata", "novalue"), "KEY=VALUE"},
		{"unset key variable", append(base, "--api-key-env", "CAPSIM_SURELY_UNSET_VAR"), "CAPSIM_SURELY_UNSET_VAR"},
		{"stray argument", append(base, "extra"), "unexpected argument"},
		{"unwritable out", append(base, "--out", "/nonexistent-dir/x.json"), "--out: atomicfile: cannot write /nonexistent-dir/x.json: no directory /nonexistent-dir"},
		{"server down", base, "test request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(tt.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestEndToEndBenchAgainstInferenceSim(t *testing.T) {
	sim := simpeer.Start(t, "--model", "tiny", "--latency-calculator", "constant",
		"--time-to-first-token", "50ms", "--inter-token-latency", "10ms",
		"--max-num-seqs", "4", "--max-model-len", "8192", "--seed", "42")
	simpeer.RetryTiming(t, func() []string {
		out := filepath.Join(t.TempDir(), "results.json")
		var stdout, stderr bytes.Buffer
		err := run([]string{"bench", "--url", sim.URL, "--model", "tiny", "--isl", "300", "--osl", "20",
			"--concurrency", "1,8", "--rate", "5", "--num-prompts", "12", "--out", out}, &stdout, &stderr)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		t.Logf("stdout:\n%s", stdout.String())
		rs := readResults(t, out)
		if len(rs) != 3 {
			t.Fatalf("%d results, want 3", len(rs))
		}
		var problems []string
		for i, r := range rs {
			if r["completed"] != 12.0 || r["failed"] != 0.0 || r["total_input_tokens"] != 12*300.0 ||
				r["total_output_tokens"] != 12*20.0 || r["capsim_prompt_token_mismatches"] != 0.0 {
				t.Fatalf("point %d: completed %v failed %v input %v output %v mismatches %v", i, r["completed"], r["failed"],
					r["total_input_tokens"], r["total_output_tokens"], r["capsim_prompt_token_mismatches"])
			}
			if tpot := r["median_tpot_ms"].(float64); tpot < 9.5 || tpot > 13 {
				problems = append(problems, fmt.Sprintf("point %d: median TPOT %.2f ms, configured 10", i, tpot))
			}
		}
		// Concurrency 1 sees the configured TTFT; concurrency 8 on 4 slots makes
		// 8 of the 12 requests wait a full service time (50 + 19·10 ms).
		if ttft := rs[0]["median_ttft_ms"].(float64); ttft < 50 || ttft > 65 {
			problems = append(problems, fmt.Sprintf("concurrency 1: median TTFT %.2f ms, configured 50", ttft))
		}
		if ttft := rs[1]["median_ttft_ms"].(float64); ttft < 50+0.8*240 {
			problems = append(problems, fmt.Sprintf("concurrency 8 on 4 slots: median TTFT %.2f ms, want ≥ %.0f from queueing", ttft, 50+0.8*240))
		}
		return problems
	})
}
