package plots

import (
	"fmt"
	"image/color"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SeriesFigure draws one series: a panel per metric (request throughput,
// mean TTFT, mean TPOT and mean E2E by default) against load on a log₂ x
// axis, measurements as filled circles, flagged measurements as red
// crosses, the fitted simulation as a line. Invalid values are skipped
// (see Point); a panel left with nothing says "no data".
func SeriesFigure(s Series) *Figure {
	f, metrics, xLabel := panelFigure(s.Metrics, s.XLabel, s.Title, s.Subtitle)
	var anyMeasured, anyFlagged, anyFitted bool
	for _, m := range metrics {
		measured, flagged, fitted := seriesXYs(s.Points, m)
		anyMeasured = anyMeasured || len(measured) > 0
		anyFlagged = anyFlagged || len(flagged) > 0
		anyFitted = anyFitted || len(fitted) > 0
		f.panels = append(f.panels, panel{name: metricName(m), plot: seriesPanel(m, measured, flagged, fitted), xLabel: xLabel, yLabel: MetricLabel(m)})
	}
	if anyMeasured {
		f.legend = append(f.legend, legendEntry{"measured", []plot.Thumbnailer{glyphThumb(withColor(measuredGlyph, ink))}})
	}
	if anyFlagged {
		f.legend = append(f.legend, legendEntry{"flagged (kept in the fit, down-weighted)", []plot.Thumbnailer{glyphThumb(flaggedGlyph)}})
	}
	if anyFitted {
		f.legend = append(f.legend, legendEntry{"calibrated simulation", []plot.Thumbnailer{lineThumb(draw.LineStyle{Color: ink, Width: curveWidth})}})
	}
	f.footer = flagNotes(s.Points)
	return f
}

// panelFigure starts a figure of one panel per metric, two columns (one
// when there is a single panel). It returns the metrics, DefaultPanels when
// nil, and the x label, XConcurrency when empty.
func panelFigure(metrics []string, xLabel, title, subtitle string) (*Figure, []string, string) {
	if metrics == nil {
		metrics = DefaultPanels
	}
	if xLabel == "" {
		xLabel = XConcurrency
	}
	f := &Figure{Width: 10 * vg.Inch, Height: 7.5 * vg.Inch, title: title, subtitle: subtitle, cols: 2}
	if len(metrics) == 1 {
		f.cols, f.Width = 1, 6*vg.Inch
	}
	return f, metrics, xLabel
}

// seriesXYs splits the valid values of metric into measured, flagged and
// fitted points, the fitted ones sorted by x.
func seriesXYs(points []Point, metric string) (measured, flagged, fitted plotter.XYs) {
	for _, p := range points {
		if !validX(p.X) {
			continue
		}
		if v, ok := p.Measured[metric]; ok && finite(v) {
			if p.Flagged {
				flagged = append(flagged, plotter.XY{X: p.X, Y: v})
			} else {
				measured = append(measured, plotter.XY{X: p.X, Y: v})
			}
		}
		if v, ok := p.Fitted[metric]; ok && finite(v) {
			fitted = append(fitted, plotter.XY{X: p.X, Y: v})
		}
	}
	sort.SliceStable(fitted, func(i, j int) bool { return fitted[i].X < fitted[j].X })
	return measured, flagged, fitted
}

// seriesPanel returns the plot of one metric, or nil when it has no data.
func seriesPanel(metric string, measured, flagged, fitted plotter.XYs) *plot.Plot {
	if len(measured)+len(flagged)+len(fitted) == 0 {
		return nil
	}
	col := MetricColor(metric)
	p := newPlot(metricName(metric))
	p.Add(newGrid())
	var xs, ys extent
	for _, xys := range []plotter.XYs{measured, flagged, fitted} {
		xs.addXYs(xys, true)
		ys.addXYs(xys, false)
	}
	if len(fitted) > 0 {
		p.Add(curve(fitted, draw.LineStyle{Color: col, Width: curveWidth}))
	}
	if len(measured) > 0 {
		p.Add(scatter(measured, withColor(measuredGlyph, col)))
	}
	if len(flagged) > 0 {
		p.Add(scatter(flagged, flaggedGlyph))
	}
	setLog2X(p, xs)
	setLinearY(p, ys, 0.05)
	return p
}

// flagNotes lists the flagged loads for the footer, grouped by reason so
// a reason shared by many points is written once: "x=2, 4 (throughput dip)".
func flagNotes(points []Point) string {
	var reasons []string
	xs := map[string][]string{}
	for _, p := range points {
		if !p.Flagged || !validX(p.X) {
			continue
		}
		if _, ok := xs[p.FlagReason]; !ok {
			reasons = append(reasons, p.FlagReason)
		}
		xs[p.FlagReason] = append(xs[p.FlagReason], fmt.Sprintf("%g", p.X))
	}
	if len(reasons) == 0 {
		return ""
	}
	notes := make([]string, len(reasons))
	for i, r := range reasons {
		notes[i] = "x=" + strings.Join(xs[r], ", ")
		if r != "" {
			notes[i] += " (" + r + ")"
		}
	}
	return "flagged: " + strings.Join(notes, "; ")
}

func withColor(g draw.GlyphStyle, c color.Color) draw.GlyphStyle {
	g.Color = c
	return g
}
