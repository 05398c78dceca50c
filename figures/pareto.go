package figures

import (
	"fmt"
	"strings"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plan"
	"github.com/capsim/capsim/plots"
)

// WritePareto draws every fully simulated deployment of a plan and its
// Pareto frontier to path (.png or .svg).
func WritePareto(path string, r *plan.Result) error {
	onFrontier := map[string]bool{}
	for _, p := range r.Frontier {
		onFrontier[p.Label()] = true
	}
	rank := map[string]int{}
	for _, rec := range r.Recommendations {
		rank[rec.Label()] = rec.Rank
	}
	var pts []plots.ParetoPoint
	seen := map[string]bool{}
	for _, p := range r.Cloud {
		label := p.Label()
		seen[label] = true
		pts = append(pts, plots.ParetoPoint{Label: label, Group: p.GPU, PerUser: p.PerUser, PerGPU: p.OutputPerGPU,
			MeetsSLOs: p.MeetsSLOs, OnFrontier: onFrontier[label], Rank: rank[label]})
	}
	for _, rec := range r.Recommendations { // a recommendation is always simulated; keep it on the figure
		label := rec.Label()
		if !seen[label] {
			pts = append(pts, plots.ParetoPoint{Label: label, Group: rec.GPU, PerUser: rec.PerUser, PerGPU: rec.OutputPerGPU, MeetsSLOs: true, Rank: rec.Rank})
		}
	}
	var slos []string
	for _, s := range r.SLOs {
		slos = append(slos, s.String())
	}
	fig := plots.ParetoFigure(plots.Pareto{
		Title:    fmt.Sprintf("%s, ISL %d / OSL %d at %s", model.ShortName(r.Model), r.ISL, r.OSL, r.Load),
		Subtitle: fmt.Sprintf("%d simulated deployments; SLOs %s; frontier over the %s", len(r.Cloud), strings.Join(slos, ", "), r.FrontierOf),
		Points:   pts,
	})
	return fig.Save(path)
}
