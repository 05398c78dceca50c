package loadgen

import (
	"math"
	"sort"
)

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of values the way
// numpy.percentile does by default (linear interpolation, Hyndman–Fan type 7):
// with the values sorted, the rank is p/100·(n−1) and the result interpolates
// between the two neighbouring order statistics. It returns 0 for no values,
// as vLLM's `np.percentile(xs or 0, p)` does. values is not modified.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	return percentileSorted(sorted, p)
}

func percentileSorted(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	p = math.Max(0, math.Min(100, p))
	rank := p / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	frac := rank - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
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
	sorted := append([]float64(nil), seconds...)
	sort.Float64s(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	mean := sum / float64(len(sorted))
	var sq float64
	for _, v := range sorted {
		sq += (v - mean) * (v - mean)
	}
	const ms = 1000
	return Summary{
		Mean:   mean * ms,
		Median: percentileSorted(sorted, 50) * ms,
		Std:    math.Sqrt(sq/float64(len(sorted))) * ms,
		P90:    percentileSorted(sorted, 90) * ms,
		P95:    percentileSorted(sorted, 95) * ms,
		P99:    percentileSorted(sorted, 99) * ms,
	}
}
