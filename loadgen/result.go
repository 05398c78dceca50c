package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/capsim/capsim/internal/atomicfile"
	"github.com/capsim/capsim/model"
)

// Result is one measured load point. It marshals to vLLM bench serve's
// --save-result JSON (field names, units and "inf" as vLLM writes them) with
// capsim's additions under keys starting with "capsim_".
type Result struct {
	Date           string  // vLLM's "%Y%m%d-%H%M%S", local time of the run
	Backend        string  // "openai" for completions, "openai-chat" for chat, as vLLM names them
	Label          string  // free-form label; "" is written as null
	ModelID        string  // the model name sent
	NumPrompts     int     // requests in the load point
	RequestRate    float64 // +Inf for a closed loop and a burst
	Burstiness     float64
	MaxConcurrency int // 0 means none (null)

	Duration             float64 // seconds from the start of the load point to the last completion
	Completed            int
	Failed               int
	TotalInputTokens     int // prompt tokens of completed requests (the server's count)
	TotalOutputTokens    int
	RequestThroughput    float64 // completed requests per second
	OutputThroughput     float64 // output tokens per second
	TotalTokenThroughput float64 // (input + output) tokens per second

	TTFT, TPOT, ITL, E2EL Summary // milliseconds

	MaxOutputTokensPerS   float64 // most text chunks received in one wall-clock second
	MaxConcurrentRequests int     // most completed requests in flight at once
	RTFX                  float64 // vLLM's inverse real-time factor of audio requests; 0 for text

	// ClientQueue summarises, over completed requests, how long each waited
	// on the client side (from its arrival to its send) when a concurrency
	// cap was set: vLLM's client_queue_time statistics, in ms. E2ELInclQueue
	// is E2E latency plus that wait, for open loops with a cap (vLLM's
	// e2el_including_client_queue). Nil when vLLM would not write them.
	ClientQueue, E2ELInclQueue *Summary

	// Per request, in the order they were issued (sent requests only).
	InputLens  []int
	OutputLens []int // 0 for a failed request
	TTFTs      []float64
	ITLs       [][]float64
	Latencies  []float64
	StartTimes []float64 // send offsets from the start of the load point, seconds
	QueueTimes []float64 // client-side wait from arrival to send, seconds (vLLM's queue_times)
	Errors     []string  // "" for a completed request

	// capsim's additions.
	Load                  model.Load
	Endpoint              Endpoint
	ISL, OSL              int    // the requested lengths; with a Dataset, the means its lengths were scaled to
	Dataset               string // the dataset whose lengths the requests took (Options.Dataset); "" for ISL and OSL each
	Seed                  uint64
	InputLengthsExact     bool           // token-id prompts; false for chat's text prompts
	Partial               bool           // interrupted before every request finished
	Canceled              int            // requests cut off by the interruption (not failures)
	Failures              map[string]int // failed requests by reason
	PromptTokenMismatches int            // completed requests whose usage.prompt_tokens ≠ the prompt length they sent (exact inputs only)
	OutputTokenMismatches int            // completed requests whose usage.completion_tokens ≠ the max_tokens they asked for
	ScheduleDelay         *DelaySummary  // open loop and burst: actual − scheduled send; nil for a closed loop

	// Metadata are extra top-level string fields, like vLLM's --metadata KEY=VALUE.
	Metadata map[string]string
}

// DelaySummary summarises how late requests were sent, in milliseconds.
type DelaySummary struct {
	Mean float64 `json:"mean_ms"`
	P50  float64 `json:"median_ms"`
	P99  float64 `json:"p99_ms"`
	Max  float64 `json:"max_ms"`
}

// Metrics returns the result's vLLM-named scalar metrics
// (request_throughput, mean_ttft_ms, p99_e2el_ms, …).
func (r *Result) Metrics() map[string]float64 {
	m := map[string]float64{
		"duration":               r.Duration,
		"completed":              float64(r.Completed),
		"failed":                 float64(r.Failed),
		"total_input_tokens":     float64(r.TotalInputTokens),
		"total_output_tokens":    float64(r.TotalOutputTokens),
		"request_throughput":     r.RequestThroughput,
		"output_throughput":      r.OutputThroughput,
		"total_token_throughput": r.TotalTokenThroughput,
	}
	for _, s := range append(r.summaries(), r.queueSummaries()...) {
		m["mean_"+s.name+"_ms"] = s.Mean
		m["median_"+s.name+"_ms"] = s.Median
		m["std_"+s.name+"_ms"] = s.Std
		m["p90_"+s.name+"_ms"] = s.P90
		m["p95_"+s.name+"_ms"] = s.P95
		m["p99_"+s.name+"_ms"] = s.P99
	}
	return m
}

// queueSummaries are the client-queue statistics vLLM writes when a
// concurrency cap was set.
func (r *Result) queueSummaries() []namedSummary {
	var out []namedSummary
	if r.ClientQueue != nil {
		out = append(out, namedSummary{"client_queue_time", *r.ClientQueue})
	}
	if r.E2ELInclQueue != nil {
		out = append(out, namedSummary{"e2el_including_client_queue", *r.E2ELInclQueue})
	}
	return out
}

type namedSummary struct {
	name string
	Summary
}

func (r *Result) summaries() []namedSummary {
	return []namedSummary{{"ttft", r.TTFT}, {"tpot", r.TPOT}, {"itl", r.ITL}, {"e2el", r.E2EL}}
}

// WithoutDetails returns a copy without the per-request lists vLLM drops
// without --save-detailed (input/output lengths, TTFTs, ITLs, start times,
// errors); latencies and queue_times stay, as in vLLM.
func (r *Result) WithoutDetails() *Result {
	c := *r
	c.InputLens, c.OutputLens, c.TTFTs, c.ITLs, c.StartTimes, c.Errors = nil, nil, nil, nil, nil, nil
	return &c
}

// MarshalJSON writes vLLM's result schema in vLLM's key order, then capsim's keys.
func (r Result) MarshalJSON() ([]byte, error) {
	var o orderedObject
	o.add("date", r.Date)
	o.add("endpoint_type", r.Backend)
	o.add("backend", r.Backend)
	o.add("label", nullIfEmpty(r.Label))
	o.add("model_id", r.ModelID)
	o.add("tokenizer_id", nil)
	o.add("num_prompts", r.NumPrompts)
	keys := make([]string, 0, len(r.Metadata))
	for k := range r.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.add(k, r.Metadata[k])
	}
	if math.IsInf(r.RequestRate, 1) {
		o.add("request_rate", "inf")
	} else {
		o.add("request_rate", r.RequestRate)
	}
	o.add("burstiness", r.Burstiness)
	if r.MaxConcurrency > 0 {
		o.add("max_concurrency", r.MaxConcurrency)
	} else {
		o.add("max_concurrency", nil)
	}
	o.add("duration", r.Duration)
	o.add("completed", r.Completed)
	o.add("failed", r.Failed)
	o.add("total_input_tokens", r.TotalInputTokens)
	o.add("total_output_tokens", r.TotalOutputTokens)
	o.add("request_throughput", r.RequestThroughput)
	o.add("request_goodput", nil)
	o.add("output_throughput", r.OutputThroughput)
	o.add("total_token_throughput", r.TotalTokenThroughput)
	if r.InputLens != nil {
		o.add("input_lens", r.InputLens)
		o.add("output_lens", r.OutputLens)
		o.add("ttfts", r.TTFTs)
		o.add("itls", r.ITLs)
	}
	if r.Latencies != nil {
		o.add("latencies", r.Latencies)
	}
	if r.StartTimes != nil {
		o.add("start_times", r.StartTimes)
	}
	if r.QueueTimes != nil {
		o.add("queue_times", r.QueueTimes)
	}
	if r.InputLens != nil { // generated_texts is not written: capsim does not keep the texts
		o.add("errors", r.Errors)
	}
	o.add("max_output_tokens_per_s", r.MaxOutputTokensPerS)
	o.add("max_concurrent_requests", r.MaxConcurrentRequests)
	o.add("rtfx", r.RTFX)
	for _, s := range append(r.summaries(), r.queueSummaries()...) {
		stats := []struct {
			key string
			v   float64
		}{{"mean", s.Mean}, {"median", s.Median}, {"std", s.Std}, {"p90", s.P90}, {"p95", s.P95}, {"p99", s.P99}}
		for _, st := range stats {
			if r.Completed == 0 {
				o.add(st.key+"_"+s.name+"_ms", nil) // no request finished: absent, never zero
			} else {
				o.add(st.key+"_"+s.name+"_ms", st.v)
			}
		}
	}
	o.add("capsim_load", r.Load.Kind)
	o.add("capsim_endpoint", r.Endpoint)
	o.add("capsim_isl", r.ISL)
	o.add("capsim_osl", r.OSL)
	o.add("capsim_dataset", nullIfEmpty(r.Dataset))
	o.add("capsim_seed", r.Seed)
	o.add("capsim_input_lengths_exact", r.InputLengthsExact)
	o.add("capsim_partial", r.Partial)
	o.add("capsim_canceled", r.Canceled)
	failures := r.Failures
	if failures == nil {
		failures = map[string]int{}
	}
	o.add("capsim_failures", failures)
	o.add("capsim_prompt_token_mismatches", r.PromptTokenMismatches)
	o.add("capsim_output_token_mismatches", r.OutputTokenMismatches)
	if r.ScheduleDelay != nil {
		o.add("capsim_schedule_delay", r.ScheduleDelay)
	}
	if o.err != nil {
		return nil, o.err
	}
	o.buf.WriteByte('}')
	return o.buf.Bytes(), nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// orderedObject writes a JSON object with keys in insertion order.
type orderedObject struct {
	buf bytes.Buffer
	err error
}

func (o *orderedObject) add(key string, v any) {
	if o.err != nil {
		return
	}
	if o.buf.Len() == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	o.buf.Write(k)
	o.buf.WriteByte(':')
	b, err := json.Marshal(v)
	if err != nil {
		o.err = fmt.Errorf("loadgen: encoding %s: %w", key, err)
		return
	}
	o.buf.Write(b)
}

// WriteResults replaces path with results as newline-separated JSON objects
// (the layout of vLLM's --append-result), atomically and with mode 0644
// (see internal/atomicfile): a reader or a crash sees either the old file
// or the new one, never half of one.
func WriteResults(path string, results []*Result) error {
	var buf bytes.Buffer
	for _, r := range results {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := atomicfile.Write(path, buf.Bytes()); err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	return nil
}
