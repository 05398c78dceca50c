package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/capsim/capsim/model"
)

// SLO is one latency target: a statistic of a latency family must not
// exceed LimitMs.
type SLO struct {
	Family  string  `json:"family"`   // ttft, tpot, itl or e2el
	Stat    string  `json:"stat"`     // mean, median, p90, p95 or p99
	LimitMs float64 `json:"limit_ms"` // the largest acceptable value, in ms
}

// Metric is the vLLM result field the SLO reads, e.g. "p99_ttft_ms".
func (s SLO) Metric() string { return model.MetricName(s.Stat, s.Family) }

// String is the SLO as the user writes it: "ttft_p99<=2000ms".
func (s SLO) String() string {
	return fmt.Sprintf("%s_%s<=%sms", s.Family, s.Stat, strconv.FormatFloat(s.LimitMs, 'g', -1, 64))
}

// Label is the SLO's name without its limit: "ttft_p99".
func (s SLO) Label() string { return s.Family + "_" + s.Stat }

// sloStats are the statistics an SLO may bound (std is not a target).
var sloStats = []string{"mean", "median", "p90", "p95", "p99"}

// ParseSLOs parses a comma-separated list such as
// "ttft_p99=2000ms,tpot_p99=50ms". A key is FAMILY_STAT (ttft_p99), STAT_FAMILY
// (p99_ttft) or vLLM's field name (p99_ttft_ms); p50 means median. A value is
// a positive number with unit ms or s; a bare number is in ms.
func ParseSLOs(s string) ([]SLO, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("plan: no SLO given (want e.g. ttft_p99=2000ms,tpot_p99=50ms)")
	}
	var out []SLO
	seen := map[string]bool{}
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		key, val, ok := strings.Cut(field, "=")
		if !ok {
			return nil, fmt.Errorf("plan: SLO %q: want METRIC_STAT=VALUE, e.g. ttft_p99=2000ms", field)
		}
		slo, err := parseSLOKey(strings.TrimSpace(key))
		if err != nil {
			return nil, err
		}
		slo.LimitMs, err = parseMillis(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("plan: SLO %q: %w", field, err)
		}
		if seen[slo.Metric()] {
			return nil, fmt.Errorf("plan: SLO %s given twice", slo.Label())
		}
		seen[slo.Metric()] = true
		out = append(out, slo)
	}
	return out, nil
}

func parseSLOKey(key string) (SLO, error) {
	k := strings.TrimSuffix(strings.ToLower(key), "_ms")
	a, b, ok := strings.Cut(k, "_")
	if !ok {
		return SLO{}, fmt.Errorf("plan: SLO %q: want METRIC_STAT, e.g. ttft_p99 (metrics: %s; stats: %s)",
			key, strings.Join(model.LatencyMetrics, ", "), strings.Join(sloStats, ", "))
	}
	if isFamily(b) && !isFamily(a) {
		a, b = b, a
	}
	if !isFamily(a) {
		return SLO{}, fmt.Errorf("plan: SLO %q: unknown latency metric %q (known: %s)", key, a, strings.Join(model.LatencyMetrics, ", "))
	}
	if b == "p50" {
		b = "median"
	}
	if !slices.Contains(sloStats, b) {
		return SLO{}, fmt.Errorf("plan: SLO %q: unknown statistic %q (known: %s)", key, b, strings.Join(sloStats, ", "))
	}
	return SLO{Family: a, Stat: b}, nil
}

func isFamily(s string) bool { return slices.Contains(model.LatencyMetrics, s) }

// parseMillis reads "2000ms", "2s", "1.5 s" or "2000" (ms) as milliseconds.
func parseMillis(v string) (float64, error) {
	num, scale := v, 1.0
	switch lv := strings.ToLower(v); {
	case strings.HasSuffix(lv, "ms"):
		num = v[:len(v)-2]
	case strings.HasSuffix(lv, "s"):
		num, scale = v[:len(v)-1], 1000
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a duration (want e.g. 2000ms or 2s)", v)
	}
	if x <= 0 {
		return 0, fmt.Errorf("%q must be positive", v)
	}
	return x * scale, nil
}

// Miss is how far a simulated run is from one SLO.
type Miss struct {
	SLO   SLO
	Value float64 // the simulated value in ms
}

// Ratio is Value / limit: above 1 the SLO is missed.
func (m Miss) Ratio() float64 { return m.Value / m.SLO.LimitMs }

// check returns, per SLO, the simulated value, and whether all are met.
// A metric the simulator did not report counts as +Inf, so it never passes silently.
func check(slos []SLO, metrics map[string]float64) ([]Miss, bool) {
	out := make([]Miss, len(slos))
	ok := true
	for i, s := range slos {
		v, present := metrics[s.Metric()]
		if !present || math.IsNaN(v) {
			v = math.Inf(1)
		}
		out[i] = Miss{SLO: s, Value: v}
		if v > s.LimitMs {
			ok = false
		}
	}
	return out, ok
}

// worst is the SLO with the highest value-to-limit ratio.
func worst(ms []Miss) Miss {
	var w Miss
	best := math.Inf(-1)
	for _, m := range ms {
		if r := m.Ratio(); r > best {
			best, w = r, m
		}
	}
	return w
}
