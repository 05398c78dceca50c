package results

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Hostile inputs (issue 15): every case is refused with this exact text, or
// read with the checks stated. The large ones run under the test's deadline.

const hostileBlock = "============ Serving Benchmark Result ============\n" +
	"Successful requests:                     %s\n" +
	"Benchmark duration (s):                  41.77\n" +
	"Request throughput (req/s):              %s\n" +
	"Mean TTFT (ms):                          301.52\n" +
	"==================================================\n"

func TestHostileResults(t *testing.T) {
	cases := []struct {
		name, file, data, want string
	}{
		{"text count overflow", "h.txt", fmt.Sprintf(hostileBlock, "2e19", "3.78"),
			`results: h.txt:2: field "Successful requests": want a non-negative integer, got "2e19"`},
		{"text negative count", "h.txt", fmt.Sprintf(hostileBlock, "-5", "3.78"),
			`results: h.txt:2: field "Successful requests": want a non-negative number, got "-5"`},
		{"text negative throughput", "h.txt", fmt.Sprintf(hostileBlock, "158", "-7.6"),
			`results: h.txt:4: field "Request throughput (req/s)": want a non-negative number, got "-7.6"`},
		{"text duplicate line", "h.txt", strings.Replace(fmt.Sprintf(hostileBlock, "158", "3.78"), "Mean TTFT (ms):                          301.52\n",
			"Mean TTFT (ms):                          301.52\nMean TTFT (ms): 280\n", 1),
			`results: h.txt:6: field "Mean TTFT (ms)": duplicate line in the result block (also at line 5)`},
		{"json negative throughput", "h.json", `{"completed": 8, "request_throughput": -7.6}`,
			`results: h.json:1: field "request_throughput": want a non-negative number, got -7.6`},
		{"json negative latency", "h.json", "{\"completed\": 8,\n \"mean_ttft_ms\": -1}",
			`results: h.json:2: field "mean_ttft_ms": want a non-negative number, got -1`},
		{"json absurd prompt", "h.json", `{"completed": 2, "request_throughput": 1, "total_input_tokens": 2e14}`,
			`results: h.json:1: field "total_input_tokens": 2e+14 tokens over 2 completed requests is a mean prompt of 1e+14 tokens, more than 10000000`},
		{"json absurd output", "h.json", `{"completed": 1, "request_throughput": 1, "total_output_tokens": 1e300}`,
			`results: h.json:1: field "total_output_tokens": 1e+300 tokens over 1 completed requests is a mean output of 1e+300 tokens, more than 10000000`},
		{"csv absurd prompt", "h.csv", "isl,osl,request_throughput\n200000000000,10,1\n",
			`results: h.csv:2: field "isl": a mean prompt of 2e+11 tokens, want at most 10000000`},
		{"json absurd throughput", "h.json", `{"completed": 2, "request_throughput": 1e308}`,
			`results: h.json:1: field "request_throughput": 1e+308 is beyond 1e+15, more than any benchmark measures`},
		{"json count overflow", "h.json", `{"completed": 2e19, "request_throughput": 1}`,
			`results: h.json:1: field "completed": want a non-negative integer, got 2e+19`},
		{"json negative length", "h.json", `{"completed": 1, "request_throughput": 1, "input_len": -1000}`,
			`results: h.json:1: field "input_len": want a non-negative integer, got -1000`},
		{"json negative per-request length", "h.json", `{"completed": 2, "request_throughput": 1, "input_lens": [10, -3]}`,
			`results: h.json:1: field "input_lens": element 1 is -3, want a non-negative number`},
		{"json duplicate key", "h.json", "{\"completed\": 8,\n \"request_throughput\": 1.5,\n \"request_throughput\": 150}",
			`results: h.json:3: field "request_throughput": duplicate key (also at line 2)`},
		{"markdown negative metric", "h.md", "| Concurrency | Request Throughput (req/s) |\n|---|---|\n| 4 | -7.6 |\n",
			`results: h.md:3: field "Request Throughput (req/s)": want a non-negative number, got "-7.6"`},
		{"markdown negative concurrency", "h.md", "| Concurrency | Request Throughput (req/s) |\n|---|---|\n| -4 | 7.6 |\n",
			`results: h.md:3: field "Concurrency": want a non-negative integer, got "-4"`},
		{"markdown duplicate column", "h.md", "| Concurrency | Mean TTFT (ms) | Avg TTFT (ms) |\n|---|---|---|\n| 4 | 10 | 20 |\n",
			`results: h.md:1: field "Avg TTFT (ms)": duplicate column: "Mean TTFT (ms)" also gives mean_ttft_ms`},
		{"markdown duplicate load column", "h.md", "| Concurrency | Clients | Mean TTFT (ms) |\n|---|---|---|\n| 4 | 8 | 20 |\n",
			`results: h.md:1: field "Clients": duplicate column: "Concurrency" also gives the concurrency`},
		{"html negative metric", "h.html", "<table><tr><th>Concurrency</th><th>Mean TTFT (ms)</th></tr><tr><td>1</td><td>-3</td></tr></table>",
			`results: h.html:1: field "Mean TTFT (ms)": want a non-negative number, got "-3"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := Parse(tc.file, []byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v (%d records)\nwant %s", err, len(recs), tc.want)
			}
		})
	}
}

func TestHostileSidecars(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"negative gpu_count", `{"document": "x.md", "defaults": {"gpu_count": -8}}`,
			`results: x.meta.json: field "defaults.gpu_count": want a count from 0 to 1e12, got -8`},
		{"negative isl", `{"document": "x.md", "defaults": {}, "rows": {"a": {"isl": -1000}}}`,
			`results: x.meta.json: field "rows.a.isl": want a token count from 0 to 10000000, got -1000`},
		{"absurd osl_max", `{"document": "x.md", "defaults": {"osl_max": 100000000000}}`,
			`results: x.meta.json: field "defaults.osl_max": want a token count from 0 to 10000000, got 1e+11`},
		{"negative num_prompts", `{"document": "x.md", "defaults": {}, "sections": [{"match": ["a"], "num_prompts": -1}]}`,
			`results: x.meta.json: field "sections[0].num_prompts": want a count from 0 to 1e12, got -1`},
		{"duplicate key", "{\"document\": \"x.md\",\n \"defaults\": {\"gpu\": \"H20\",\n \"gpu\": \"H100\"}}",
			`results: x.meta.json:3: field "defaults.gpu": metadata: duplicate key`},
		{"unknown field", `{"document": "x.md", "defaults": {"gpus": 8}}`,
			`results: x.meta.json: metadata: unknown field "gpus"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMeta("x.meta.json", []byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
	// A byte-order mark is not an error.
	m, err := ParseMeta("x.meta.json", []byte("\ufeff{\"document\": \"x.md\", \"defaults\": {\"gpu\": \"H20\", \"gpu_count\": 8}}"))
	if err != nil || m.Defaults.GPUCount != 8 {
		t.Errorf("sidecar with a BOM: %v, %+v", err, m)
	}
}

// TestByteOrderMarkText: a BOM before the first text block or table row
// keeps it one; direct calls of the parsers too.
func TestByteOrderMarkText(t *testing.T) {
	for _, tc := range []struct {
		data string
		line int
	}{{"\ufeff" + fmt.Sprintf(hostileBlock, "158", "3.78"), 1}, {"\ufeff| Concurrency | Mean TTFT (ms) |\n|---|---|\n| 4 | 10 |\n", 3}} {
		recs, err := Parse("bom.txt", []byte(tc.data))
		if err != nil || len(recs) != 1 || recs[0].Source.Line != tc.line {
			t.Errorf("Parse with a BOM: %v, %+v", err, recs)
		}
	}
}

// withinDeadline runs f, failing the test if it has not returned a little
// before the test binary's deadline (or within two minutes without one).
// It bounds a regression to quadratic time without a wall-clock assertion
// on a shared machine.
func withinDeadline(t *testing.T, what string, f func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
	}
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("%s did not finish in time", what)
	}
}

// TestHostileLarge: inputs the audit found slow or unbounded parse within
// the deadline; a file of more than MaxRecords rows is refused.
func TestHostileLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	// 20,000 JSON objects (6.8 MB) took 53 s when every key's line was
	// counted from the start of the file.
	jsonl := largeJSONLines(20000)
	withinDeadline(t, "20,000 JSON lines", func() {
		recs, err := Parse("big.jsonl", jsonl)
		if err != nil || len(recs) != 20000 || recs[19999].Source.Line != 20000 {
			t.Errorf("%d records, %v", len(recs), err)
		}
	})
	text := largeText(5000)
	withinDeadline(t, "5,000 text blocks", func() {
		recs, err := Parse("big.txt", text)
		if err != nil || len(recs) != 5000 {
			t.Errorf("%d records, %v", len(recs), err)
		}
	})
	md := largeMarkdown(MaxRecords + 1)
	withinDeadline(t, "a markdown table over the record cap", func() {
		_, err := Parse("big.md", md)
		want := fmt.Sprintf("results: big.md:%d: more than 200000 records: capsim reads at most 200000 load points per file", MaxRecords+5)
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	var arr bytes.Buffer
	arr.WriteString("[\n")
	for i := range MaxRecords + 1 {
		if i > 0 {
			arr.WriteString(",\n")
		}
		arr.WriteString(`{"completed": 1, "request_throughput": 1}`)
	}
	arr.WriteString("\n]\n")
	withinDeadline(t, "a JSON array over the record cap", func() {
		_, err := Parse("big.json", arr.Bytes())
		want := fmt.Sprintf("results: big.json:%d: more than 200000 records: capsim reads at most 200000 load points per file", MaxRecords+2)
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
}

// TestNumberArrayRefusedCheaply (issue 37): a JSON array of 5 million numbers
// (10 MB) is refused at its first element, without a tree of every number
// (a 20 MB one took 1.8 GB and 33 s).
func TestNumberArrayRefusedCheaply(t *testing.T) {
	data := []byte("[" + strings.Repeat("1,", 5_000_000) + "1]")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Parse("nums.json", data)
	runtime.ReadMemStats(&after)
	const want = "results: nums.json:1: want a JSON object in the result array, got a number"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("refusing 10 MB of numbers allocated %d MB, want under 64", got>>20)
	}
}
