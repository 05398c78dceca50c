package results

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
)

// Inputs of any size in each format, for the linearity benchmarks and the
// hostile-input tests. Each record differs (its load), so Annotate sees
// distinct points.

// largeJSONLines writes n vLLM result objects, one per line (--append-result).
func largeJSONLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"date": "20251118-142233", "backend": "vllm", "model_id": "Qwen/Qwen3-0.6B", "num_prompts": 8, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": %d, "duration": 0.945, "completed": 8, "failed": 0, "total_input_tokens": 4096, "total_output_tokens": 256, "request_throughput": %.3f, "output_throughput": 270.87, "mean_ttft_ms": 30.1, "median_ttft_ms": 29.5, "p99_ttft_ms": 40.2, "mean_tpot_ms": 12.5, "mean_e2el_ms": 420.0}`+"\n", i+1, 8.0+float64(i%97))
	}
	return b.Bytes()
}

// largeMarkdown writes one table of n rows under a heading.
func largeMarkdown(n int) []byte {
	var b bytes.Buffer
	b.WriteString("## Result (ISL:OSL=100:10)\n\n| Concurrency | Request Throughput (req/s) | Mean E2E Latency (ms) |\n|---|---|---|\n")
	for i := range n {
		fmt.Fprintf(&b, "| %d | %.2f | %.1f |\n", i+1, 0.1*float64(i%50+1), 100+float64(i%7))
	}
	return b.Bytes()
}

// largeText writes n "Serving Benchmark Result" blocks.
func largeText(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "Maximum request concurrency: %d\n============ Serving Benchmark Result ============\n"+
			"Successful requests:                     158\nFailed requests:                         2\n"+
			"Benchmark duration (s):                  41.77\nTotal input tokens:                      323584\n"+
			"Total generated tokens:                  40448\nRequest throughput (req/s):              %.2f\n"+
			"Output token throughput (tok/s):         968.35\n---------------Time to First Token----------------\n"+
			"Mean TTFT (ms):                          301.52\nMedian TTFT (ms):                        280.17\n"+
			"P99 TTFT (ms):                           612.44\n-----Time per Output Token (excl. 1st token)------\n"+
			"Mean TPOT (ms):                          15.21\nP99 TPOT (ms):                           18.31\n"+
			"==================================================\n\n", i+1, 3.0+float64(i%89))
	}
	return b.Bytes()
}

var benchSize = 50 << 20

// sized repeats gen until the input is at least size bytes.
func sized(gen func(int) []byte, size int) []byte {
	one := len(gen(2)) - len(gen(1))
	return gen(size/one + 1)
}

// BenchmarkParse50MB parses a 50 MB file of each format the issue named as
// quadratic or unbounded (JSON lines, markdown, text). It reports MB/s,
// the bytes allocated by one parse (alloc-MB) and the heap in use after it,
// records included (heap-MB). 50 MB of short markdown rows is 2.5 M rows,
// over MaxRecords: that case measures how fast it is refused, and
// markdown-at-cap parses the largest table accepted.
func BenchmarkParse50MB(b *testing.B) {
	for _, f := range []struct {
		name   string
		data   func() []byte
		refuse bool
	}{
		{"jsonl", func() []byte { return sized(largeJSONLines, benchSize) }, false},
		{"text", func() []byte { return sized(largeText, benchSize) }, false},
		{"markdown", func() []byte { return sized(largeMarkdown, benchSize) }, true},
		{"markdown-at-cap", func() []byte { return largeMarkdown(MaxRecords) }, false},
	} {
		b.Run(f.name, func(b *testing.B) {
			data := f.data()
			b.SetBytes(int64(len(data)))
			var peak, alloc uint64
			for b.Loop() {
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				recs, err := Parse("big."+f.name, data)
				if f.refuse != (err != nil) || (err == nil && len(recs) == 0) {
					b.Fatalf("%d records, %v", len(recs), err)
				}
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				peak = max(peak, after.HeapInuse)
				alloc = after.TotalAlloc - before.TotalAlloc
				b.ReportMetric(float64(len(recs)), "records")
			}
			b.ReportMetric(float64(len(data))/(1<<20), "input-MB")
			b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
			b.ReportMetric(float64(alloc)/(1<<20), "alloc-MB")
		})
	}
}
