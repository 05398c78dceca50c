// Package loadgen drives an OpenAI-compatible endpoint the way vLLM's
// `vllm bench serve` does and measures it with vLLM's definitions.
//
// Run offers one load point: a closed loop of Concurrency clients, an open
// loop of gamma-distributed arrivals (shape = burstiness, mean gap = 1/rate,
// rescaled so the last request is due at num_prompts/rate, as vLLM does) with
// an optional concurrency cap, or a burst of every prompt at once. Requests
// stream (stream_options.include_usage) and ask for exactly OSL tokens
// (max_tokens with ignore_eos). On /v1/completions the prompt is an array of
// ISL random token ids, so its length is exact without a tokenizer, and the
// server's usage.prompt_tokens is checked against it; /v1/chat/completions
// sends text whose token count is only approximately ISL. With
// Options.Dataset ("sharegpt") request i asks for its own lengths instead:
// the i-th prompt and output length dealt, like a shuffled deck seeded from
// Seed (datasets.Deal), from the dataset's lengths scaled to means ISL and
// OSL — the lengths the simulator deals for the same seed — and the checks
// of usage against the request compare with those.
//
// Timing follows vLLM bench serve: TTFT is the first streamed chunk that
// carries text minus the send time; ITL are the gaps between later such
// chunks; E2EL runs to the last of them. (vLLM's client also counts chunks
// with an empty choice, such as a chat role announcement or a
// finish-reason-only chunk; on servers that send those, llm-d-inference-sim
// among them, that would add near-zero ITL gaps.) TPOT = (E2EL − TTFT)/(output
// tokens − 1) with output tokens from usage.completion_tokens; percentiles
// interpolate linearly (numpy's default); duration runs from the start of
// the load point to the last completion. A failed request is counted by
// reason and left out of the latency statistics; the run goes on.
//
// The Result marshals to vLLM's --save-result JSON schema (same field names,
// request_rate "inf" for a burst) with capsim's additions under keys that
// start with "capsim_". The package never prints: progress goes through a
// callback.
package loadgen
