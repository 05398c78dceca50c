// Package stats holds the summary statistics capsim reports, computed the
// way numpy (and so vLLM's bench serve) computes them. Means, medians and
// population standard deviations (ddof=0) come from
// github.com/montanaflynn/stats, whose semantics are numpy's for these.
// Percentiles stay here: numpy (and vLLM) interpolate linearly between
// order statistics (Hyndman–Fan type 7), while montanaflynn/stats'
// Percentile is a nearest-rank rule that gives other numbers.
package stats
