package loadgen

import "github.com/capsim/capsim/internal/stats"

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of values the way
// numpy.percentile does by default (linear interpolation, Hyndman–Fan type 7):
// with the values sorted, the rank is p/100·(n−1) and the result interpolates
// between the two neighbouring order statistics. It returns 0 for no values,
// as vLLM's `np.percentile(xs or 0, p)` does. values is not modified.
func Percentile(values []float64, p float64) float64 {
	return stats.Percentile(values, p)
}

// Summary holds vLLM's statistics of one latency metric, in milliseconds.
type Summary struct {
	Mean   float64
	Median float64
	Std    float64 // population standard deviation (numpy's default ddof=0)
	P90    float64
	P95    float64
	P99    float64
}

// Summarize computes mean, median, population standard deviation and the
// 90th, 95th and 99th percentiles of values given in seconds, returned in
// milliseconds. No values give all zeros, as in vLLM.
func Summarize(seconds []float64) Summary {
	if len(seconds) == 0 {
		return Summary{}
	}
	sorted := stats.Sorted(seconds)
	const ms = 1000
	return Summary{
		Mean:   stats.Mean(sorted) * ms,
		Median: stats.PercentileSorted(sorted, 50) * ms,
		Std:    stats.Std(sorted) * ms,
		P90:    stats.PercentileSorted(sorted, 90) * ms,
		P95:    stats.PercentileSorted(sorted, 95) * ms,
		P99:    stats.PercentileSorted(sorted, 99) * ms,
	}
}
