package predict

import (
	"math"
	"slices"

	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
)

// Comparison is one metric measured against predicted.
type Comparison struct {
	Metric    string  `json:"metric"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	// AbsPctError is model.AbsPctError: |predicted − measured| / measured × 100.
	AbsPctError float64 `json:"abs_pct_error"`
}

// Compare pairs the measured and predicted values of metrics, in order;
// missing lists the metrics either side lacks or that cannot be compared
// (a measurement that is zero or not finite).
func Compare(measured, predicted map[string]float64, metrics []string) (cs []Comparison, missing []string) {
	cs = []Comparison{}
	for _, name := range metrics {
		m, okM := measured[name]
		p, okP := predicted[name]
		e, ok := model.AbsPctError(m, p)
		if !okM || !okP || !ok {
			missing = append(missing, name)
			continue
		}
		cs = append(cs, Comparison{Metric: name, Measured: m, Predicted: p, AbsPctError: e})
	}
	return cs, missing
}

// ErrorSummary is the median and maximum absolute % error of a metric over points.
type ErrorSummary struct {
	Metric string  `json:"metric"`
	Median float64 `json:"median_abs_pct_error"`
	Max    float64 `json:"max_abs_pct_error"`
	Points int     `json:"points"`
}

// Summarise gives, for each of metrics compared at least once, the median
// and maximum absolute % error over every comparison.
func Summarise(cs []Comparison, metrics []string) []ErrorSummary {
	var out []ErrorSummary
	for _, name := range metrics {
		var errs []float64
		for _, c := range cs {
			if c.Metric == name {
				errs = append(errs, c.AbsPctError)
			}
		}
		if len(errs) == 0 {
			continue
		}
		out = append(out, ErrorSummary{Metric: name, Median: stats.Median(errs), Max: slices.Max(errs), Points: len(errs)})
	}
	return out
}

// MedianError is the median absolute % error over every comparison; NaN for none.
func MedianError(cs []Comparison) float64 {
	if len(cs) == 0 {
		return math.NaN()
	}
	errs := make([]float64, len(cs))
	for i, c := range cs {
		errs[i] = c.AbsPctError
	}
	return stats.Median(errs)
}

// MedianErrors is the median absolute % error of each metric compared.
func MedianErrors(cs []Comparison) map[string]float64 {
	var metrics []string
	for _, c := range cs {
		if !slices.Contains(metrics, c.Metric) {
			metrics = append(metrics, c.Metric)
		}
	}
	out := map[string]float64{}
	for _, e := range Summarise(cs, metrics) {
		out[e.Metric] = e.Median
	}
	return out
}
