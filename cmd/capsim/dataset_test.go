package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --dataset: predict draws request lengths from the dataset (the tails
// move, the means stay), says so in the table's first line and the JSON,
// and names the flag in a one-line error for a dataset it does not hold;
// plan says so in its first line and its export README.
func TestPredictAndPlanDataset(t *testing.T) {
	t.Parallel()
	args := []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "217", "--osl", "202",
		"--concurrency", "8", "--no-band", "--num-prompts", "400"}
	p99 := map[string]float64{}
	for _, ds := range []string{"", "ShareGPT"} {
		var out bytes.Buffer
		a := append(append([]string{}, args...), "--format", "json")
		if ds != "" {
			a = append(a, "--dataset", ds)
		}
		if err := run(a, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var p struct {
			Dataset string `json:"dataset"`
			Points  []struct {
				Metrics map[string]float64 `json:"metrics"`
			} `json:"points"`
		}
		if err := json.Unmarshal(out.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if want := strings.ToLower(ds); p.Dataset != want {
			t.Errorf("--dataset %q: JSON says %q, want %q", ds, p.Dataset, want)
		}
		p99[ds] = p.Points[0].Metrics["p99_e2el_ms"]
	}
	if !(p99["ShareGPT"] > 1.5*p99[""]) {
		t.Errorf("p99 E2E %.0f ms with ShareGPT's lengths, %.0f ms at the means: want ShareGPT's long tail", p99["ShareGPT"], p99[""])
	}
	const clause = "; request lengths drawn from the sharegpt dataset, scaled to ISL and OSL"
	var out bytes.Buffer
	if err := run(append(append([]string{}, args...), "--dataset", "sharegpt"), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(out.String(), "\n"); !strings.HasSuffix(first, clause) {
		t.Errorf("predict --dataset: first line %q, want it to end %q", first, clause)
	}
	err := run(append(append([]string{}, args...), "--dataset", "sonnet"), io.Discard, io.Discard)
	if err == nil || err.Error() != `--dataset: unknown dataset "sonnet" (known: sharegpt)` {
		t.Errorf("predict --dataset sonnet: err %v", err)
	}
	dir := t.TempDir()
	out.Reset()
	pa := append(append([]string(nil), planArgs...), "--dataset", "sharegpt", "--no-margin", "--top", "1", "--export", dir)
	if err := run(pa, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(out.String(), "\n"); !strings.HasSuffix(first, clause) {
		t.Errorf("plan --dataset: first line %q, want it to end %q", first, clause)
	}
	text, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil || !strings.Contains(string(text), clause) || !strings.Contains(string(text), "the sharegpt dataset's spread of lengths") {
		t.Errorf("plan --dataset --export: README (%v):\n%s", err, text)
	}
}

// With a dataset, plan's latency floors price its shortest request and its
// KV check its longest: a median TTFT the mean-length floor would rule out
// is met, and a TP whose KV cache cannot hold the longest request is left
// out rather than failing the search.
func TestPlanDatasetBounds(t *testing.T) {
	t.Parallel()
	median := []string{"plan", "--model", "Qwen3-32B", "--gpu", "H20", "--tp", "8", "--mode", "aggregated", "--max-gpus", "8",
		"--isl", "3000", "--osl", "150", "--rate", "0.5", "--slo", "ttft_median=200ms", "--confidence", "0.5", "--no-margin", "--top", "1", "--quiet"}
	err := run(median, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no deployment can meet ttft_median<=200ms: even a lone request takes at least") {
		t.Fatalf("at the means: err %v, want the floor to rule 200 ms out (else this test shows nothing)", err)
	}
	var out bytes.Buffer
	if err := run(append(append([]string{}, median...), "--dataset", "sharegpt"), &out, io.Discard); err != nil || !strings.Contains(out.String(), "1xTP8") {
		t.Errorf("with ShareGPT's lengths: err %v, want 1xTP8 to meet the median:\n%s", err, out.String())
	}
	out.Reset()
	long := []string{"plan", "--model", "Qwen3-32B", "--gpu", "H20", "--tp", "1,2", "--mode", "aggregated", "--max-gpus", "2",
		"--isl", "24000", "--osl", "500", "--concurrency", "1", "--slo", "e2el_p99=1000s", "--dataset", "sharegpt", "--no-margin", "--top", "1", "--quiet"}
	if err := run(long, &out, io.Discard); err != nil || !strings.Contains(out.String(), "1xTP2") {
		t.Errorf("longest request beyond TP1's KV cache: err %v, want TP1 left out and 1xTP2 recommended:\n%s", err, out.String())
	}
}
