package plots

import (
	"math"
	"strings"
	"testing"
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
