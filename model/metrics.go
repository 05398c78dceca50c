package model

// Metric names, exactly as vLLM's bench serve writes them in its result JSON.
const (
	RequestThroughput    = "request_throughput"
	OutputThroughput     = "output_throughput"
	TotalTokenThroughput = "total_token_throughput"
	Duration             = "duration"
	// TotalInputTokens and TotalOutputTokens are the tokens of the
	// completed requests: with their count, the realised mean lengths.
	TotalInputTokens  = "total_input_tokens"
	TotalOutputTokens = "total_output_tokens"

	MeanTTFT   = "mean_ttft_ms"
	MedianTTFT = "median_ttft_ms"
	StdTTFT    = "std_ttft_ms"
	P99TTFT    = "p99_ttft_ms"
	MeanTPOT   = "mean_tpot_ms"
	MedianTPOT = "median_tpot_ms"
	StdTPOT    = "std_tpot_ms"
	P99TPOT    = "p99_tpot_ms"
	MeanITL    = "mean_itl_ms"
	MedianITL  = "median_itl_ms"
	StdITL     = "std_itl_ms"
	P99ITL     = "p99_itl_ms"
	MeanE2EL   = "mean_e2el_ms"
	MedianE2EL = "median_e2el_ms"
	StdE2EL    = "std_e2el_ms"
	P99E2EL    = "p99_e2el_ms"
)

// LatencyMetrics are the per-request latency families vLLM reports.
var LatencyMetrics = []string{"ttft", "tpot", "itl", "e2el"}

// LatencyStats are the statistics vLLM reports for each latency family
// (p90/p95 appear when --metric-percentiles asks for them).
var LatencyStats = []string{"mean", "median", "std", "p90", "p95", "p99"}

// MetricName builds a vLLM metric name such as "p99_ttft_ms" from a statistic and a family.
func MetricName(stat, family string) string { return stat + "_" + family + "_ms" }
