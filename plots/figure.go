package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/capsim/capsim/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PNGDPI is the resolution of PNG output: a 10 in wide figure is 1200 px.
const PNGDPI = 120

// Figure is a laid-out figure: a title block, a legend strip under it,
// panels in a grid and an optional footer. Width and Height may be changed
// before rendering.
type Figure struct {
	Width, Height vg.Length

	title, subtitle string
	legend          []legendEntry
	panels          []panel
	cols            int
	footer          string
}

// panel is one plot of the grid; a nil plot draws "no data" under name.
// The axis labels are drawn by the figure, not by gonum, which reserves
// room for them around the arithmetic middle of the range: on a log axis
// that is near the end and leaves a gap beside the data.
type panel struct {
	name           string
	plot           *plot.Plot
	xLabel, yLabel string
}

// legendEntry is one item of the legend strip.
type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

// Render writes the figure as "png" or "svg".
func (f *Figure) Render(w io.Writer, format string) error {
	var err error
	switch format {
	case "svg":
		canvas := vgsvg.New(f.Width, f.Height)
		f.draw(draw.New(canvas))
		_, err = canvas.WriteTo(w)
	case "png":
		canvas := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(PNGDPI))
		f.draw(draw.New(canvas))
		// Figures are drawn by the hundred and are mostly flat white, which
		// the fastest compression level packs about as well as the default.
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		err = enc.Encode(w, canvas.Image())
	default:
		return fmt.Errorf("plots: unsupported format %q (want png or svg)", format)
	}
	if err != nil {
		return fmt.Errorf("plots: writing %s: %w", format, err)
	}
	return nil
}

// Save writes the figure to path in the format its extension names (.png or .svg).
func (f *Figure) Save(path string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	var buf bytes.Buffer
	if err := f.Render(&buf, format); err != nil {
		return fmt.Errorf("plots: %s: %w", path, err)
	}
	if err := atomicfile.Write(path, buf.Bytes()); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return nil
}

const margin = vg.Length(10) // points around the figure and between blocks

func (f *Figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, margin, -margin, margin/2, -margin)

	top := c.Max.Y
	if f.title != "" {
		top = drawCentredLine(c, top, boldStyle(14, color.Black), f.title)
	}
	if f.subtitle != "" {
		top = drawCentredLine(c, top-3, textStyle(10, ink), f.subtitle)
	}
	if len(f.legend) > 0 {
		top = drawLegendStrip(c, top-6, f.legend)
	}
	bottom := c.Min.Y
	if f.footer != "" {
		sty := textStyle(8.5, ink)
		line := fitText(sty, f.footer, c.Max.X-c.Min.X)
		sty.XAlign = draw.XLeft
		c.FillText(sty, vg.Point{X: c.Min.X, Y: bottom + sty.FontExtents().Descent}, line)
		bottom += sty.FontExtents().Height + 4
	}

	area := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: c.Min.X, Y: bottom},
		Max: vg.Point{X: c.Max.X, Y: top - 6},
	}}
	cols := max(f.cols, 1)
	rows := (len(f.panels) + cols - 1) / cols
	tiles := draw.Tiles{Cols: cols, Rows: max(rows, 1), PadX: 18, PadY: 14}
	for i, p := range f.panels {
		tc := tiles.At(area, i%cols, i/cols)
		if p.plot == nil {
			drawNoData(tc, p.name)
			continue
		}
		drawPanel(tc, p)
	}
}

// drawPanel draws p's plot with its axis labels centred on the data area.
func drawPanel(c draw.Canvas, p panel) {
	sty := textStyle(10, color.Black)
	h := sty.FontExtents().Height + 2
	inner := draw.Crop(c, h, 0, h, 0)
	p.plot.Draw(inner)
	data := p.plot.DataCanvas(inner)
	x := sty
	x.XAlign, x.YAlign = draw.XCenter, draw.YBottom
	c.FillText(x, vg.Point{X: data.Center().X, Y: c.Min.Y + sty.FontExtents().Descent}, p.xLabel)
	y := sty
	y.Rotation = math.Pi / 2
	y.XAlign, y.YAlign = draw.XCenter, draw.YTop
	c.FillText(y, vg.Point{X: c.Min.X, Y: data.Center().Y}, p.yLabel)
}

// drawCentredLine draws txt centred with its top at y, wrapped onto as many
// lines as it needs (a long title is never cut off), and returns the y
// under it.
func drawCentredLine(c draw.Canvas, y vg.Length, sty text.Style, txt string) vg.Length {
	sty.XAlign = draw.XCenter
	sty.YAlign = draw.YTop
	for _, line := range wrapText(sty, txt, c.Max.X-c.Min.X) {
		c.FillText(sty, vg.Point{X: c.Center().X, Y: y}, line)
		y -= sty.Height(line)
	}
	return y
}

// wrapText breaks txt at spaces into lines that fit width; a single word
// wider than width is shortened with an ellipsis.
func wrapText(sty text.Style, txt string, width vg.Length) []string {
	words := strings.Fields(txt)
	var lines []string
	cur := ""
	for _, w := range words {
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if sty.Width(next) <= width || cur == "" {
			cur = next
			continue
		}
		lines = append(lines, fitText(sty, cur, width))
		cur = w
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, fitText(sty, cur, width))
	}
	return lines
}

// fitText shortens txt with an ellipsis until it fits width, so a long
// title never runs off the canvas.
func fitText(sty text.Style, txt string, width vg.Length) string {
	if sty.Width(txt) <= width {
		return txt
	}
	runes := []rune(txt)
	for len(runes) > 1 && sty.Width(string(runes)+"…") > width {
		runes = runes[:len(runes)-1]
	}
	return string(runes) + "…"
}

// drawLegendStrip lays entries out left to right, centred, wrapping when a
// row is full, with its top at y; it returns the y under the strip. Keeping
// the legend outside the panels means it never hides data.
func drawLegendStrip(c draw.Canvas, y vg.Length, entries []legendEntry) vg.Length {
	const thumbW, gap, pad = vg.Length(22), vg.Length(18), vg.Length(4)
	sty := textStyle(10, ink)
	sty.YAlign = draw.YCenter
	rowH := sty.FontExtents().Height + 4
	width := c.Max.X - c.Min.X

	type item struct {
		entry legendEntry
		w     vg.Length
	}
	var rows [][]item
	var rowW []vg.Length
	for _, e := range entries {
		w := thumbW + pad + sty.Width(e.label)
		n := len(rows)
		if n == 0 || rowW[n-1]+gap+w > width {
			rows = append(rows, nil)
			rowW = append(rowW, -gap)
			n++
		}
		rows[n-1] = append(rows[n-1], item{e, w})
		rowW[n-1] += gap + w
	}
	for i, row := range rows {
		x := c.Center().X - rowW[i]/2
		mid := y - rowH*vg.Length(i) - rowH/2
		for _, it := range row {
			thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: mid - rowH/2 + 2},
				Max: vg.Point{X: x + thumbW, Y: mid + rowH/2 - 2},
			}}
			for _, t := range it.entry.thumbs {
				t.Thumbnail(&thumb)
			}
			c.FillText(sty, vg.Point{X: x + thumbW + pad, Y: mid}, it.entry.label)
			x += it.w + gap
		}
	}
	return y - rowH*vg.Length(len(rows))
}

// drawNoData draws a framed panel saying there is nothing to plot, in place
// of a gonum plot whose empty log axis would panic.
func drawNoData(c draw.Canvas, name string) {
	title := textStyle(11, color.Black)
	title.XAlign = draw.XCenter
	title.YAlign = draw.YTop
	c.FillText(title, vg.Point{X: c.Center().X, Y: c.Max.Y}, name)
	frame := c
	frame.Max.Y -= title.Height(name) + 4
	c.StrokeLines(draw.LineStyle{Color: color.Gray{Y: 0xb0}, Width: vg.Points(0.5)}, []vg.Point{
		frame.Min, {X: frame.Max.X, Y: frame.Min.Y}, frame.Max, {X: frame.Min.X, Y: frame.Max.Y}, frame.Min,
	})
	msg := textStyle(12, grey)
	msg.XAlign = draw.XCenter
	msg.YAlign = draw.YCenter
	c.FillText(msg, frame.Center(), "no data")
}
