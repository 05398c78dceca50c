package stats

import (
	"math"
	"sort"
)

// Percentile returns the p-th percentile (0 ≤ p ≤ 100, clamped) of values
// as numpy.percentile does by default: with the values sorted, the rank is
// p/100·(n−1) and the result interpolates linearly between the two
// neighbouring order statistics. No values give 0, as vLLM's
// `np.percentile(xs or 0, p)` does. values is not modified.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	return PercentileSorted(Sorted(values), p)
}

// PercentileSorted is Percentile for values already sorted ascending; it
// saves the copy and sort when several percentiles of one set are wanted.
func PercentileSorted(sorted []float64, p float64) float64 {
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

// Sorted returns a sorted copy of values.
func Sorted(values []float64) []float64 {
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	return s
}

// Median returns the middle value of values, or the mean of the two middle
// ones for an even count; 0 for no values. values is not modified.
// It equals Percentile(values, 50) up to rounding in the last bit.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := Sorted(values)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Mean returns the arithmetic mean of values, summed in the order given;
// 0 for no values.
func Mean(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values))
}

// Std returns the population standard deviation of values (numpy's np.std
// default, ddof=0), computed in two passes about the mean; 0 for no values.
func Std(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	mean := Mean(values)
	var sq float64
	for _, v := range values {
		sq += (v - mean) * (v - mean)
	}
	return math.Sqrt(sq / float64(len(values)))
}
