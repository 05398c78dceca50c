package sim

import (
	"fmt"
	"github.com/capsim/capsim/model"
)

// CostModel prices engine steps for one worker. Implementations live
// outside sim (calibrate fills them); sim knows no GPU's numbers.
type CostModel interface {
	// StepTime returns the duration in seconds of one engine step.
	StepTime(s model.Step) float64
	// DecodeAffine returns base and perKV such that a pure decode step of n
	// sequences attending to k KV tokens in all takes base + perKV·k seconds.
	// The simulator relies on this to advance a decode batch many steps at once.
	DecodeAffine(n int) (base, perKV float64)
}

// PoolConfig describes one pool of identical workers. The engine's limits
// (BlockSize, MaxNumSeqs, MaxBatchedTokens) are required: the simulator
// assumes no engine's defaults.
type PoolConfig struct {
	Workers int       // number of workers (replicas) in the pool
	Cost    CostModel // step prices of one worker
	// KVCapacity is the KV cache of one worker in tokens; 0 means unlimited.
	KVCapacity int
	// BlockSize is the KV block granularity in tokens (--block-size).
	BlockSize int
	// MaxNumSeqs caps the sequences running in one worker (--max-num-seqs).
	MaxNumSeqs int
	// MaxBatchedTokens is the per-step token budget (--max-num-batched-tokens).
	MaxBatchedTokens int
	// DelayedOutput is vLLM V0's asynchronous output processing (on by
	// default from v0.6 until the V1 engine): a step's sampled tokens are
	// detokenized, stop-checked and streamed while the next step runs, so
	// every token — the first and the last included — reaches the client
	// when the following step ends (at once when no step follows). The
	// V1 engine streams a step's outputs as soon as it ends (false).
	DelayedOutput bool
	// PrefillFirst runs prefill work as steps of their own, ahead of the
	// running decodes, which wait meanwhile (SGLang's default scheduler).
	PrefillFirst bool
	// ReserveOutput admits a prompt only while the KV cache can hold every
	// admitted request to its last token (TensorRT-LLM's default
	// GUARANTEED_NO_EVICT capacity scheduler): the running requests then
	// never need preempting. Off, a prompt is admitted on its own blocks
	// and a decode preempted when the cache runs out (vLLM).
	ReserveOutput bool
	// WindowTokens is the KV a running request's sliding-window layers
	// hold beside its full-attention KV, in tokens of the cache's
	// per-token size: each request takes blocks for min(its prompt and
	// output, WindowTokens) tokens when admitted and returns them when it
	// ends or is preempted. vLLM V1's hybrid KV cache manager takes the
	// windowed layers' blocks (those over each request's last window)
	// from the pool the full layers use. 0: no sliding window. A prefill
	// pool of a disaggregated deployment does not read it (the decode
	// worker's reservation holds the window). Not modelled: vLLM keeps a
	// prefill chunk's whole window-layer KV while the chunk runs, more
	// than the window for a chunk longer than it.
	WindowTokens int
	// PrefixCaching keeps a block-level prefix cache per worker (vLLM V1's
	// automatic prefix caching, SGLang's radix cache) for the prompts
	// Config.Sharing says share a prefix: full blocks of computed tokens
	// are kept by content, a new request takes its longest cached prefix of
	// whole blocks without computing it, and blocks no running request
	// references stay cached in the free space until an allocation needs
	// it (least recently used evicted first). Replicas and prefill
	// workers read it; a decode pool does not (it receives whole prompts).
	PrefixCaching bool
}

// Holds reports whether one worker of p can hold a request of tokens KV
// tokens: in whole blocks, as the simulator allocates them, with its
// sliding-window blocks (WindowTokens); a pool with no KVCapacity holds
// any.
func (p PoolConfig) Holds(tokens int) bool {
	return p.KVCapacity <= 0 || (tokens+p.BlockSize-1)/p.BlockSize+int(windowBlocks(int64(tokens), int64(p.WindowTokens), int64(p.BlockSize))) <= p.KVCapacity/p.BlockSize
}

// windowNote is what an error about a request of tokens KV tokens adds
// for its sliding-window blocks: "" without them.
func (p PoolConfig) windowNote(tokens int) string {
	if w := min(tokens, p.WindowTokens); w > 0 {
		return fmt.Sprintf(" and %d of sliding window", w)
	}
	return ""
}

// windowBlocks are the blocks of block tokens a request of tokens tokens
// (prompt and output) holds for its sliding-window layers while it runs:
// min(tokens, window) (PoolConfig.WindowTokens); 0 without a window.
func windowBlocks(tokens, window, block int64) int64 {
	return (min(tokens, window) + block - 1) / block
}

// HoldsPrompt reports whether one prefill worker of p can hold a prompt
// of tokens tokens: its KV cache is counted in tokens, as the simulator's
// prefill pool fills it (a pool with no KVCapacity holds any).
func (p PoolConfig) HoldsPrompt(tokens int) bool {
	return p.KVCapacity <= 0 || tokens <= p.KVCapacity
}

// Routing chooses the worker a request goes to.
type Routing string

const (
	RoundRobin       Routing = "round-robin"       // cycle through workers in order (Dynamo 0.3's router)
	LeastOutstanding Routing = "least-outstanding" // the worker with fewest requests in flight; ties to the lowest index
	Random           Routing = "random"            // a uniformly drawn worker per request (a connection-level balancer such as a Kubernetes Service)
	SharedQueue      Routing = "shared-queue"      // one queue every idle worker pulls from (Dynamo's prefill queue)
	// PrefixAware sends a request to the worker whose prefix cache holds
	// the longest prefix of it, ties to the fewest requests in flight,
	// then the lowest index (llm-d's precise prefix-cache scorer, without
	// its load weighting); least-outstanding when nothing is cached.
	PrefixAware Routing = "prefix-aware"
)

// Transfer prices moving a request's KV cache from a prefill to a decode
// worker: Latency + PerToken·prompt, for the whole prompt, cached prefix
// (Config.PrefixHitRate) included. With a prefix cache this is an upper
// bound: vLLM V1's P/D connectors pull only the tokens the decode worker
// has not cached, so a hit there moves less.
type Transfer struct {
	Latency  float64 // seconds per transfer
	PerToken float64 // seconds per prompt token moved
}

// LengthDist is a distribution of token counts. Kind is one of "fixed"
// (Mean), "uniform" (Min..Max), "normal" (Mean, Std, clipped to Min..Max when
// set), "lognormal" (Mean, Std of the lengths themselves) or "empirical"
// (Values dealt like a shuffled deck: each once per pass, in a random order); sim also accepts "exponential" (Mean).
// Draws are rounded to whole tokens, clipped to Min..Max when set, and at
// least 1 (empirical values are used as given).
type LengthDist struct {
	Kind   string  `json:"kind"`
	Mean   float64 `json:"mean,omitempty"`
	Std    float64 `json:"std,omitempty"`
	Min    int     `json:"min,omitempty"`
	Max    int     `json:"max,omitempty"`
	Values []int   `json:"values,omitempty"`
}

// Fixed is a length distribution that always yields n.
func Fixed(n int) LengthDist { return LengthDist{Kind: "fixed", Mean: float64(n)} }

// Config is one simulated benchmark run against one deployment.
type Config struct {
	// Aggregated deployments set Replicas; disaggregated ones set Prefill and Decode.
	Replicas PoolConfig
	Prefill  PoolConfig
	Decode   PoolConfig
	Transfer Transfer

	// Router picks the replica (aggregated) or the decode worker
	// (disaggregated) for each request; "" means RoundRobin.
	Router Routing
	// PrefillRouter picks the prefill worker; "" means SharedQueue.
	// PrefixAware sends a prompt to the worker whose prefix cache holds
	// the longest prefix of it (Dynamo's KV-aware router).
	PrefillRouter Routing

	// FrontendLatency is each request's time outside the engine in
	// seconds (API server, tokenisation): a request reaches its worker,
	// which the router picked as it was sent, this long after the client
	// sends it, so it counts in TTFT and E2E, and a closed-loop client
	// waits for it before sending its next request.
	FrontendLatency float64
	// FrontendService is the API server's own work per request, in
	// seconds, done one request at a time (one server process tokenises,
	// schedules and hands requests over in turn): a request passes the
	// frontend FrontendLatency after it is sent, but no sooner than
	// FrontendService after the request before it passed. An idle server
	// adds nothing beyond FrontendLatency, which includes this work (a
	// latency below the service is taken as the service); a
	// burst queues there, so its TTFTs grow with its size and the server
	// admits at most 1/FrontendService requests a second. 0 is no queue.
	FrontendService float64
	// FrontendServers is how many API servers there are, each doing
	// FrontendService of work per request (one per engine server: the
	// replicas of an aggregated deployment); 0 means one, and never more
	// than the workers. A request queues at the API server of the worker
	// the router picked (workers split among the servers by index, a
	// pipeline-parallel replica's PP virtual workers sharing one), in send
	// order.
	FrontendServers int

	Load   model.Load
	Input  LengthDist // prompt tokens
	Output LengthDist // generated tokens (a request stops at its drawn length)
	// PrefixHitRate is the fraction, in [0, 1), of every prompt's tokens
	// served from the engine's prefix cache (vLLM's automatic prefix
	// caching, SGLang's radix cache): the first ⌊PrefixHitRate·prompt⌋
	// tokens, at most prompt−1 (an engine always computes the last prompt
	// token), are not prefilled — they cost no step time and use none of a
	// step's token budget — while the rest of the prompt still attends to
	// them. Their KV blocks are held as if computed: each request counts its
	// whole prompt in the KV cache (blocks shared between requests are not
	// deduplicated, so KV usage is an upper bound). A preempted request that
	// recomputes hits the same prefix again. Disaggregated, the prefill
	// worker skips the prefix too, but the transfer to the decode worker
	// still moves the whole prompt's KV (Transfer): an upper bound, as vLLM
	// V1's P/D connectors pull only the tokens the decode side has not
	// cached. 0 prefills every prompt token. A rate above 0 overrides the
	// prefix cache (PoolConfig.PrefixCaching): it is not simulated.
	PrefixHitRate float64
	// Sharing is how the prompts share prefixes, which a prefix cache
	// (PoolConfig.PrefixCaching) serves; the zero value shares nothing.
	// Conversations (Sharing.Turns) grow their prompts, cache or not.
	Sharing model.Sharing
	// NumPrompts is the requests sent in all (BenchmarkReplay) or measured
	// after the warm-up (SteadyState).
	NumPrompts int
	Seed       uint64

	// Mode is BenchmarkReplay ("" too) or SteadyState (see Mode).
	Mode Mode
	// Warmup is, in steady state, the requests sent and left out before
	// the measured ones; 0 means DefaultWarmup.
	Warmup int

	// KeepRequests asks for one RequestRecord per request in the Result.
	KeepRequests bool
	// NoITL leaves the inter-token latencies out of the Result (no *_itl_ms
	// metrics): a caller that reads none, as a fit, skips what is most of a
	// run's statistics work, as ITL takes a sample per token. Every other
	// metric is the same.
	NoITL bool
	// NoSeries leaves the pools' series out of the Result (PoolStats.Series
	// empty); every other statistic is the same.
	NoSeries bool
	// Percentiles, when not nil, are the percentile metrics the caller
	// reads (model.P99TTFT, ...): the Result holds only those of the
	// median_, p90_, p95_ and p99_*_ms metrics, the rest not computed
	// (selecting them was a twentieth of a fit). Every other metric is the
	// same; nil gives them all.
	Percentiles []string
}

// RequestRecord is the life of one simulated request, times in seconds from the run's start.
type RequestRecord struct {
	ID           int     `json:"id"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	Send         float64 `json:"send"`
	FirstToken   float64 `json:"first_token"`
	Done         float64 `json:"done"`
	Preemptions  int     `json:"preemptions,omitempty"`
}

// FrontendPool names the API servers' PoolStats (Config.FrontendService):
// Utilisation is their busy share, MeanQueue the requests waiting for one.
const FrontendPool = "frontend"

// MaxFrontendServers bounds Config.FrontendServers.
const MaxFrontendServers = 1 << 16

// PoolStats is what a capacity planner needs to see inside one pool.
type PoolStats struct {
	Name        string   `json:"name"`        // "replicas", "prefill", "decode" or FrontendPool
	Utilisation float64  `json:"utilisation"` // busy time / (workers × duration)
	MeanQueue   float64  `json:"mean_queue"`  // time-averaged requests waiting
	MeanBatch   float64  `json:"mean_batch"`  // time-averaged sequences per busy step
	MeanKVUsage float64  `json:"mean_kv_usage"`
	MaxKVUsage  float64  `json:"max_kv_usage"`
	Preemptions int      `json:"preemptions"`
	Series      []Sample `json:"series,omitempty"`
}

// Sample is a pool's state at one simulated time.
type Sample struct {
	T       float64 `json:"t"`
	Queue   float64 `json:"queue"`
	Batch   float64 `json:"batch"`
	KVUsage float64 `json:"kv_usage"`
}

// Result is what vllm bench serve would report for the run, plus the pools' internals.
// In steady state, latencies are the measured requests', throughputs and
// pool statistics are over the measurement window (Steady), Completed and
// the token totals count the measured requests.
type Result struct {
	// Mode is the run's Mode.
	Mode Mode `json:"mode"`
	// Metrics holds vLLM's result fields by name (model.MeanTTFT, …), in ms for latencies.
	Metrics   map[string]float64 `json:"metrics"`
	Completed int                `json:"completed"`
	Duration  float64            `json:"duration"` // seconds, first send to last completion
	// MeanInFlight is the time-averaged number of requests between send and
	// completion over Duration (Little's law: ≈ request throughput × mean E2E).
	MeanInFlight float64         `json:"mean_in_flight"`
	Pools        []PoolStats     `json:"pools"`
	Requests     []RequestRecord `json:"requests,omitempty"`
	// Steady describes the measurement of a steady-state run (nil in replay).
	Steady *Steady `json:"steady,omitempty"`
	// PrefixHitRate is the share of the recorded requests' prompt tokens
	// served from a prefix cache at their first admission (the flat
	// Config.PrefixHitRate's share, or what the simulated cache served).
	PrefixHitRate float64 `json:"prefix_hit_rate,omitempty"`
}
