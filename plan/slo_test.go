package plan

import (
	"math"
	"strings"
	"testing"
)

func TestParseSLOs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []SLO
	}{
		{"ttft_p99=2000ms,tpot_p99=50ms", []SLO{{"ttft", "p99", 2000}, {"tpot", "p99", 50}}},
		{"p99_ttft=2s", []SLO{{"ttft", "p99", 2000}}},
		{"p95_e2el_ms=1.5s", []SLO{{"e2el", "p95", 1500}}},
		{" itl_median = 30 ", []SLO{{"itl", "median", 30}}},
		{"TTFT_P50=100MS", []SLO{{"ttft", "median", 100}}},
		{"e2el_mean=10s,itl_p90=0.04s", []SLO{{"e2el", "mean", 10000}, {"itl", "p90", 40}}},
	}
	for _, tc := range tests {
		got, err := ParseSLOs(tc.in)
		if err != nil {
			t.Errorf("ParseSLOs(%q): %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("ParseSLOs(%q) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			w := tc.want[i]
			if got[i].Family != w.Family || got[i].Stat != w.Stat || math.Abs(got[i].LimitMs-w.LimitMs) > 1e-9 {
				t.Errorf("ParseSLOs(%q)[%d] = %+v, want %+v", tc.in, i, got[i], w)
			}
		}
	}
}

func TestParseSLOsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", "no SLO"},
		{"ttft_p99=fast", `"fast" is not a duration`},
		{"ttft_p99", "want METRIC_STAT=VALUE"},
		{"latency_p99=2s", `unknown latency metric "latency"`},
		{"ttft_p42=2s", `unknown statistic "p42"`},
		{"ttft_std=2s", `unknown statistic "std"`},
		{"ttft=2s", "want METRIC_STAT"},
		{"ttft_p99=-5ms", "must be positive"},
		{"ttft_p99=0s", "must be positive"},
		{"ttft_p99=2s,p99_ttft=3s", "given twice"},
		{"ttft_p99=2h", "is not a duration"},
	}
	for _, tc := range tests {
		_, err := ParseSLOs(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "plan: ") {
			t.Errorf("ParseSLOs(%q) error = %v, want one containing %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSLOs(%q) error spans lines: %q", tc.in, err)
		}
	}
}

func TestSLONames(t *testing.T) {
	t.Parallel()
	s := SLO{Family: "ttft", Stat: "p99", LimitMs: 2000}
	if s.Metric() != "p99_ttft_ms" || s.Label() != "ttft_p99" || s.String() != "ttft_p99<=2000ms" {
		t.Errorf("names: %q %q %q", s.Metric(), s.Label(), s.String())
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	slos := []SLO{{"ttft", "p99", 2000}, {"tpot", "mean", 50}}
	tests := []struct {
		metrics map[string]float64
		ok      bool
		worst   string
	}{
		{map[string]float64{"p99_ttft_ms": 1999, "mean_tpot_ms": 50}, true, "tpot_mean"},
		{map[string]float64{"p99_ttft_ms": 2001, "mean_tpot_ms": 10}, false, "ttft_p99"},
		{map[string]float64{"p99_ttft_ms": 100}, false, "tpot_mean"}, // a missing metric never passes
		{map[string]float64{"p99_ttft_ms": 100, "mean_tpot_ms": math.NaN()}, false, "tpot_mean"},
	}
	for i, tc := range tests {
		ms, ok := check(slos, tc.metrics)
		if ok != tc.ok || worst(ms).SLO.Label() != tc.worst {
			t.Errorf("case %d: ok=%v worst=%s, want %v %s", i, ok, worst(ms).SLO.Label(), tc.ok, tc.worst)
		}
	}
}
