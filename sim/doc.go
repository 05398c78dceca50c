// Package sim is a deterministic discrete-event simulator of LLM serving:
// aggregated replicas with chunked prefill or disaggregated prefill and
// decode pools, continuous batching, KV-cache capacity and KV transfer,
// driven by closed-loop or open-loop load, reporting vLLM bench serve's metrics.
package sim
