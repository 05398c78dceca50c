package plots

import (
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var (
	kneeStyle   = draw.LineStyle{Color: ink, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	blowupStyle = markerStyle
	bandAlpha   = uint8(0x48)
	p99Dashes   = []vg.Length{vg.Points(5), vg.Points(2.5)}
)

// PredictionFigure draws predicted curves against load on a log₂ x axis,
// one panel per metric: the uncertainty band shaded between Lo and Hi, the
// knee and the TTFT blow-up as labelled vertical lines in every panel, and
// measurements overlaid when given. Invalid values are skipped as in
// SeriesFigure; a band needs two valid points.
func PredictionFigure(pr Prediction) *Figure {
	f, metrics, xLabel := panelFigure(pr.Metrics, pr.XLabel, pr.Title, pr.Subtitle)
	var markers []vMarker
	if pr.Knee != nil && validX(pr.Knee.X) {
		markers = append(markers, vMarker{x: pr.Knee.X, label: labelOr(pr.Knee.Label, "knee"), style: kneeStyle})
	}
	if pr.TTFTBlowup != nil && validX(pr.TTFTBlowup.X) {
		markers = append(markers, vMarker{x: pr.TTFTBlowup.X, label: labelOr(pr.TTFTBlowup.Label, "TTFT blow-up"), row: len(markers), style: blowupStyle})
	}

	var anyPred, anyBand, anyMeasured, anyFlagged, anyTail bool
	for _, m := range metrics {
		pred, lo, hi := predictionXYs(pr.Points, m)
		var tail plotter.XYs
		if rest, ok := strings.CutPrefix(m, "mean_"); ok && pr.P99 {
			tail, _, _ = predictionXYs(pr.Points, "p99_"+rest)
			anyTail = anyTail || len(tail) > 0
		}
		measured, flagged, _ := seriesXYs(pr.Measured, m)
		anyPred = anyPred || len(pred) > 0
		anyBand = anyBand || len(lo) >= 2
		anyMeasured = anyMeasured || len(measured) > 0
		anyFlagged = anyFlagged || len(flagged) > 0
		pl := predictionPanel(m, pred, lo, hi, measured, flagged, markers)
		if pl != nil && len(tail) > 0 {
			pl.Add(curve(tail, draw.LineStyle{Color: MetricColor(m), Width: curveWidth, Dashes: p99Dashes}))
			var ys extent
			ys.addXYs(tail, false)
			ys.addXYs(pred, false)
			ys.addXYs(measured, false)
			ys.addXYs(lo, false)
			ys.addXYs(hi, false)
			setLinearY(pl, ys, 0.05+0.07*float64(len(markers)))
		}
		f.panels = append(f.panels, panel{name: metricName(m), plot: pl, xLabel: xLabel, yLabel: MetricLabel(m)})
	}
	if anyPred {
		f.legend = append(f.legend, legendEntry{"predicted", []plot.Thumbnailer{lineThumb(draw.LineStyle{Color: ink, Width: curveWidth})}})
	}
	if anyTail {
		f.legend = append(f.legend, legendEntry{"predicted p99", []plot.Thumbnailer{lineThumb(draw.LineStyle{Color: ink, Width: curveWidth, Dashes: p99Dashes})}})
	}
	if anyBand {
		f.legend = append(f.legend, legendEntry{"uncertainty band", []plot.Thumbnailer{bandThumb{draw.LineStyle{Color: withAlpha(ink, bandAlpha)}}}})
	}
	if anyMeasured {
		f.legend = append(f.legend, legendEntry{"measured", []plot.Thumbnailer{glyphThumb(withColor(measuredGlyph, ink))}})
	}
	if anyFlagged {
		f.legend = append(f.legend, legendEntry{"flagged measurement", []plot.Thumbnailer{glyphThumb(flaggedGlyph)}})
	}
	for _, mk := range markers {
		f.legend = append(f.legend, legendEntry{mk.label, []plot.Thumbnailer{mk}})
	}
	f.footer = flagNotes(pr.Measured)
	return f
}

func labelOr(label, fallback string) string {
	if label == "" {
		return fallback
	}
	return label
}

// predictionXYs returns the valid predicted values of metric and the band
// edges where both are valid, all sorted by x.
func predictionXYs(points []PredPoint, metric string) (pred, lo, hi plotter.XYs) {
	sorted := append([]PredPoint(nil), points...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].X < sorted[j].X })
	for _, p := range sorted {
		if !validX(p.X) {
			continue
		}
		if v, ok := p.Metrics[metric]; ok && finite(v) {
			pred = append(pred, plotter.XY{X: p.X, Y: v})
		}
		l, okL := p.Lo[metric]
		h, okH := p.Hi[metric]
		if okL && okH && finite(l) && finite(h) {
			lo = append(lo, plotter.XY{X: p.X, Y: math.Min(l, h)})
			hi = append(hi, plotter.XY{X: p.X, Y: math.Max(l, h)})
		}
	}
	return pred, lo, hi
}

// predictionPanel returns the plot of one metric, or nil when it has no data.
func predictionPanel(metric string, pred, lo, hi, measured, flagged plotter.XYs, markers []vMarker) *plot.Plot {
	if len(pred)+len(measured)+len(flagged) == 0 && len(lo) < 2 {
		return nil
	}
	col := MetricColor(metric)
	p := newPlot(metricName(metric))
	p.Add(newGrid())
	var xs, ys extent
	for _, xys := range []plotter.XYs{pred, measured, flagged} {
		xs.addXYs(xys, true)
		ys.addXYs(xys, false)
	}
	if len(lo) >= 2 {
		xs.addXYs(lo, true)
		ys.addXYs(lo, false)
		ys.addXYs(hi, false)
		ring := append(plotter.XYs(nil), lo...)
		for i := len(hi) - 1; i >= 0; i-- {
			ring = append(ring, hi[i])
		}
		p.Add(&plotter.Polygon{XYs: []plotter.XYs{ring}, Color: withAlpha(col, bandAlpha)})
	}
	if len(pred) > 0 {
		p.Add(curve(pred, draw.LineStyle{Color: col, Width: curveWidth}))
	}
	if len(measured) > 0 {
		p.Add(scatter(measured, withColor(measuredGlyph, darker(col))))
	}
	if len(flagged) > 0 {
		p.Add(scatter(flagged, flaggedGlyph))
	}
	for _, mk := range markers {
		xs.add(mk.x)
	}
	if len(markers) > 0 {
		p.Add(markerSet(markers))
	}
	setLog2X(p, xs)
	// Leave a label row of headroom per marker so labels never sit on data.
	setLinearY(p, ys, 0.05+0.07*float64(len(markers)))
	return p
}

// darker returns c at two thirds of its brightness, so measured markers
// stand out on a curve of the same hue.
func darker(c color.RGBA) color.RGBA {
	return color.RGBA{R: uint8(uint16(c.R) * 2 / 3), G: uint8(uint16(c.G) * 2 / 3), B: uint8(uint16(c.B) * 2 / 3), A: c.A}
}
