package plots

import (
	"image/color"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/capsim/capsim/model"
)

// Colours come from the Tableau-10 palette, which stays distinguishable
// for the common forms of colour blindness and in greyscale print.
var (
	blue   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	orange = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	green  = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	red    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	purple = color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	brown  = color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}
	grey   = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	olive  = color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}
	cyan   = color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}
	ink    = color.RGBA{R: 0x33, G: 0x33, B: 0x33, A: 0xff}
)

// familyColors is the one palette every figure uses: a metric keeps its
// colour across series, summary and prediction figures. Keys are vLLM metric
// families; the statistic (mean, median, p99, …) does not change the colour.
// Red is kept for flagged points and markers, so no metric uses it.
var familyColors = map[string]color.RGBA{
	model.RequestThroughput:    blue,
	model.OutputThroughput:     cyan,
	model.TotalTokenThroughput: olive,
	"ttft":                     orange,
	"tpot":                     green,
	"itl":                      brown,
	"e2el":                     purple,
}

// flagColor draws flagged measurements and load markers.
var flagColor = red

// MetricColor returns the colour a metric is drawn in, in every figure.
// Unknown metrics are grey.
func MetricColor(metric string) color.RGBA {
	if c, ok := familyColors[metric]; ok {
		return c
	}
	if c, ok := familyColors[metricFamily(metric)]; ok {
		return c
	}
	return grey
}

// metricFamily returns "ttft" for "p99_ttft_ms" and "" for names that do
// not follow vLLM's stat_family_ms pattern.
func metricFamily(metric string) string {
	parts := strings.Split(metric, "_")
	if len(parts) == 3 && parts[2] == "ms" {
		return parts[1]
	}
	return ""
}

// familyLabels are the names people use for vLLM's latency families.
var familyLabels = map[string]string{
	"ttft": "TTFT",
	"tpot": "TPOT",
	"itl":  "ITL",
	"e2el": "E2E latency",
}

// metricName is MetricLabel without its unit, for panel titles.
func metricName(metric string) string {
	name, _, _ := strings.Cut(MetricLabel(metric), " (")
	return name
}

// MetricLabel returns a human axis label with units for a vLLM metric name,
// e.g. "mean TTFT (ms)" or "request throughput (req/s)". Unknown names are
// returned unchanged.
func MetricLabel(metric string) string {
	switch metric {
	case model.RequestThroughput:
		return "request throughput (req/s)"
	case model.OutputThroughput:
		return "output throughput (tok/s)"
	case model.TotalTokenThroughput:
		return "total throughput (tok/s)"
	case model.Duration:
		return "duration (s)"
	}
	parts := strings.Split(metric, "_")
	if len(parts) == 3 && parts[2] == "ms" {
		family, ok := familyLabels[parts[1]]
		if !ok {
			family = strings.ToUpper(parts[1])
		}
		return parts[0] + " " + family + " (ms)"
	}
	return metric
}

// sans is the typeface of every text; sans-serif reads better at small sizes.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func textStyle(size vg.Length, c color.Color) text.Style {
	return text.Style{
		Color:   c,
		Font:    font.From(sans, size),
		Handler: plot.DefaultTextHandler,
	}
}

func boldStyle(size vg.Length, c color.Color) text.Style {
	s := textStyle(size, c)
	s.Font = font.From(font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}, size)
	return s
}

// newPlot returns a gonum plot with capsim's fonts; its axis labels are
// left to the panel (see panel).
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 11)
	p.Title.Padding = vg.Points(4)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Tick.Label.Font = font.From(sans, 9)
		ax.Padding = vg.Points(2)
	}
	p.Legend.TextStyle.Font = font.From(sans, 9)
	return p
}

var (
	measuredGlyph = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(3)}
	flaggedGlyph  = draw.GlyphStyle{Shape: thickCross{}, Radius: vg.Points(4.5), Color: flagColor}
	curveWidth    = vg.Points(1.6)
	gridStyle     = draw.LineStyle{Color: color.Gray{Y: 0xe0}, Width: vg.Points(0.5)}
	markerStyle   = draw.LineStyle{Color: flagColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
)

// thickCross is an × drawn with strokes thick enough to read next to filled
// circles; gonum's CrossGlyph uses hairlines.
type thickCross struct{}

func (thickCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.6)})
	r := sty.Radius * 0.7071
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
	c.Stroke(p)
	p = p[:0]
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
	c.Stroke(p)
}

// withAlpha returns c at the given opacity, premultiplied as image/color requires.
func withAlpha(c color.RGBA, alpha uint8) color.RGBA {
	scale := func(v uint8) uint8 { return uint8(uint16(v) * uint16(alpha) / 0xff) }
	return color.RGBA{R: scale(c.R), G: scale(c.G), B: scale(c.B), A: alpha}
}
