// Package plan sizes LLM deployments against latency targets: it searches
// aggregated (NxTPk) and disaggregated (xP(TPa) yD(TPb)) deployments over
// GPU types, bounds each candidate's capacity from its step costs, simulates
// the survivors at the target load, keeps those whose simulated percentiles
// meet every SLO, ranks them by cost and headroom, and reports the Pareto
// frontier of output throughput per GPU against output speed per user.
//
// plan knows nothing of flags or files: the caller resolves names, loads a
// profile (anything with Configure and ResolveEngine, such as
// *calibrate.Profile) and reads progress through a callback.
package plan
