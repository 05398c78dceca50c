package results_test

import (
	"fmt"

	"github.com/capsim/capsim/results"
)

func ExampleParse() {
	page := []byte(`# vLLM 4xTP4

## Benchmark Result (ISL:OSL=3000:150)

| Concurrency | Reqeuest Throughput (req/s) | Mean TTFT (ms) | P99 TTFT (ms) |
|:-:|:-:|:-:|:-:|
| 1 | 0.29 | 475.28 | 482.74 |
| 8 | 2.69 | 604.92 | 1603.15 |
`)
	recs, err := results.Parse("runs.md", page)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		ttft, _ := r.Metric("mean_ttft_ms")
		fmt.Printf("%s %s ISL %.0f OSL %.0f: %.2f req/s, mean TTFT %.0f ms\n",
			r.ID, r.Workload.Load, r.Workload.ISL, r.Workload.OSL, r.Metrics["request_throughput"], ttft)
	}

	_, err = results.Parse("bad.md", []byte("| Concurrency | Mean TTFT (ms) |\n|---|---|\n| 2 | fast |\n"))
	fmt.Println(err)
	// Output:
	// runs:7 concurrency 1 ISL 3000 OSL 150: 0.29 req/s, mean TTFT 475 ms
	// runs:8 concurrency 8 ISL 3000 OSL 150: 2.69 req/s, mean TTFT 605 ms
	// results: bad.md:3: field "Mean TTFT (ms)": "fast" is not a number
}
