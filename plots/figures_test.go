package plots

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

func TestPredictionFigure(t *testing.T) {
	real := realisticPrediction()
	bandFill := "fill-opacity:" // polygons are the only translucent fills in a prediction figure
	tests := []struct {
		name     string
		p        Prediction
		bands    int // shaded polygons, legend icon included
		measured map[string]int
		knee     int // times the knee label is drawn, legend included
		blowup   int
		noData   int
		present  []string
	}{
		{
			name:     "seed prediction",
			p:        real,
			bands:    2 + 1, // throughput and TTFT carry bands
			measured: map[string]int{model.RequestThroughput: 8, model.MeanTTFT: 8, model.MeanTPOT: 8, model.MeanE2EL: 8},
			knee:     4 + 1,
			blowup:   4 + 1,
			present:  []string{real.Title, real.Subtitle, "predicted", "uncertainty band", "measured", "concurrency"},
		},
		{
			name: "no markers, no band, no measurements",
			p: Prediction{Title: "bare", XLabel: XRequestRate, Points: []PredPoint{
				{X: 1, Metrics: all4(1, 200, 20, 3000)}, {X: 2, Metrics: all4(1.9, 210, 21, 3100)},
			}},
			present: []string{"predicted", "request rate (req/s)"},
		},
		{
			name: "default marker labels; invalid marker skipped",
			p: Prediction{Title: "markers", Knee: &Marker{X: 2}, TTFTBlowup: &Marker{X: math.NaN(), Label: "never"},
				Points: []PredPoint{{X: 1, Metrics: all4(1, 200, 20, 3000)}, {X: 4, Metrics: all4(3, 900, 25, 5000)}}},
			present: []string{"knee"},
		},
		{
			name: "single point and a one-point band",
			p: Prediction{Title: "one", Points: []PredPoint{{X: 16, Metrics: all4(3, 400, 22, 3700),
				Lo: all4(2.5, 350, 20, 3500), Hi: all4(3.5, 450, 24, 3900)}}},
		},
		{
			name: "band only, reversed bounds, bad values",
			p: Prediction{Title: "band", Points: []PredPoint{
				{X: 1, Lo: map[string]float64{model.RequestThroughput: 1.2}, Hi: map[string]float64{model.RequestThroughput: 0.8}},
				{X: 2, Lo: map[string]float64{model.RequestThroughput: 2.2}, Hi: map[string]float64{model.RequestThroughput: 1.8}},
				{X: 4, Lo: map[string]float64{model.RequestThroughput: math.NaN()}, Hi: map[string]float64{model.RequestThroughput: 4}},
				{X: -1, Metrics: all4(1, 1, 1, 1)},
			}},
			bands:  1 + 1,
			noData: 3,
		},
		{
			name:   "empty",
			p:      Prediction{Title: "nothing", Knee: &Marker{X: 8}},
			noData: 4,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svg := renderSVG(t, PredictionFigure(tc.p))
			if got := strings.Count(svg, bandFill); got != tc.bands {
				t.Errorf("%d shaded bands, want %d", got, tc.bands)
			}
			for _, m := range DefaultPanels {
				if got, want := filledCircles(svg, "3", darker(MetricColor(m))), tc.measured[m]; got != want {
					t.Errorf("%s: %d measured markers, want %d", m, got, want)
				}
			}
			if tc.p.Knee != nil && tc.p.Knee.Label != "" {
				if got := countText(svg, tc.p.Knee.Label); got != tc.knee {
					t.Errorf("knee label drawn %d times, want %d", got, tc.knee)
				}
			}
			if tc.p.TTFTBlowup != nil && tc.p.TTFTBlowup.Label != "" {
				if got := countText(svg, tc.p.TTFTBlowup.Label); got != tc.blowup {
					t.Errorf("blow-up label drawn %d times, want %d", got, tc.blowup)
				}
			}
			if got := countText(svg, "no data"); got != tc.noData {
				t.Errorf("%d empty panels, want %d", got, tc.noData)
			}
			for _, s := range tc.present {
				if countText(svg, s) == 0 {
					t.Errorf("text %q missing", s)
				}
			}
		})
	}
}

func TestPredictionFigureDefaultKneeLabel(t *testing.T) {
	svg := renderSVG(t, PredictionFigure(Prediction{Knee: &Marker{X: 2}, TTFTBlowup: &Marker{X: 3},
		Points: []PredPoint{{X: 1, Metrics: all4(1, 200, 20, 3000)}, {X: 4, Metrics: all4(3, 900, 25, 5000)}}}))
	if got := countText(svg, "knee"); got != 4+1 {
		t.Errorf(`"knee" drawn %d times, want 5`, got)
	}
	if got := countText(svg, "TTFT blow-up"); got != 4+1 {
		t.Errorf(`"TTFT blow-up" drawn %d times, want 5`, got)
	}
}

func TestSummaryFigure(t *testing.T) {
	pairs := []Pair{
		// TTFT errors 10%, 20%, 5%: median 10.0%, two within ±10%.
		{model.MeanTTFT, 100, 110}, {model.MeanTTFT, 1000, 800}, {model.MeanTTFT, 400, 420},
		// throughput errors 0% and 50%: median 25.0%.
		{model.RequestThroughput, 2, 2}, {model.RequestThroughput, 4, 6},
		{model.P99TTFT, 3000, 2900},
		// not on a log axis
		{model.MeanTPOT, 0, 20}, {model.MeanTPOT, 20, math.NaN()}, {model.MeanTPOT, 20, -1}, {model.MeanTPOT, math.Inf(1), 20},
	}
	svg := renderSVG(t, SummaryFigure(Summary{Title: "all series", Pairs: pairs}))
	for _, want := range []string{
		"all series",
		"request throughput (req/s): n=2, median error 25.0%, 1 within ±10%",
		"mean TTFT (ms): n=3, median error 10.0%, 2 within ±10%",
		"p99 TTFT (ms): n=1, median error 3.3%, 1 within ±10%",
		"predicted = measured", "±10%", "2× and ½×",
		"4 of 6 points within ±10%; 4 pair(s) with a missing, zero or negative value not shown",
		"measured (req/s)",
	} {
		if countText(svg, want) != 1 {
			t.Errorf("text %q not drawn once", want)
		}
	}
	if strings.Contains(svg, "mean TPOT") {
		t.Error("TPOT has no plottable pair but appears")
	}
	// Circles: 2 throughput + 3 TTFT, one per pair, on the ratio panels.
	if got := strings.Count(svg, "A3.2,3.2 0 1 1") / 2; got != 2+3 {
		t.Errorf("%d circles, want 5", got)
	}
	// One panel per metric, each on a ratio axis labelled in factors.
	if got := countText(svg, "predicted / measured"); got != 3 {
		t.Errorf("%d ratio axes, want one per metric (3)", got)
	}
	if countText(svg, "1.5×") != 1 { // only the throughput panel reaches a 1.5× miss
		t.Errorf("ratio tick 1.5× drawn %d times, want 1", countText(svg, "1.5×"))
	}

	empty := renderSVG(t, SummaryFigure(Summary{Title: "none", Pairs: []Pair{{model.MeanTTFT, 0, 0}}}))
	if countText(empty, "no data") != 1 {
		t.Error("summary without plottable pairs does not say no data")
	}
}

func TestLog2Ticks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		labels []string
	}{
		{0.87, 147, []string{"1", "2", "4", "8", "16", "32", "64", "128"}},
		{0.2, 7, []string{"0.25", "0.5", "1", "2", "4"}},
		{0.9, 5000, []string{"1", "4", "16", "64", "256", "1024", "4096"}},
		{2.6, 5.7, []string{"3", "4", "5"}}, // one power of two: linear fallback
	}
	for _, tc := range tests {
		var got []string
		for _, tk := range (log2Ticks{}).Ticks(tc.lo, tc.hi) {
			if tk.Value <= 0 {
				t.Errorf("[%g, %g]: non-positive tick %g", tc.lo, tc.hi, tk.Value)
			}
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.labels, " ") {
			t.Errorf("[%g, %g]: labels %q, want %q", tc.lo, tc.hi, got, tc.labels)
		}
	}
}

func TestLinearTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		labels string
	}{
		{0, 10.5, "0.0 2.5 5.0 7.5 10.0"},
		{0, 7.56, "0 2 4 6"},
		{0, 47000, "0 10000 20000 30000 40000"},
		{0, 0.042, "0.00 0.01 0.02 0.03 0.04"},
		{-5, 5, "-4 -2 0 2 4"},
		{3, 3, ""},
	}
	for _, tc := range tests {
		var got []string
		for _, tk := range (linearTicks{}).Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != tc.labels {
			t.Errorf("[%g, %g]: labels %q, want %q", tc.lo, tc.hi, got, tc.labels)
		}
	}
}

func TestLog10Ticks(t *testing.T) {
	var labels []string
	for _, tk := range (log10Ticks{}).Ticks(0.13, 28000) {
		if tk.Value < 0.13 || tk.Value > 28000 {
			t.Errorf("tick %g outside the range", tk.Value)
		}
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "1 10 100 1000 10000" {
		t.Errorf("labels %q", got)
	}
}

func TestMetricLabelAndColor(t *testing.T) {
	tests := []struct {
		metric, label string
		color         string
	}{
		{model.RequestThroughput, "request throughput (req/s)", hex(blue)},
		{model.OutputThroughput, "output throughput (tok/s)", hex(cyan)},
		{model.MeanTTFT, "mean TTFT (ms)", hex(orange)},
		{model.P99TTFT, "p99 TTFT (ms)", hex(orange)},
		{model.MedianTPOT, "median TPOT (ms)", hex(green)},
		{model.MeanE2EL, "mean E2E latency (ms)", hex(purple)},
		{"p90_itl_ms", "p90 ITL (ms)", hex(brown)},
		{"mean_foo_ms", "mean FOO (ms)", hex(grey)},
		{"goodput", "goodput", hex(grey)},
	}
	for _, tc := range tests {
		if got := MetricLabel(tc.metric); got != tc.label {
			t.Errorf("MetricLabel(%q) = %q, want %q", tc.metric, got, tc.label)
		}
		if got := hex(MetricColor(tc.metric)); got != tc.color {
			t.Errorf("MetricColor(%q) = %s, want %s", tc.metric, got, tc.color)
		}
	}
	for family, c := range familyColors {
		if c == flagColor {
			t.Errorf("%s shares the flag colour", family)
		}
	}
}

func TestLoadX(t *testing.T) {
	tests := []struct {
		load  model.Load
		x     float64
		ok    bool
		label string
	}{
		{model.Closed(32), 32, true, XConcurrency},
		{model.Open(2.5, 1), 2.5, true, XRequestRate},
		{model.Open(math.Inf(1), 1), 0, false, XConcurrency},
		{model.Closed(0), 0, false, XConcurrency},
	}
	for _, tc := range tests {
		x, ok := LoadX(tc.load)
		if ok != tc.ok || (ok && x != tc.x) {
			t.Errorf("LoadX(%+v) = %g, %v; want %g, %v", tc.load, x, ok, tc.x, tc.ok)
		}
		if got := XLabelFor(tc.load.Kind); got != tc.label {
			t.Errorf("XLabelFor(%s) = %q, want %q", tc.load.Kind, got, tc.label)
		}
	}
}

func TestPointFromRecord(t *testing.T) {
	r := results.Record{
		Workload:  results.Workload{Load: model.Closed(16)},
		Metrics:   map[string]float64{model.MeanTTFT: 832.8},
		Anomalies: []string{"throughput dip", "warm-up"},
	}
	p, ok := PointFromRecord(&r)
	if !ok || p.X != 16 || p.Measured[model.MeanTTFT] != 832.8 || !p.Flagged || p.FlagReason != "throughput dip, warm-up" {
		t.Errorf("got %+v, %v", p, ok)
	}
	r.Workload.Load = model.Open(math.Inf(1), 1)
	if _, ok := PointFromRecord(&r); ok {
		t.Error("burst load accepted")
	}
}

// P99 adds the p99 of every mean latency panel as a dashed curve, with a
// legend entry; without it, or without p99 values, nothing changes.
func TestPredictionFigureP99(t *testing.T) {
	pts := []PredPoint{
		{X: 1, Metrics: map[string]float64{model.MeanTTFT: 200, model.P99TTFT: 260, model.MeanTPOT: 20, model.P99TPOT: 24}},
		{X: 2, Metrics: map[string]float64{model.MeanTTFT: 220, model.P99TTFT: 400, model.MeanTPOT: 21, model.P99TPOT: 27}},
	}
	base := Prediction{Title: "t", Metrics: []string{model.MeanTTFT, model.MeanTPOT}, Points: pts}
	with := base
	with.P99 = true
	plain := renderSVG(t, PredictionFigure(base))
	if n := countText(plain, "predicted p99"); n != 0 {
		t.Errorf("p99 legend drawn %d times without P99", n)
	}
	svg := renderSVG(t, PredictionFigure(with))
	if n := countText(svg, "predicted p99"); n != 1 {
		t.Errorf("p99 legend drawn %d times, want once", n)
	}
	// One dashed curve per panel and the legend icon.
	if a, b := strings.Count(plain, "stroke-dasharray"), strings.Count(svg, "stroke-dasharray"); b-a != 3 {
		t.Errorf("%d dashed strokes with P99, %d without: want 3 more (two panels, one legend icon)", b, a)
	}
}

// TestLongTitlesWrap: a title with per-metric errors wraps onto several
// lines instead of being cut off with an ellipsis.
func TestLongTitlesWrap(t *testing.T) {
	errs := map[string]float64{model.RequestThroughput: 4.2, model.MeanTTFT: 11.8, model.MeanTPOT: 3.1, model.MeanE2EL: 2, model.P99TTFT: math.NaN()}
	line := ErrorLine(errs)
	if line != "errors: request throughput 4.2% · mean TTFT 11.8% · mean TPOT 3.1% · mean E2E latency 2.0%" {
		t.Fatalf("ErrorLine = %q", line)
	}
	title := "H20 · Qwen/Qwen3-32B · vllm-0.9.0.1 · prefill 12xTP1 + decode 1xTP4 · ISL 3000 OSL 150 · " + line
	svg := renderSVG(t, SummaryFigure(Summary{Title: title, Pairs: []Pair{{model.MeanTTFT, 100, 110}}}))
	if strings.Contains(svg, "…") {
		t.Error("long title cut off with an ellipsis")
	}
	for _, w := range []string{"H20", "11.8%", "latency", "2.0%"} {
		if !strings.Contains(svg, w) {
			t.Errorf("title word %q not drawn", w)
		}
	}
}

// Every axis of the summary reads off at least two numbers and names its
// unit, whatever the range of its metric: a TPOT panel within one decade
// and an E2E panel across one had no x numbers or a single one.
func TestSummaryAxesNumbered(t *testing.T) {
	pairs := []Pair{
		{model.MeanTPOT, 21, 23}, {model.MeanTPOT, 48, 45}, {model.MeanTPOT, 60, 66}, // inside one decade
		{model.MeanE2EL, 900, 1000}, {model.MeanE2EL, 4000, 4100}, // across one decade
		{model.MeanTTFT, 120, 110}, {model.MeanTTFT, 1300, 1200},
		{model.P99TTFT, 3000, 2900},                                              // a single point
		{model.RequestThroughput, 2.1, 2.0}, {model.RequestThroughput, 2.3, 2.4}, // a narrow range
	}
	f := SummaryFigure(Summary{Title: "all", Pairs: pairs})
	if len(f.panels) != 5 {
		t.Fatalf("%d panels, want 5", len(f.panels))
	}
	labelled := func(a plot.Axis) (n int) {
		for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
			if tk.Label != "" && tk.Value >= a.Min && tk.Value <= a.Max {
				n++
			}
		}
		return n
	}
	for _, p := range f.panels {
		if n := labelled(p.plot.X); n < 2 {
			t.Errorf("%s: %d numbered x ticks over [%g, %g], want at least 2", p.name, n, p.plot.X.Min, p.plot.X.Max)
		}
		if n := labelled(p.plot.Y); n < 2 {
			t.Errorf("%s: %d numbered y ticks, want at least 2", p.name, n)
		}
		if !strings.Contains(p.xLabel, "(") {
			t.Errorf("%s: x label %q names no unit", p.name, p.xLabel)
		}
	}
}
