// Package plan sizes LLM deployments against latency targets: it searches
// aggregated (NxTPk) and disaggregated (xP(TPa) yD(TPb)) deployments over
// GPU types, bounds each candidate's capacity from its step costs, simulates
// the survivors at the target load, keeps those whose simulated percentiles
// meet every SLO, ranks them by cost and headroom, and reports the Pareto
// frontier of output throughput per GPU against output speed per user.
//
// Verdicts are steady-state simulations (sim.SteadyState, doubled until
// every SLO is met or missed by more than twice its statistical error, or
// 64,000 measured requests): what the deployment does under the sustained
// load, not a benchmark's ramp and drain. A deployment that cannot keep up
// (sim.Steady.Saturated), or keeps up with a pool near critical load whose
// tail latencies no run length settles (sim.Steady.NearCritical), fails
// whatever its latencies. Every verdict prices
// the pools at the pessimistic edge of their cost band for the stated
// Confidence (default Φ(1): +1σ), and a second search with central costs
// says what that margin cost (Result.Margin). Headroom is the highest
// steady-state load still meeting every SLO at that confidence. A short
// benchmark-replay run screens each open-loop candidate first; a candidate
// missing an SLO by at most 15% tries other max-num-seqs and
// max-num-batched-tokens values (Recommendation.Settings says which won).
//
// plan knows nothing of flags or files: the caller resolves names, loads a
// profile (anything with Configure and ResolveEngine, such as
// *calibrate.Profile) and reads progress through a callback.
package plan
