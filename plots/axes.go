package plots

import (
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// log2Ticks labels powers of two — the load steps benchmarks use — and
// thins the labels when there are more than nine. A range holding fewer
// than two powers of two falls back to linear ticks.
type log2Ticks struct{}

func (log2Ticks) Ticks(min, max float64) []plot.Tick {
	lo := int(math.Ceil(math.Log2(min) - 1e-9))
	hi := int(math.Floor(math.Log2(max) + 1e-9))
	if hi-lo+1 < 2 {
		return positiveTicks(plot.DefaultTicks{}.Ticks(min, max))
	}
	step := 1
	for (hi-lo+1+step-1)/step > 9 {
		step *= 2
	}
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		t := plot.Tick{Value: math.Exp2(float64(k))}
		if k%step == 0 {
			t.Label = formatTick(t.Value)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// log10Ticks labels decades and marks 2…9 between them. A range holding
// fewer than two decades labels 1, 2 and 5 times a power of ten, or every
// mark, until at least two are labelled; one too narrow for two marks
// gets linear ticks, so every axis reads off at least two numbers.
type log10Ticks struct{}

func (log10Ticks) Ticks(min, max float64) []plot.Tick {
	lo := int(math.Floor(math.Log10(min)))
	hi := int(math.Ceil(math.Log10(max)))
	var ticks []plot.Tick
	var mult []int // each tick's multiple of its decade
	for k := lo; k <= hi; k++ {
		decade := math.Pow10(k)
		for i := 1; i <= 9; i++ {
			v := decade * float64(i)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			ticks = append(ticks, plot.Tick{Value: v})
			mult = append(mult, i)
		}
	}
	if len(ticks) < 2 {
		return positiveTicks(linearTicks{}.Ticks(min, max))
	}
	for _, labelled := range [][]int{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		n := 0
		for _, m := range mult {
			if slices.Contains(labelled, m) {
				n++
			}
		}
		if n < 2 {
			continue
		}
		for i, m := range mult {
			if slices.Contains(labelled, m) {
				ticks[i].Label = formatTick(ticks[i].Value)
			}
		}
		break
	}
	return ticks
}

// linearTicks labels about five round values (steps of 1, 2, 2.5 or 5
// times a power of ten) with as many decimals as the step needs; gonum's
// default labels 5000 as "5000.00" and often shows only three ticks.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	raw := (hi - lo) / 5
	exp := int(math.Floor(math.Log10(raw)))
	mag := math.Pow10(exp)
	step, decimals := 10*mag, -exp-1
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw*(1-1e-9) {
			step, decimals = m*mag, -exp
			if m == 2.5 {
				decimals++
			}
			break
		}
	}
	decimals = max(decimals, 0)
	var ticks []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if v == 0 {
			v = 0 // turns -0 into 0, so no "-0" label
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return ticks
}

// positiveTicks drops ticks a log axis cannot place: gonum normalises every
// tick before clipping it, and a non-positive one panics.
func positiveTicks(ticks []plot.Tick) []plot.Tick {
	kept := ticks[:0]
	for _, t := range ticks {
		if t.Value > 0 {
			kept = append(kept, t)
		}
	}
	return kept
}

func formatTick(v float64) string {
	if v >= 1e6 || v < 1e-4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// extent is the range of the values an axis must show.
type extent struct {
	min, max float64
	ok       bool
}

func (e *extent) add(v float64) {
	if !finite(v) {
		return
	}
	if !e.ok {
		e.min, e.max, e.ok = v, v, true
		return
	}
	e.min = math.Min(e.min, v)
	e.max = math.Max(e.max, v)
}

func (e *extent) addXYs(xys plotter.XYs, x bool) {
	for _, p := range xys {
		if x {
			e.add(p.X)
		} else {
			e.add(p.Y)
		}
	}
}

// setLog2X makes p's x axis log₂ over xs, padded by a fifth of an octave
// so edge markers are not cut; a single load gets one octave either side.
func setLog2X(p *plot.Plot, xs extent) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = log2Ticks{}
	lo, hi := xs.min, xs.max
	if lo == hi {
		lo, hi = lo/2, hi*2
	}
	p.X.Min, p.X.Max = lo/math.Pow(2, 0.2), hi*math.Pow(2, 0.2)
}

// setLinearY makes p's y axis start at zero (or the lowest value, if
// negative) and leaves headroom as a fraction of the range on top.
func setLinearY(p *plot.Plot, ys extent, headroom float64) {
	lo, hi := math.Min(ys.min, 0), ys.max
	if hi <= lo {
		hi = lo + 1
	}
	p.Y.Min, p.Y.Max = lo, hi+(hi-lo)*headroom
	p.Y.Tick.Marker = linearTicks{}
}

// newGrid returns light major-tick grid lines to read values off.
func newGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical = gridStyle
	g.Horizontal = gridStyle
	return g
}

// curve draws xys (sorted by x) as a line, or as a hollow ring when there
// is a single point, since a one-point line is invisible.
func curve(xys plotter.XYs, sty draw.LineStyle) plot.Plotter {
	if len(xys) == 1 {
		return &plotter.Scatter{XYs: xys, GlyphStyle: draw.GlyphStyle{
			Shape: draw.RingGlyph{}, Radius: vg.Points(5), Color: sty.Color,
		}}
	}
	return &plotter.Line{XYs: xys, LineStyle: sty}
}

func scatter(xys plotter.XYs, sty draw.GlyphStyle) *plotter.Scatter {
	return &plotter.Scatter{XYs: xys, GlyphStyle: sty}
}

// vMarker is a labelled vertical line across a panel's data area, with its
// label on row (0 is the top line) of the headroom above the data.
type vMarker struct {
	x     float64
	label string
	row   int
	style draw.LineStyle
}

// markerSet draws all markers of a panel: every line first, then every
// label on a white backing, so no line crosses a label.
type markerSet []vMarker

func (ms markerSet) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, m := range ms {
		if m.x >= p.X.Min && m.x <= p.X.Max {
			x := trX(m.x)
			c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
		}
	}
	for _, m := range ms {
		if m.x < p.X.Min || m.x > p.X.Max {
			continue
		}
		x := trX(m.x)
		sty := textStyle(8.5, m.style.Color)
		sty.YAlign = draw.YTop
		sty.XAlign = draw.XLeft
		w, h := sty.Width(m.label), sty.FontExtents().Height
		at := vg.Point{X: x + 3, Y: c.Max.Y - 2 - vg.Length(m.row)*(h+1)}
		if at.X+w > c.Max.X {
			// Too close to the right edge: put the label on the left of the line.
			at.X = x - 3 - w
		}
		c.FillPolygon(color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}, []vg.Point{
			{X: at.X - 1, Y: at.Y - h}, {X: at.X + w + 1, Y: at.Y - h}, {X: at.X + w + 1, Y: at.Y}, {X: at.X - 1, Y: at.Y},
		})
		c.FillText(sty, at, m.label)
	}
}

// Thumbnail draws the marker's legend icon: a short vertical line.
func (m vMarker) Thumbnail(c *draw.Canvas) {
	x := c.Center().X
	c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
}

// bandThumb is the legend icon of an uncertainty band.
type bandThumb struct{ fill draw.LineStyle }

func (b bandThumb) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.fill.Color, []vg.Point{
		c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y},
	})
}

// lineThumb is the legend icon of a curve.
func lineThumb(sty draw.LineStyle) plot.Thumbnailer {
	return &plotter.Line{LineStyle: sty}
}

// glyphThumb is the legend icon of a point marker.
func glyphThumb(sty draw.GlyphStyle) plot.Thumbnailer {
	return &plotter.Scatter{GlyphStyle: sty}
}
