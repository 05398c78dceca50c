// Package stats holds the few summary statistics capsim reports, computed
// the way numpy (and so vLLM's bench serve) computes them: percentiles by
// linear interpolation (Hyndman–Fan type 7, numpy's default) and the
// population standard deviation (ddof=0). montanaflynn/stats' Percentile is
// a nearest-rank rule and gives other numbers, so it is not used for these.
package stats
