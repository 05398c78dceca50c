// Package sim is a deterministic discrete-event simulator of LLM serving:
// aggregated replicas with chunked prefill or disaggregated prefill and
// decode pools, continuous batching, KV-cache capacity and KV transfer,
// driven by closed-loop or open-loop load, reporting vLLM bench serve's
// metrics. Run is the entry point; it knows no GPU's numbers and prices
// every engine step through Config's CostModels.
//
// # Load
//
// As vLLM's bench serve generates it. Requests are drawn in order: prompt
// and output lengths from Config.Input and Config.Output, each from its own
// PCG stream seeded by Config.Seed (arrival gaps from a third), so changing
// one distribution does not shift the others. An open loop sends request 0
// at t = 0 and each next one after a Gamma(shape = burstiness, mean = 1/rate)
// gap; a burst sends all at t = 0; a closed loop of N clients is a burst
// capped at N in flight. With a cap (Load.Concurrency) a request waits at the
// client and its send time, from which TTFT and E2E count, is when it gets
// a slot (vLLM takes the start timestamp inside the semaphore). An open
// loop's Burstiness of 0 means 1 (Poisson), vLLM's default.
//
// # Modes: benchmark replay and steady state
//
// BenchmarkReplay (the default) is the finite run a benchmark makes:
// NumPrompts requests from an empty system, every one measured, the run
// ending with the last completion, so its ramp-up and drain are in the
// numbers as they are in a real benchmark's. Fitting and validating
// against measurements use it.
//
// SteadyState measures what a deployment does under a sustained load: the
// first Warmup requests (DefaultWarmup: a quarter of NumPrompts, at least
// 100 and four times the concurrency) are sent and not measured; the next
// NumPrompts are; the load goes on (the closed loop's clients keep
// sending, the open loop keeps arriving) until the last measured request
// completes, where the run stops; an open loop far past capacity stops
// arriving sooner, once every measured request is sent and its backlog has
// grown over the window by more than max(2 × NumPrompts, 20,000)
// (Steady.ArrivalsStopped). Latencies are the measured requests';
// ITL counts the decode steps that end inside the window (first measured
// send to last measured completion); throughputs count every completion
// in the window and divide by its length; pool statistics are over the
// window too. Result.Steady gives the window, the offered and achieved
// rates, whether an open loop is saturated (completing under 97% of what
// arrives), and per mean and p99 a relative error: a 95% batch-means
// confidence half-width (20 batches in send order) for means, half the
// difference between the two halves' p99s for p99s. Converge reruns with
// twice the measured requests until those errors are within tolerance.
//
// # Aggregated replicas (Config.Replicas)
//
// Each replica is a vLLM V1-style scheduler. A step serves, in order: every
// running decode (one token each), running partial prefills, then waiting
// requests in FIFO order while the token budget (MaxBatchedTokens), the
// sequence cap (MaxNumSeqs) and free KV blocks allow; a prompt longer than
// what is left of the budget is chunked across steps. The step costs
// Cost.StepTime(model.Step{...}); a pure decode step costs
// DecodeAffine(n): base + perKV·(KV tokens). A request's first token comes
// at the end of the step that completes its prefill; each later token at
// the end of one decode step. A decode step of a request with c tokens
// cached attends to c+1 tokens (its cache plus the token it computes).
// Requests sent at the same instant are scheduled together. vLLM V0's
// chunked-prefill scheduler (vllm/core/scheduler.py,
// _schedule_chunked_prefill: running decodes, running partial prefills,
// then waiting prompts, max_num_partial_prefills 1 leaving the whole
// budget to them) orders a step the same way. With PoolConfig.DelayedOutput
// (V0's async output processing) every token reaches the client when the
// step after the one computing it ends, or at once when none follows.
//
// # The frontend (Config.FrontendLatency, FrontendService)
//
// The router picks a request's worker as the request is sent (a load
// balancer in front of the servers). The request then spends
// FrontendLatency outside the engine (HTTP, tokenising) at that worker's
// API server (FrontendServers of them) before the worker gets it, counted
// in its TTFT and E2E. Each server works on one request at a time,
// FrontendService apiece within the latency, so a burst's requests pass
// one server at least that far apart. The servers report as the pool
// FrontendPool: its MeanQueue is the time-averaged number of requests
// waiting for a server after their latency, while its Series count every
// request inside the servers, latency included. Workers are split among
// the servers by index (idx·FrontendServers/workers): evenly when the
// count divides the workers, as calibrate builds it (one per replica).
//
// # Disaggregated pools (Config.Prefill, Config.Decode), Dynamo 0.3 style
//
// The router (Config.Router: round-robin by default, least-outstanding, or
// random: a uniform draw per request from its own seeded stream, as a
// connection-level balancer such as a Kubernetes Service spreads a client
// that opens a connection per request) picks a decode worker, as it picks
// an aggregated pool's replica. At its next step boundary (at once when idle) the
// decode worker reserves ceil(prompt/BlockSize) KV blocks (and a
// sliding-window model's window blocks, PoolConfig.WindowTokens), in FIFO order,
// waiting while its cache is full; so its capacity also bounds the requests
// in prefill and transfer. The prompt then goes to the prefill pool: one
// shared queue every idle worker pulls from (Config.PrefillRouter's default)
// or per-worker queues (round-robin, least-outstanding). A prefill worker
// batches queued prompts up to MaxBatchedTokens and MaxNumSeqs per step,
// chunking a prompt longer than the budget across steps; its KVCapacity,
// when set, bounds the prompt tokens it holds. When a prompt is done, its
// KV takes Transfer.Latency + Transfer.PerToken·prompt seconds to reach
// the decode worker, where it joins the decode batch at the next step
// boundary (immediately when idle), MaxNumSeqs permitting.
//
// The first token is streamed by the decode worker at the end of its first
// step for the request (vLLM's prefill worker samples a token too, but the
// client sees tokens only from the decode worker). So a lone request has
//
//	TTFT = prefill step + transfer + first decode step
//
// and, in general, TTFT = client send → end of that first decode step,
// which includes waiting for KV blocks, the prefill queue, the prefill, the
// transfer and waiting for a step boundary. The request generates all of
// its output tokens on the decode worker, one per step.
//
// # KV cache
//
// Each worker holds KVCapacity tokens (0: unlimited) in blocks of BlockSize.
// A sequence holds ceil(tokens/BlockSize) blocks, growing as it decodes.
// When the next step's decodes need more blocks than are free, the most
// recently admitted running request is preempted (recompute, as vLLM V1):
// it frees its blocks and goes to the front of the waiting queue to prefill
// its prompt plus the tokens generated so far, locally, again; the
// re-prefill emits its next token. The same happens when a running partial
// prefill cannot get blocks. A request that cannot fit any worker's cache
// at its full length makes Run return an error; it never hangs.
//
// # Speed
//
// Decoding requests are never walked step by step. An engine keeps a step
// counter S and, per request, offsets so that its KV tokens are S + off;
// it keeps the sum of offsets, their counts modulo BlockSize (the blocks the
// next steps allocate) and a heap of completion steps. With a constant
// membership of n requests, step k of a run costs base + perKV·(K₁ + k·n),
// so the end of step j is a closed-form quadratic: one event advances the
// batch to the earliest of its next completion, the last step whose KV
// blocks still fit, or (cut short when new work arrives) the first step
// boundary after the arrival.
//
// # Metrics
//
// Exactly as vllm bench serve computes them: TTFT = first token − send;
// TPOT = (E2E − TTFT)/(output − 1) for output > 1; ITL = every gap between
// consecutive tokens of a request (a run of steps contributes its step
// durations, each weighted by the requests decoding); E2E = done − send;
// duration = first send (t = 0) to last completion; throughputs over that
// duration. Statistics: mean, median, std (population, numpy's np.std),
// p90, p95, p99 with numpy's default linear (type 7) percentile, in ms.
// Result.Metrics also holds "duration" (s), "completed",
// "total_input_tokens" and "total_output_tokens", as vLLM's result JSON.
// Each distribution keeps exact (value, weight) samples up to 4096
// distinct entries, so small runs match numpy exactly; beyond that it folds
// them into a deterministic log histogram (bucket width below 2^-13 of the
// value), so percentiles carry a relative error under 1.3e-4, while mean and
// std stay exact sums. Memory is bounded by the requests in flight plus
// these samples (and Config.KeepRequests' records when asked).
//
// Pool statistics: utilisation = Σ step time / (workers × duration);
// MeanQueue = time-averaged requests waiting (replicas: waiting for a
// prefill slot; prefill: queued prompts; decode: waiting for KV blocks,
// for a decode slot after transfer, or preempted); MeanBatch = sequences
// per step weighted by step time; KV usage = allocated blocks / capacity
// over the pool (time-averaged, blocks allocated during a run of decode
// steps counted from its middle; 0 when unlimited; not tracked for the
// prefill pool); Series samples the pool on a time grid that coarsens as
// the run grows (at most 256 points): Queue as MeanQueue, Batch = sequences
// in the workers' current steps per worker, KVUsage = allocated blocks /
// pool capacity.
//
// # Determinism
//
// Simulated time only (float64 seconds); events at the same time run in the
// order they were scheduled; no map iteration affects results. The same
// Config and Seed give byte-identical Results.
package sim
