package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// rect is a label's box on the canvas.
type rect struct{ min, max vg.Point }

func (a rect) overlaps(b rect) bool {
	return a.min.X < b.max.X && b.min.X < a.max.X && a.min.Y < b.max.Y && b.min.Y < a.max.Y
}

// placeLabels puts label i (width and height sizes[i]) near anchors[i]
// without overlapping a label already placed, any anchor's or obstacle's
// marker (a square of half-side markR) or the box [lo, hi], trying positions right
// and left of the point at growing vertical offsets, in a fixed order.
// Labels are placed in order, so earlier ones win; a label with no free
// position is left out (ok false). The result depends on the inputs alone.
func placeLabels(anchors []vg.Point, sizes [][2]vg.Length, lo, hi vg.Point, markR vg.Length, obstacles ...vg.Point) (pos []vg.Point, ok []bool) {
	pos, ok = make([]vg.Point, len(anchors)), make([]bool, len(anchors))
	var placed []rect
	var marks []rect
	for _, a := range append(append([]vg.Point(nil), anchors...), obstacles...) {
		marks = append(marks, rect{vg.Point{X: a.X - markR, Y: a.Y - markR}, vg.Point{X: a.X + markR, Y: a.Y + markR}})
	}
	gap := markR + vg.Points(1.5)
	for i, a := range anchors {
		w, h := sizes[i][0], sizes[i][1]
		for step := 0; step < 8 && !ok[i]; step++ {
			dy := vg.Length(step) * h * 0.9
			for _, c := range []vg.Point{
				{X: a.X + gap, Y: a.Y + gap/2 + dy}, {X: a.X + gap, Y: a.Y - h - gap/2 - dy},
				{X: a.X - gap - w, Y: a.Y + gap/2 + dy}, {X: a.X - gap - w, Y: a.Y - h - gap/2 - dy},
			} {
				r := rect{c, vg.Point{X: c.X + w, Y: c.Y + h}}
				if r.min.X < lo.X || r.min.Y < lo.Y || r.max.X > hi.X || r.max.Y > hi.Y {
					continue
				}
				free := true
				for _, p := range placed {
					free = free && !r.overlaps(p)
				}
				for j, m := range marks {
					free = free && (j == i || !r.overlaps(m))
				}

				if free {
					pos[i], ok[i] = c, true
					placed = append(placed, r)
					break
				}
			}
		}
	}
	return pos, ok
}

// labelSet draws labels next to their points where placeLabels finds
// room, clear of every other point drawn (others).
type labelSet struct {
	xys    plotter.XYs
	labels []string
	styles []text.Style
	others plotter.XYs
}

func (l labelSet) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	anchors := make([]vg.Point, len(l.xys))
	sizes := make([][2]vg.Length, len(l.xys))
	for i, xy := range l.xys {
		anchors[i] = vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
		sizes[i] = [2]vg.Length{l.styles[i].Width(l.labels[i]), l.styles[i].Height(l.labels[i])}
	}
	var obstacles []vg.Point
	for _, xy := range l.others {
		obstacles = append(obstacles, vg.Point{X: trX(xy.X), Y: trY(xy.Y)})
	}
	pos, ok := placeLabels(anchors, sizes, c.Min, c.Max, vg.Points(5), obstacles...)
	for i := range l.labels {
		if ok[i] {
			c.FillText(l.styles[i], pos[i], l.labels[i])
		}
	}
}
