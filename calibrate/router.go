package calibrate

import (
	"fmt"
	"math"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// How a group's requests were spread over its replicas, when the records
// do not say: a benchmark write-up rarely names its load balancer. A
// balanced router (round-robin) and a connection-level one (random, as a
// Kubernetes Service gives a client that opens a connection per request)
// price the same costs differently under load: random routing queues
// requests on whichever replica drew more, raising TTFT and the TPOT tail
// (seed 004's vLLM p99 TPOT, two to three times the mean, is beyond any
// balanced router). So the fit refines an unstated multi-replica router's
// costs under each and keeps the better fit (routerScore). A stated router,
// an engine that routes by itself (Dynamo) or one worker is fitted as is.

// routerTails are the tail metrics that judge a router besides the fitted
// ones (fitMetrics), with their weight: the fit never refines costs on
// them, but routers differ most there.
var routerTails = []struct {
	name   string
	weight float64
}{
	{model.P99TTFT, 0.5},
	{model.P99TPOT, 0.5},
}

// routerCandidates are the routers a group is fitted with: the stated one
// (settings.Router), or, when the records leave it open, round-robin (the
// simulator's default, tried first so that it wins a tie) and random.
func routerCandidates(engine string, settings engine.Settings, pts []*point) []string {
	if !routerOpen(engine, pts) {
		return []string{settings.Router}
	}
	return []string{string(sim.RoundRobin), string(sim.Random)}
}

// routerOpen reports whether a group's router is unknown: the records
// state none, the engine has no router of its own (Dynamo's is configured
// with the deployment, round-robin by default), and some record's
// deployment has more than one worker behind it.
func routerOpen(label string, pts []*point) bool {
	if engine.Family(label) == "dynamo" {
		return false
	}
	multi := false
	for _, p := range pts {
		for k := range p.rec.System.Settings {
			if _, k := engine.SplitRole(engine.SettingKey(k)); k == "router" {
				return false
			}
		}
		behind := p.topo.Replicas
		if p.topo.Disaggregated() {
			behind = p.topo.Decode
		}
		if behind.Count > 1 {
			multi = true
		}
	}
	return multi
}

// routerScore is how well simulated metrics explain a group's records:
// the fit's robust loss (pointLoss: Huber on log ratios, δ = 10%, with
// fitMetrics' weights) plus the same loss on the tail metrics the records
// state (routerTails), weighted by each point's weight and averaged. Lower
// is better. Both routers have the same number of fitted parameters, so
// their scores compare directly.
func routerScore(pts []*point, sims []map[string]float64) float64 {
	var s, w float64
	for i, p := range pts {
		l := pointLoss(p, sims[i])
		for _, m := range routerTails {
			want, ok := p.rec.Metric(m.name)
			if !ok || !(want > 0) || math.IsInf(want, 0) {
				continue
			}
			got := sims[i][m.name]
			if !(got > 0) {
				l += m.weight
				continue
			}
			l += m.weight * huber(math.Log(got/want), 0.1)
		}
		s += p.weight * l
		w += p.weight
	}
	return s / math.Max(w, 1e-9)
}

// RouterChoice records that a group's router was not stated by its records
// and was chosen by the fit: the router whose refined fit scored lower
// (routerScore), both scores, and why.
type RouterChoice struct {
	Chosen string             `json:"chosen"`
	Scores map[string]float64 `json:"scores"` // router → score (lower explains the records better)
	Why    string             `json:"why"`
}

// routerTry is one router's refined fit of a group.
type routerTry struct {
	router string
	params params
	note   string
	score  float64
}

// chooseRouter keeps the try with the lowest score (the first on a tie)
// and says why.
func chooseRouter(tries []routerTry, tails bool) (routerTry, *RouterChoice) {
	best := tries[0]
	for _, t := range tries[1:] {
		if t.score < best.score {
			best = t
		}
	}
	rc := &RouterChoice{Chosen: best.router, Scores: map[string]float64{}}
	var parts []string
	for _, t := range tries {
		rc.Scores[t.router] = roundSignificant(t.score, 4)
		parts = append(parts, fmt.Sprintf("%s %.4f", t.router, t.score))
	}
	judged := "mean metrics"
	if tails {
		judged = "mean and p99 metrics"
	}
	rc.Why = fmt.Sprintf("router not stated by the records and the deployment has several replicas: fitted with each, %s explains the records' %s better (score %s; lower is better)",
		best.router, judged, strings.Join(parts, ", "))
	return best, rc
}

// hasTails reports whether any record states a tail metric routerScore uses.
func hasTails(pts []*point) bool {
	for _, p := range pts {
		for _, m := range routerTails {
			if _, ok := p.rec.Metric(m.name); ok {
				return true
			}
		}
	}
	return false
}
