package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
)

// SummaryFigure draws, for every metric, one panel of predicted/measured
// against the measured value: a log ratio axis centred on 1 (a 2× miss and
// a ½× miss sit equally far from it, and a 2× miss looks like one whatever
// the metric's scale), with the ±10% lines and, where the data reach them,
// the 2× and ½× lines. Each panel's title gives its number of points,
// median error and how many are within ±10%. Pairs where either value is
// not a positive finite number cannot sit on a log axis; they are left out
// and counted in the footer.
func SummaryFigure(s Summary) *Figure {
	f := &Figure{Width: 10 * vg.Inch, Height: 8.5 * vg.Inch, title: s.Title, subtitle: s.Subtitle, cols: 2}
	byMetric := map[string]plotter.XYs{}
	errsBy := map[string][]float64{}
	skipped := 0
	for _, pr := range s.Pairs {
		if !(pr.Measured > 0 && finite(pr.Measured) && pr.Predicted > 0 && finite(pr.Predicted)) {
			skipped++
			continue
		}
		byMetric[pr.Metric] = append(byMetric[pr.Metric], plotter.XY{X: pr.Measured, Y: pr.Predicted / pr.Measured})
		e, _ := model.AbsPctError(pr.Measured, pr.Predicted) // both checked positive and finite above
		errsBy[pr.Metric] = append(errsBy[pr.Metric], e)
	}
	var notes []string
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d pair(s) with a missing, zero or negative value not shown", skipped))
	}
	if len(byMetric) == 0 {
		f.panels = []panel{{name: "predicted / measured"}}
		f.footer = strings.Join(notes, "; ")
		return f
	}
	metrics := orderMetrics(keys(byMetric))
	if len(metrics) > 6 {
		f.cols = 3
	}
	if len(metrics) == 1 {
		f.cols = 1
	}
	identity := draw.LineStyle{Color: ink, Width: vg.Points(1)}
	band := draw.LineStyle{Color: grey, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	twice := draw.LineStyle{Color: color.RGBA{R: 0xc0, G: 0x30, B: 0x30, A: 0xff}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
	within, total := 0, 0
	for _, m := range metrics {
		xys := byMetric[m]
		var xs extent
		worst := 1.25 // the ratio axis shows at least 0.8…1.25
		errs := errsBy[m]
		in := 0
		for i, xy := range xys {
			xs.add(xy.X)
			worst = max(worst, xy.Y, 1/xy.Y)
			if errs[i] <= 10 {
				in++
			}
		}
		within += in
		total += len(xys)
		title := fmt.Sprintf("%s: n=%d, median error %.1f%%, %d within ±10%%", MetricLabel(m), len(xys), median(errs), in)
		p := newPlot(title)
		p.Add(newGrid())
		lo, hi := xs.min/1.3, xs.max*1.3
		flat := func(k float64) plotter.XYs { return plotter.XYs{{X: lo, Y: k}, {X: hi, Y: k}} }
		p.Add(&plotter.Line{XYs: flat(1), LineStyle: identity})
		p.Add(&plotter.Line{XYs: flat(1.1), LineStyle: band}, &plotter.Line{XYs: flat(1 / 1.1), LineStyle: band})
		top := worst * 1.15
		if top >= 2 {
			p.Add(&plotter.Line{XYs: flat(2), LineStyle: twice}, &plotter.Line{XYs: flat(0.5), LineStyle: twice})
		}
		sty := draw.GlyphStyle{Shape: statGlyph(m), Radius: vg.Points(3.2), Color: withAlpha(MetricColor(m), 0xd0)}
		p.Add(scatter(xys, sty))
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, log10Ticks{}
		p.X.Min, p.X.Max = lo, hi
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, ratioTicks{}
		p.Y.Min, p.Y.Max = 1/top, top // symmetric in log: over and under look alike
		f.panels = append(f.panels, panel{name: title, plot: p, xLabel: "measured " + metricUnitLabel(m), yLabel: "predicted / measured"})
	}
	f.legend = []legendEntry{
		{"predicted = measured", []plot.Thumbnailer{lineThumb(identity)}},
		{"±10%", []plot.Thumbnailer{lineThumb(band)}},
		{"2× and ½×", []plot.Thumbnailer{lineThumb(twice)}},
	}
	notes = append([]string{fmt.Sprintf("%d of %d points within ±10%%", within, total)}, notes...)
	f.footer = strings.Join(notes, "; ")
	return f
}

// metricUnitLabel is the unit part of a metric's label: "(ms)".
func metricUnitLabel(m string) string {
	l := MetricLabel(m)
	if i := strings.LastIndex(l, " ("); i >= 0 {
		return l[i+1:]
	}
	return ""
}

// ratioTicks labels a ratio axis with round factors: 0.5×, 0.8×, 1×, 1.25×, 2×, ….
type ratioTicks struct{}

func (ratioTicks) Ticks(min, max float64) []plot.Tick {
	// Fewer, coarser factors as the range widens, so labels never crowd.
	candidates := []float64{0.8, 0.9, 1, 1.1, 1.25}
	switch span := max / min; {
	case span > 6:
		candidates = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100}
	case span > 2.2:
		candidates = []float64{0.5, 0.67, 1, 1.5, 2}
	}
	var ticks []plot.Tick
	for _, v := range candidates {
		if v < min*(1-1e-9) || v > max*(1+1e-9) {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64) + "×"})
	}
	return ticks
}

// statGlyph tells statistics of one family apart, since they share a colour.
func statGlyph(metric string) draw.GlyphDrawer {
	switch strings.SplitN(metric, "_", 2)[0] {
	case "median":
		return draw.BoxGlyph{}
	case "p99", "p95", "p90":
		return draw.PyramidGlyph{}
	case "std":
		return draw.SquareGlyph{}
	}
	return draw.CircleGlyph{}
}

// median returns the median of xs, NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stats.Median(xs)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// orderMetrics sorts metric names into a stable reading order: the default
// panels first, then throughputs, then latencies by family and statistic.
func orderMetrics(names []string) []string {
	rank := func(m string) (int, string) {
		for i, d := range DefaultPanels {
			if m == d {
				return i, m
			}
		}
		if strings.HasSuffix(m, "_throughput") {
			return len(DefaultPanels), m
		}
		return len(DefaultPanels) + 1, metricFamily(m) + " " + m
	}
	out := append([]string(nil), names...)
	sort.Slice(out, func(i, j int) bool {
		ri, ki := rank(out[i])
		rj, kj := rank(out[j])
		if ri != rj {
			return ri < rj
		}
		return ki < kj
	})
	return out
}

// ErrorLine names each metric's median error (in percent, as
// model.AbsPctError gives it) in reading order, for a figure title:
// "errors: request throughput 4.2% · mean TTFT 11.8%". NaN errors are left
// out; "" when none is left.
func ErrorLine(errors map[string]float64) string {
	var parts []string
	for _, m := range orderMetrics(keys(errors)) {
		v := errors[m]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		label, _, _ := strings.Cut(MetricLabel(m), " (")
		parts = append(parts, fmt.Sprintf("%s %.1f%%", label, v))
	}
	if len(parts) == 0 {
		return ""
	}
	return "errors: " + strings.Join(parts, " · ")
}
