package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/capsim/capsim/model"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func sampleResult() *Result {
	return &Result{
		Date: "20261122-010000", Backend: "openai", ModelID: "tiny", NumPrompts: 2,
		RequestRate: math.Inf(1), Burstiness: 1, MaxConcurrency: 2,
		Duration: 1.5, Completed: 1, Failed: 1, TotalInputTokens: 100, TotalOutputTokens: 10,
		RequestThroughput: 1 / 1.5, OutputThroughput: 10 / 1.5, TotalTokenThroughput: 110 / 1.5,
		TTFT: Summary{50, 50, 0, 50, 50, 50}, TPOT: Summary{10, 10, 0, 10, 10, 10},
		ITL: Summary{10, 10, 1, 11, 11.5, 11.9}, E2EL: Summary{140, 140, 0, 140, 140, 140},
		MaxOutputTokensPerS: 10, MaxConcurrentRequests: 1,
		InputLens: []int{100, 100}, OutputLens: []int{10, 0},
		TTFTs: []float64{0.05, 0}, ITLs: [][]float64{{0.01}, {}}, Latencies: []float64{0.14, 0},
		StartTimes: []float64{0, 0}, QueueTimes: []float64{0, 0.002}, Errors: []string{"", "HTTP 500"},
		ClientQueue: &Summary{0, 0, 0, 0, 0, 0},
		Load:        model.Closed(2), Endpoint: Completions, ISL: 100, OSL: 10, Seed: 3,
		InputLengthsExact: true, Failures: map[string]int{"http_500": 1},
		Metadata: map[string]string{"gpu": "H20", "tensor_parallel_size": "2"},
	}
}

func TestResultJSONGolden(t *testing.T) {
	got, err := json.MarshalIndent(sampleResult(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "result.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("result JSON differs from %s (go test -update to accept):\n%s", golden, got)
	}
}

func TestResultJSONUsesVLLMFields(t *testing.T) {
	open := sampleResult()
	open.RequestRate, open.Burstiness, open.MaxConcurrency = 2.5, 0.5, 0
	open.Load = model.Open(2.5, 0.5)
	open.ScheduleDelay = &DelaySummary{Mean: 1, P50: 1, P99: 2, Max: 3}
	for name, tt := range map[string]struct {
		r                 *Result
		rate, concurrency any
		wantScheduleDelay bool
	}{
		"closed loop": {sampleResult(), "inf", 2.0, false},
		"open loop":   {open, 2.5, nil, true},
	} {
		b, err := json.Marshal(tt.r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["request_rate"] != tt.rate || m["max_concurrency"] != tt.concurrency {
			t.Errorf("%s: request_rate %v max_concurrency %v", name, m["request_rate"], m["max_concurrency"])
		}
		for _, k := range []string{"date", "backend", "model_id", "num_prompts", "burstiness", "duration",
			"completed", "total_input_tokens", "total_output_tokens", "request_throughput", "output_throughput",
			"total_token_throughput", "mean_ttft_ms", "median_tpot_ms", "std_itl_ms", "p90_ttft_ms",
			"p95_tpot_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms", "input_lens",
			"output_lens", "ttfts", "itls", "errors", "capsim_partial", "capsim_failures", "gpu",
			"latencies", "start_times", "queue_times", "rtfx", "max_output_tokens_per_s", "max_concurrent_requests",
			"mean_client_queue_time_ms", "p99_client_queue_time_ms"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: field %q missing", name, k)
			}
		}
		if _, ok := m["capsim_schedule_delay"]; ok != tt.wantScheduleDelay {
			t.Errorf("%s: capsim_schedule_delay present %v", name, ok)
		}
	}
	m := sampleResult().Metrics()
	if m["p99_itl_ms"] != 11.9 || m["request_throughput"] != 1/1.5 || m["mean_e2el_ms"] != 140 {
		t.Errorf("Metrics() = %v", m)
	}
	if r := sampleResult().WithoutDetails(); r.TTFTs != nil || r.StartTimes != nil || sampleResult().TTFTs == nil {
		t.Error("WithoutDetails kept per-request lists vLLM drops without --save-detailed")
	}
	if r := sampleResult().WithoutDetails(); r.Latencies == nil || r.QueueTimes == nil {
		t.Error("WithoutDetails dropped latencies or queue_times, which vLLM keeps")
	}
}

func TestWriteResultsAtomicConcatenatedObjects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := sampleResult(), sampleResult()
	b.Partial = true
	if err := WriteResults(path, []*Result{a, b}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	var got []map[string]any
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if len(got) != 2 || got[0]["capsim_partial"] != false || got[1]["capsim_partial"] != true {
		t.Errorf("read back %d objects: %v", len(got), got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := WriteResults(filepath.Join(dir, "missing", "x.json"), []*Result{a}); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestResultMarshalsTheSameByValue(t *testing.T) {
	r := sampleResult()
	byPointer, err1 := json.Marshal(r)
	byValue, err2 := json.Marshal(*r)
	if err1 != nil || err2 != nil || !bytes.Equal(byPointer, byValue) {
		t.Errorf("value and pointer encodings differ (%v, %v)", err1, err2)
	}
}

// TestSummarizeClientQueue: vLLM's queue_times and client_queue_time
// statistics. A capped open loop queues from each request's due time; a
// closed loop from the start of the load point (vLLM creates every request
// at once and makes it wait for the semaphore).
func TestSummarizeClientQueue(t *testing.T) {
	outs := []outcome{
		{sent: true, start: 0.5, ttft: 0.1, latency: 1, outputTokens: 2, itl: []float64{0.9}},
		{sent: true, start: 1.5, ttft: 0.1, latency: 1, outputTokens: 2, itl: []float64{0.9}},
	}
	due := []time.Duration{0, time.Second}
	open := &Options{Model: "m", NumPrompts: 2, ISL: 1, OSL: 2, Load: model.Load{Kind: model.OpenLoop, Rate: 1, Burstiness: 1, Concurrency: 1}}
	r := summarize(open, []int{1, 1}, []int{2, 2}, outs, due, 3)
	if len(r.QueueTimes) != 2 || r.QueueTimes[0] != 0.5 || r.QueueTimes[1] != 0.5 || r.ClientQueue == nil || r.ClientQueue.Mean != 500 {
		t.Errorf("open loop: queue_times %v client queue %+v", r.QueueTimes, r.ClientQueue)
	}
	if r.E2ELInclQueue == nil || r.E2ELInclQueue.Mean != 1500 {
		t.Errorf("open loop: e2el including queue %+v, want mean 1500 ms", r.E2ELInclQueue)
	}
	closed := &Options{Model: "m", NumPrompts: 2, ISL: 1, OSL: 2, Load: model.Closed(1)}
	r = summarize(closed, []int{1, 1}, []int{2, 2}, outs, due, 3)
	if r.QueueTimes[1] != 1.5 || r.ClientQueue == nil || r.ClientQueue.Mean != 1000 || r.E2ELInclQueue != nil {
		t.Errorf("closed loop: queue_times %v client queue %+v incl %+v", r.QueueTimes, r.ClientQueue, r.E2ELInclQueue)
	}
	uncapped := &Options{Model: "m", NumPrompts: 2, ISL: 1, OSL: 2, Load: model.Open(1, 1)}
	if r = summarize(uncapped, []int{1, 1}, []int{2, 2}, outs, due, 3); r.ClientQueue != nil {
		t.Error("no concurrency cap: vLLM writes no client queue statistics")
	}
}
