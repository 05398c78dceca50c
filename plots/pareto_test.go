package plots

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestParetoFigure(t *testing.T) {
	pts := []ParetoPoint{
		{Label: "H20 4xTP4", Group: "H20", PerUser: 20, PerGPU: 150, MeetsSLOs: true, OnFrontier: true},
		{Label: "H20 2P(TP4) 1D(TP4)", Group: "H20", PerUser: 45, PerGPU: 120, MeetsSLOs: true, OnFrontier: true},
		{Label: "H20 3xTP4", Group: "H20", PerUser: 15, PerGPU: 100},
		{Label: "H200 1P(TP2) 1D(TP8)", Group: "H200", PerUser: 90, PerGPU: 60, MeetsSLOs: true, OnFrontier: true},
		{Label: "H200 2xTP1", Group: "H200", PerUser: 30, PerGPU: 50},
		{Label: "bad", Group: "H200", PerUser: math.NaN(), PerGPU: 10},
	}
	svg := renderSVG(t, ParetoFigure(Pareto{Title: "Qwen3-32B at 20 req/s", Points: pts}))
	for _, want := range []string{
		"Qwen3-32B at 20 req/s", "H20", "H200", "meets the SLOs", "misses them", "Pareto frontier",
		"H20 4xTP4", "H20 2P(TP4) 1D(TP4)", "H200 1P(TP2) 1D(TP8)",
		"output tokens/s per user (1000 / mean TPOT)", "output tokens/s per GPU",
		"1 deployment(s) without a positive throughput or speed not shown",
	} {
		if countText(svg, want) != 1 {
			t.Errorf("text %q drawn %d times, want once", want, countText(svg, want))
		}
	}
	// Only frontier points are labelled.
	for _, not := range []string{"H20 3xTP4", "H200 2xTP1"} {
		if strings.Contains(svg, not) {
			t.Errorf("non-frontier point %q is labelled", not)
		}
	}
	empty := renderSVG(t, ParetoFigure(Pareto{Title: "none"}))
	if countText(empty, "no data") != 1 {
		t.Error("a Pareto figure without points does not say no data")
	}
}

// Recommended deployments are ringed and labelled "#rank" first; a dense
// cluster of frontier points never gets overlapping labels.
func TestParetoRecommendedAndLabels(t *testing.T) {
	pts := []ParetoPoint{
		{Label: "H200 9xTP4", Group: "H200", PerUser: 32, PerGPU: 130, MeetsSLOs: true, OnFrontier: true, Rank: 2},
		{Label: "H200 5P(TP2) 3D(TP8)", Group: "H200", PerUser: 34, PerGPU: 120, MeetsSLOs: true, Rank: 1},
	}
	for i := 0; i < 12; i++ { // a tight cluster along the frontier
		pts = append(pts, ParetoPoint{Label: "H100-SXM " + strings.Repeat("x", i%3+1) + "TP" + string(rune('1'+i%8)), Group: "H100-SXM",
			PerUser: 35 + 0.3*float64(i), PerGPU: 119 - 0.5*float64(i), MeetsSLOs: true, OnFrontier: true})
	}
	svg := renderSVG(t, ParetoFigure(Pareto{Title: "t", Points: pts}))
	for _, want := range []string{"#1 H200 5P(TP2) 3D(TP8)", "#2 H200 9xTP4", "recommended (#rank)"} {
		if countText(svg, want) != 1 {
			t.Errorf("text %q drawn %d times, want once", want, countText(svg, want))
		}
	}
	if strings.Contains(svg, ">H200 9xTP4<") {
		t.Error("a recommended frontier point is labelled twice")
	}
}

func TestPlaceLabelsNeverOverlap(t *testing.T) {
	var anchors []vg.Point
	var sizes [][2]vg.Length
	for i := 0; i < 40; i++ { // a dense diagonal band and a pile at one spot
		x, y := vg.Length(100+7*(i%20)), vg.Length(300-5*(i%20))
		if i >= 20 {
			x, y = 200, 200
		}
		anchors = append(anchors, vg.Point{X: x, Y: y})
		sizes = append(sizes, [2]vg.Length{vg.Length(40 + i%5*10), 9})
	}
	lo, hi := vg.Point{X: 0, Y: 0}, vg.Point{X: 500, Y: 400}
	var obstacles []vg.Point // unlabelled points scattered over the band
	for i := 0; i < 30; i++ {
		obstacles = append(obstacles, vg.Point{X: vg.Length(90 + 11*i), Y: vg.Length(320 - 9*i)})
	}
	pos, ok := placeLabels(anchors, sizes, lo, hi, 4, obstacles...)
	n := 0
	var rs []rect
	for i := range anchors {
		if !ok[i] {
			continue
		}
		n++
		r := rect{pos[i], vg.Point{X: pos[i].X + sizes[i][0], Y: pos[i].Y + sizes[i][1]}}
		if r.min.X < lo.X || r.min.Y < lo.Y || r.max.X > hi.X || r.max.Y > hi.Y {
			t.Errorf("label %d outside the canvas: %+v", i, r)
		}
		for j, q := range rs {
			if r.overlaps(q) {
				t.Errorf("labels overlap: %+v and placed #%d %+v", r, j, q)
			}
		}
		for _, o := range obstacles {
			if r.overlaps(rect{vg.Point{X: o.X - 4, Y: o.Y - 4}, vg.Point{X: o.X + 4, Y: o.Y + 4}}) {
				t.Errorf("label %d covers the point at %v", i, o)
			}
		}
		rs = append(rs, r)
	}
	if !ok[0] || n < 20 {
		t.Errorf("placed %d of %d labels (first placed: %v): too few for the space", n, len(anchors), ok[0])
	}
	again, _ := placeLabels(anchors, sizes, lo, hi, 4, obstacles...)
	for i := range pos {
		if pos[i] != again[i] {
			t.Fatal("placement is not deterministic")
		}
	}
}
