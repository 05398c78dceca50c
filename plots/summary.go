package plots

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/capsim/capsim/internal/stats"
)

// SummaryFigure draws every predicted value against its measurement on
// log–log axes, with the y = x line and ±10% lines, one colour per metric
// family and one marker shape per statistic. Pairs where either value is
// not a positive finite number cannot sit on a log axis; they are left
// out and counted in the footer.
func SummaryFigure(s Summary) *Figure {
	f := &Figure{Width: 8 * vg.Inch, Height: 8.5 * vg.Inch, title: s.Title, subtitle: s.Subtitle, cols: 1}
	byMetric := map[string]plotter.XYs{}
	skipped := 0
	var all extent
	for _, pr := range s.Pairs {
		if !(pr.Measured > 0 && finite(pr.Measured) && pr.Predicted > 0 && finite(pr.Predicted)) {
			skipped++
			continue
		}
		byMetric[pr.Metric] = append(byMetric[pr.Metric], plotter.XY{X: pr.Measured, Y: pr.Predicted})
		all.add(pr.Measured)
		all.add(pr.Predicted)
	}
	var notes []string
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d pair(s) with a missing, zero or negative value not shown", skipped))
	}
	if !all.ok {
		f.panels = []panel{{name: "predicted against measured"}}
		f.footer = strings.Join(notes, "; ")
		return f
	}

	p := newPlot("")
	p.Add(newGrid())
	lo, hi := all.min/1.6, all.max*1.6
	diag := func(k float64) plotter.XYs { return plotter.XYs{{X: lo, Y: k * lo}, {X: hi, Y: k * hi}} }
	identity := draw.LineStyle{Color: ink, Width: vg.Points(1)}
	band := draw.LineStyle{Color: grey, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	p.Add(&plotter.Line{XYs: diag(1), LineStyle: identity})
	p.Add(&plotter.Line{XYs: diag(1.1), LineStyle: band}, &plotter.Line{XYs: diag(0.9), LineStyle: band})

	within, total := 0, 0
	for _, m := range orderMetrics(keys(byMetric)) {
		xys := byMetric[m]
		sty := draw.GlyphStyle{Shape: statGlyph(m), Radius: vg.Points(3.2), Color: withAlpha(MetricColor(m), 0xd0)}
		p.Add(scatter(xys, sty))
		errs := make([]float64, len(xys))
		for i, xy := range xys {
			errs[i] = math.Abs(xy.Y-xy.X) / xy.X
			if errs[i] <= 0.1 {
				within++
			}
		}
		total += len(xys)
		label := fmt.Sprintf("%s: n=%d, median error %.1f%%", MetricLabel(m), len(xys), 100*median(errs))
		f.legend = append(f.legend, legendEntry{label, []plot.Thumbnailer{glyphThumb(sty)}})
	}
	f.legend = append(f.legend,
		legendEntry{"y = x", []plot.Thumbnailer{lineThumb(identity)}},
		legendEntry{"±10%", []plot.Thumbnailer{lineThumb(band)}})
	notes = append([]string{fmt.Sprintf("%d of %d points within ±10%%", within, total)}, notes...)

	// A square range on both axes keeps y = x on the diagonal.
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Scale = plot.LogScale{}
		ax.Tick.Marker = log10Ticks{}
		ax.Min, ax.Max = lo, hi
	}
	f.panels = []panel{{name: "predicted against measured", plot: p,
		xLabel: "measured (ms, req/s or tok/s)", yLabel: "predicted (same unit)"}}
	f.footer = strings.Join(notes, "; ")
	return f
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
