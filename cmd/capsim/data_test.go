package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/capsim/capsim/results"
)

func runDataJSON(t *testing.T, args ...string) results.Listing {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(append([]string{"data", "--format", "json"}, args...), &out, &errb); err != nil {
		t.Fatalf("capsim data %v: %v (stderr %q)", args, err, errb.String())
	}
	var got results.Listing
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if got.Count != len(got.Records) {
		t.Fatalf("count %d but %d records", got.Count, len(got.Records))
	}
	return got
}

// TestDataFixtures: every record of all five seed documents, with the counts of issue 2.
func TestDataFixtures(t *testing.T) {
	t.Parallel()
	got := runDataJSON(t)
	want := map[string]int{
		"seeds/000_bb4ba2627dda1b55.md":  8,
		"seeds/001_357f409fe92bfa55.md":  8,
		"seeds/002_902df92d1b3a4732.txt": 23,
		"seeds/003_c8260fc8a46c64c0.md":  88,
		"seeds/004_40ae512a668d8e46.md":  112,
	}
	if got.Count != 239 || len(got.Counts) != len(want) {
		t.Fatalf("count %d counts %v, want 239 in %v", got.Count, got.Counts, want)
	}
	for f, n := range want {
		if got.Counts[f] != n {
			t.Errorf("%s: %d records, want %d", f, got.Counts[f], n)
		}
	}
}

func TestDataFilters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"--gpu", "h20"}, 112},
		{[]string{"--engine", "DYNAMO"}, 56},
		{[]string{"--engine", "vllm-0.9"}, 40}, // H20's vllm-0.9.0.1 and L40S's vllm-0.9.0 (seeds 000/001)
		{[]string{"--engine", "vllm-0.9.0.1"}, 24},
		{[]string{"--model", "qwen3"}, 112},
		{[]string{"--gpu", "L40S", "--model", "8B"}, 8},
		{[]string{"--source", "003"}, 88},
		{[]string{"--source", "002_902"}, 23},
		{[]string{"--gpu", "MI210", "--model", "Qwen-32B"}, 0},
		{[]string{"--gpu", "V100", "--model", "32B"}, 2},
		{[]string{"--gpu", "tpu"}, 0},
	}
	for _, tt := range tests {
		got := runDataJSON(t, tt.args...)
		if got.Count != tt.want {
			t.Errorf("capsim data %v: %d records, want %d", tt.args, got.Count, tt.want)
		}
		if got.Records == nil {
			t.Errorf("capsim data %v: records is null, want []", tt.args)
		}
	}
}

func TestDataTable(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if err := run([]string{"data", "--source", "004", "--engine", "dynamo"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+56+1 {
		t.Fatalf("%d lines, want header + 56 rows + summary:\n%s", len(lines), out.String())
	}
	for _, want := range []string{"ID", "GPU", "TOPOLOGY", "ISL/OSL", "LOAD", "REQ/S", "TTFT ms", "TPOT ms", "E2E ms", "ERRORS"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("header %q lacks %q", lines[0], want)
		}
	}
	row := strings.Fields(lines[1])
	wantRow := []string{"004:79", "H20", "16", "Qwen3-32B", "dynamo-0.3.0", "P", "3xTP4", "D", "1xTP4", "3000/150", "c=1", "0.27", "40.3", "714", "20.2", "3724", "0", "ttft-tail"}
	if strings.Join(row, " ") != strings.Join(wantRow, " ") {
		t.Errorf("first row\n got %q\nwant %q", row, wantRow)
	}
	if !strings.HasPrefix(lines[len(lines)-1], "56 records (seeds/004_40ae512a668d8e46.md 56)") {
		t.Errorf("summary line %q", lines[len(lines)-1])
	}

	out.Reset()
	if err := run([]string{"data", "--gpu", "tpu"}, &out, &errb); err != nil || out.String() != "no records match\n" {
		t.Errorf("no match: %q, %v", out.String(), err)
	}
}

// TestDataFiles ingests user files: a real --save-result file, vLLM's text
// output, and a markdown table with its sidecar metadata.
func TestDataFiles(t *testing.T) {
	t.Parallel()
	save := "testdata/data/vllm-infqps-concurrency4-Qwen3-0.6B-20251118-142233.json"
	got := runDataJSON(t, "--file", save)
	if got.Count != 1 {
		t.Fatalf("%d records from the --save-result file, want 1", got.Count)
	}
	r := got.Records[0]
	if r.System.Model != "Qwen/Qwen3-0.6B" || r.Workload.Load.Concurrency != 4 || r.Workload.NumPrompts != 8 ||
		r.Workload.ISL != 512 || r.Workload.OSL != 32 || r.Source.Format != results.FormatVLLMJSON {
		t.Errorf("save-result record: %+v", r)
	}
	for _, m := range []string{"request_throughput", "mean_ttft_ms", "p90_ttft_ms", "p99_e2el_ms", "median_itl_ms", "max_output_tokens_per_s"} {
		if _, ok := r.Metrics[m]; !ok {
			t.Errorf("save-result record lacks %s", m)
		}
	}

	// Repeated, comma-separated and positional file arguments all count.
	got = runDataJSON(t, "--file", save+",testdata/data/bench-output.txt", "--file", "testdata/data/h100-sweep.md")
	if got.Count != 1+2+3 {
		t.Fatalf("%d records from three files, want 6: %v", got.Count, got.Counts)
	}
	if again := runDataJSON(t, save, "testdata/data/h100-sweep.md"); again.Count != 4 {
		t.Errorf("positional files: %d records, want 4", again.Count)
	}
	for _, r := range got.Records {
		if r.Source.File != "testdata/data/h100-sweep.md" {
			continue
		}
		if r.System.GPU != "H100-SXM" || r.System.GPUCount != 2 || r.System.Engine != "vllm-0.10.1" || r.System.Settings["max-num-batched-tokens"] != "8192" {
			t.Errorf("sidecar metadata not applied: %+v", r.System)
		}
	}
	// Filters apply to files too.
	if f := runDataJSON(t, "--file", "testdata/data/h100-sweep.md", "--gpu", "h100"); f.Count != 3 {
		t.Errorf("--gpu on files: %d records, want 3", f.Count)
	}
}

func TestDataErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--file", "testdata/data/broken.md"}, `results: testdata/data/broken.md:4: field "Request Throughput (req/s)": missing cell`},
		{[]string{"--file", "testdata/data/nope.json"}, "results: stat testdata/data/nope.json: no such file or directory"},
		{[]string{"--format", "yaml"}, `--format must be table, json or csv, got "yaml"`},
		{[]string{"--gpus", "H20"}, "unknown flag: --gpus"},
		{[]string{"--file", ","}, "results: no result files named"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		err := run(append([]string{"data"}, tt.args...), &out, &errb)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("capsim data %v: error %v, want one line starting %q", tt.args, err, tt.want)
		}
		if out.Len() != 0 {
			t.Errorf("capsim data %v wrote output on error: %q", tt.args, out.String())
		}
	}
}
