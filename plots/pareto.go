package plots

import (
	"fmt"
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ParetoPoint is one deployment on the plane of output speed per user
// against output throughput per GPU.
type ParetoPoint struct {
	// Label names the deployment, e.g. "H20 6P(TP2) 1D(TP4)"; frontier
	// points are labelled in the plot.
	Label string
	// Group picks the colour (e.g. the GPU type); one legend entry per group.
	Group string
	// PerUser is output tokens per second per user (1000 / mean TPOT);
	// PerGPU is output tokens per second per GPU. Points where either is
	// not a positive finite number are left out and counted in the footer.
	PerUser, PerGPU float64
	// MeetsSLOs draws a filled marker; a deployment missing them is hollow.
	MeetsSLOs bool
	// OnFrontier joins the point to the Pareto frontier line.
	OnFrontier bool
	// Rank, when positive, marks a recommended deployment: a large ring
	// round its point and "#rank" before its label, labelled first.
	Rank int
}

// Pareto is what ParetoFigure draws.
type Pareto struct {
	Title, Subtitle string
	Points          []ParetoPoint
}

// groupPalette colours the groups in order; red stays reserved for flags.
var groupPalette = []color.RGBA{blue, orange, green, purple, brown, cyan, olive, grey}

var frontierStyle = draw.LineStyle{Color: ink, Width: curveWidth}

// recommendedGlyph rings a recommended deployment.
var recommendedGlyph = draw.GlyphStyle{Shape: draw.RingGlyph{}, Radius: vg.Points(7), Color: ink}

// ParetoFigure draws every deployment as a point, filled when it meets the
// SLOs and hollow when not, one colour per group, and the Pareto frontier
// as a line through its labelled points: no deployment lies above and to
// the right of it.
func ParetoFigure(pa Pareto) *Figure {
	f := &Figure{Width: 9 * vg.Inch, Height: 7 * vg.Inch, title: pa.Title, subtitle: pa.Subtitle, cols: 1}
	const xLabel, yLabel = "output tokens/s per user (1000 / mean TPOT)", "output tokens/s per GPU"
	var groups []string
	byGroup := map[string][2]plotter.XYs{} // [meets, misses]
	var frontier plotter.XYs
	var frontierLabels []string
	var recs []ParetoPoint
	var xs, ys extent
	skipped := 0
	for _, pt := range pa.Points {
		if !(validX(pt.PerUser) && validX(pt.PerGPU)) {
			skipped++
			continue
		}
		if _, ok := byGroup[pt.Group]; !ok {
			groups = append(groups, pt.Group)
		}
		xy := plotter.XY{X: pt.PerUser, Y: pt.PerGPU}
		g := byGroup[pt.Group]
		if pt.MeetsSLOs {
			g[0] = append(g[0], xy)
		} else {
			g[1] = append(g[1], xy)
		}
		byGroup[pt.Group] = g
		if pt.OnFrontier {
			frontier = append(frontier, xy)
			frontierLabels = append(frontierLabels, pt.Label)
		}
		if pt.Rank > 0 {
			recs = append(recs, pt)
		}
		xs.add(xy.X)
		ys.add(xy.Y)
	}
	var notes []string
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d deployment(s) without a positive throughput or speed not shown", skipped))
	}
	f.footer = joinNotes(notes)
	if !xs.ok {
		f.panels = []panel{{name: "Pareto frontier", xLabel: xLabel, yLabel: yLabel}}
		return f
	}

	p := newPlot("")
	p.Add(newGrid())
	meets := draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(3.2)}
	misses := draw.GlyphStyle{Shape: draw.RingGlyph{}, Radius: vg.Points(3.2)}
	for i, g := range groups {
		col := groupPalette[i%len(groupPalette)]
		pts := byGroup[g]
		if len(pts[1]) > 0 {
			p.Add(scatter(pts[1], withColor(misses, withAlpha(col, 0xc0))))
		}
		if len(pts[0]) > 0 {
			p.Add(scatter(pts[0], withColor(meets, withAlpha(col, 0xd0))))
		}
		f.legend = append(f.legend, legendEntry{g, []plot.Thumbnailer{glyphThumb(withColor(meets, col))}})
	}
	f.legend = append(f.legend,
		legendEntry{"meets the SLOs", []plot.Thumbnailer{glyphThumb(withColor(meets, ink))}},
		legendEntry{"misses them", []plot.Thumbnailer{glyphThumb(withColor(misses, ink))}})
	if len(frontier) > 0 {
		idx := make([]int, len(frontier))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return frontier[idx[a]].X < frontier[idx[b]].X })
		line := make(plotter.XYs, len(idx))
		labels := make([]string, len(idx))
		for i, k := range idx {
			line[i], labels[i] = frontier[k], frontierLabels[k]
		}
		p.Add(curve(line, frontierStyle))
		f.legend = append(f.legend, legendEntry{"Pareto frontier", []plot.Thumbnailer{lineThumb(frontierStyle)}})
		frontier, frontierLabels = line, labels
	}
	// Labels: the recommended deployments first (bold, "#rank"), then the
	// frontier's, placed so that none overlaps another or a labelled point.
	sort.SliceStable(recs, func(a, b int) bool { return recs[a].Rank < recs[b].Rank })
	var ls labelSet
	labelled := map[plotter.XY]bool{}
	for _, r := range recs {
		xy := plotter.XY{X: r.PerUser, Y: r.PerGPU}
		ls.xys = append(ls.xys, xy)
		ls.labels = append(ls.labels, fmt.Sprintf("#%d %s", r.Rank, r.Label))
		ls.styles = append(ls.styles, textStyle(8, ink))
		labelled[xy] = true
	}
	for i, xy := range frontier {
		if !labelled[xy] {
			ls.xys = append(ls.xys, xy)
			ls.labels = append(ls.labels, frontierLabels[i])
			ls.styles = append(ls.styles, textStyle(7.5, grey))
		}
	}
	if len(recs) > 0 {
		var xys plotter.XYs
		for _, r := range recs {
			xys = append(xys, plotter.XY{X: r.PerUser, Y: r.PerGPU})
		}
		p.Add(scatter(xys, recommendedGlyph))
		f.legend = append(f.legend, legendEntry{"recommended (#rank)", []plot.Thumbnailer{glyphThumb(recommendedGlyph)}})
	}
	if len(ls.xys) > 0 {
		for _, g := range byGroup {
			ls.others = append(append(ls.others, g[0]...), g[1]...)
		}
		p.Add(ls)
	}
	// Both axes from zero, with room on the right and top for the labels.
	p.X.Tick.Marker = linearTicks{}
	p.X.Min, p.X.Max = 0, xs.max*1.25
	setLinearY(p, ys, 0.1)
	f.panels = []panel{{name: "Pareto frontier", plot: p, xLabel: xLabel, yLabel: yLabel}}
	return f
}

func joinNotes(notes []string) string {
	out := ""
	for i, n := range notes {
		if i > 0 {
			out += "; "
		}
		out += n
	}
	return out
}
