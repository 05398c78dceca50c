package stats

import (
	mstats "github.com/montanaflynn/stats"

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
// ones for an even count (numpy's np.median); 0 for no values. values is
// not modified.
func Median(values []float64) float64 {
	m, err := mstats.Median(values)
	if err != nil {
		return 0
	}
	return m
}

// Mean returns the arithmetic mean of values (numpy's np.mean); 0 for no values.
func Mean(values []float64) float64 {
	m, err := mstats.Mean(values)
	if err != nil {
		return 0
	}
	return m
}

// Std returns the population standard deviation of values (numpy's np.std
// default, ddof=0, as vLLM's std_*_ms fields); 0 for no values.
func Std(values []float64) float64 {
	s, err := mstats.StandardDeviationPopulation(values)
	if err != nil {
		return 0
	}
	return s
}
