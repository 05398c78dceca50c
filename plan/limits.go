package plan

import (
	"context"
	"math"
	"slices"
	"sort"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// LimitBound says that a search limit cut off deployments that beat what
// the search found: the GPU cap (Options.MaxGPUs: deployments past it) or
// the TP degrees (Options.TPs: deployments at the default degrees it left
// out, within the cap) that pass the same capacity and latency-floor
// bounds as the candidates and cost less than the top recommendation (any,
// when nothing qualified). The cheapest of them are simulated
// (pastLimitTries).
type LimitBound struct {
	Limit string `json:"limit"` // LimitMaxGPUs or LimitTP
	// Value is the GPU cap; Excluded the TP degrees left out (LimitTP).
	Value    int   `json:"value,omitempty"`
	Excluded []int `json:"excluded,omitempty"`
	// Untried counts the deployments cut off, of up to UpTo GPUs, that
	// pass the bounds and cost less than Against.
	Untried int `json:"untried"`
	UpTo    int `json:"up_to_gpus"`
	// Simulated of them were simulated at the target load; Meets says one
	// met every SLO, and Cheapest is then the cheapest that did (else the
	// cheapest simulated).
	Simulated    int     `json:"simulated"`
	Meets        bool    `json:"meets_slos"`
	Cheapest     string  `json:"cheapest"` // e.g. "H100-SXM 20xTP4"
	CheapestGPUs int     `json:"cheapest_gpus"`
	CheapestCost float64 `json:"cheapest_cost"`
	// Against is the top recommendation's cost (0 when none qualified).
	Against float64 `json:"against_cost,omitempty"`
}

// The limits of LimitBound.Limit.
const (
	LimitMaxGPUs = "max_gpus"
	LimitTP      = "tp"
)

// Past the cap, deployments are counted up to pastLimitHorizon times it
// (at least MaxGPUsLimit GPUs), and at most pastLimitTries of the cheapest
// are simulated, up to pastLimitPerShape GPU counts of each worker shape
// spaced as the frontier sweep spaces them: enough to show what a limit
// cut off without a second search.
const (
	pastLimitHorizon  = 4
	pastLimitTries    = 8
	pastLimitPerShape = 3
)

// limits fills Result.Limits: whether the GPU cap or the TP degrees bound
// the search. A limit is said when a deployment it cut off meets every SLO
// at a lower cost than the top recommendation, or, when nothing
// qualified, to say what lies past it.
func (s *search) limits(ctx context.Context) error {
	o := s.opts
	upTo := max(pastLimitHorizon*o.MaxGPUs, MaxGPUsLimit)
	lb, err := s.pastLimit(ctx, s.tmpls, o.MaxGPUs+1, upTo)
	if err != nil {
		return err
	}
	if lb != nil {
		lb.Limit, lb.Value = LimitMaxGPUs, o.MaxGPUs
		s.res.Limits = append(s.res.Limits, *lb)
	}
	tmpls, excluded := s.excludedTPTemplates()
	if len(tmpls) == 0 {
		return nil
	}
	if lb, err = s.pastLimit(ctx, tmpls, 1, o.MaxGPUs); err != nil {
		return err
	}
	if lb != nil {
		lb.Limit = LimitTP
		for _, tp := range excluded { // those that fit a worker
			if slices.ContainsFunc(tmpls, func(t *template) bool { return t.tpA == tp || t.disagg && t.tpB == tp }) {
				lb.Excluded = append(lb.Excluded, tp)
			}
		}
		s.res.Limits = append(s.res.Limits, *lb)
	}
	return nil
}

// excludedTPTemplates are templates, on the GPU types searched, at the
// default TP degrees Options.TPs left out, and those degrees; none when
// it left none out.
func (s *search) excludedTPTemplates() ([]*template, []int) {
	o := s.opts
	var excluded []int
	for _, tp := range DefaultTPs() {
		if !slices.Contains(o.TPs, tp) && tp <= o.MaxGPUs {
			excluded = append(excluded, tp)
		}
	}
	if len(excluded) == 0 {
		return nil, nil
	}
	var out []*template
	seen := map[string]bool{}
	for _, base := range s.tmpls {
		g := base.gpu
		if seen[g.Name] {
			continue
		}
		seen[g.Name] = true
		for _, disagg := range []bool{false, true} {
			if disagg && !o.Disaggregated || !disagg && !o.Aggregated {
				continue
			}
			eng, err := s.prof.ResolveEngine(g.Name, s.llm.Name, o.Engine, disagg)
			if err != nil {
				continue
			}
			mo := calibrate.MemoryOptionsFor(eng, g, s.llm, o.Stated)
			var fit []int
			for _, tp := range excluded {
				if _, err := model.WorkerMemory(g, s.llm, model.Pool{Count: 1, TP: tp}, mo); err == nil {
					fit = append(fit, tp)
				}
			}
			var topos []model.Topology
			for _, a := range fit {
				if !disagg {
					topos = append(topos, model.Aggregated(model.Pool{Count: 1, TP: a}))
					continue
				}
				// A disaggregated shape with a left-out degree in either pool.
				for _, b := range append(append([]int(nil), fit...), o.TPs...) {
					topos = append(topos, model.Disaggregated(model.Pool{Count: 1, TP: a}, model.Pool{Count: 1, TP: b}))
					if !slices.Contains(fit, b) {
						topos = append(topos, model.Disaggregated(model.Pool{Count: 1, TP: b}, model.Pool{Count: 1, TP: a}))
					}
				}
			}
			for _, topo := range topos {
				if topo.GPUs() > o.MaxGPUs {
					continue
				}
				if t, err := s.newTemplate(g, eng, topo, base.price, 0); err == nil {
					out = append(out, t)
				}
			}
		}
	}
	return out, excluded
}

// pastLimit looks, among the deployments of tmpls of minG to upTo GPUs,
// for those that pass the capacity and latency-floor bounds and cost less
// than the top recommendation, simulates the cheapest, and says what it
// found; nil when nothing there beats the recommendation (or, with none,
// nothing passes the bounds).
func (s *search) pastLimit(ctx context.Context, tmpls []*template, minG, upTo int) (*LimitBound, error) {
	o := s.opts
	rate := 0.0 // closed loop: the load adapts, no capacity bound
	if o.Workload.Load.Kind == model.OpenLoop {
		rate = o.Workload.Load.Rate
	}
	against := math.Inf(1)
	if len(s.res.Recommendations) > 0 {
		against = s.res.Recommendations[0].Cost
	}
	// need is the fewest workers of per-worker rate r that sustain the rate.
	need := func(r float64) int {
		if rate <= 0 {
			return 1
		}
		if !(r > 0) {
			return math.MaxInt32
		}
		n := max(int(math.Ceil(rate/r)), 1)
		if float64(n)*r < rate {
			n++
		}
		return n
	}
	ceilDiv := func(a, b int) int { return max((a+b-1)/b, 1) }
	lb := &LimitBound{UpTo: upTo}
	type key struct {
		gpu            string
		disagg         bool
		tpA, tpB, attn int
	}
	seen := map[key]bool{}
	var picks []*candidate
	for _, t := range tmpls {
		k := key{t.gpu.Name, t.disagg, t.tpA, t.tpB, t.attnDP}
		if seen[k] || t.tooSlow(o.SLOs) {
			continue
		}
		seen[k] = true
		maxG := upTo
		if !math.IsInf(against, 1) {
			maxG = min(int(against/t.price), upTo)
		}
		if t.disagg {
			maxG = s.disaggCap(maxG)
		}
		// The best bound at each GPU count: the cheapest sits at the
		// capacity edge, so larger counts are tried too (see below).
		best := map[int]*candidate{}
		consider := func(topo model.Topology, bound float64) {
			g := topo.GPUs()
			cost := float64(g) * t.price
			if !(cost < against) {
				return
			}
			lb.Untried++
			if b := best[g]; b == nil || bound > b.bound {
				best[g] = &candidate{t: t, topo: topo, gpus: g, cost: cost, bound: bound}
			}
		}
		if !t.disagg {
			for n := max(need(t.agg.aggRate), ceilDiv(minG, t.tpA)); n*t.tpA <= maxG; n++ {
				consider(model.Aggregated(model.Pool{Count: n, TP: t.tpA}), float64(n)*t.agg.aggRate)
			}
		} else {
			for x := need(t.prefill.prefillRate); x*t.tpA+t.tpB <= maxG; x++ {
				for y := max(need(t.decode.decodeRate), ceilDiv(minG-x*t.tpA, t.tpB)); x*t.tpA+y*t.tpB <= maxG; y++ {
					consider(model.Disaggregated(model.Pool{Count: x, TP: t.tpA}, model.Pool{Count: y, TP: t.tpB}),
						math.Min(float64(x)*t.prefill.prefillRate, float64(y)*t.decode.decodeRate))
				}
			}
		}
		counts := make([]int, 0, len(best))
		for g := range best {
			counts = append(counts, g)
		}
		sort.Ints(counts)
		last, n := 0, 0
		for _, g := range counts {
			if n == pastLimitPerShape {
				break
			}
			if last == 0 || float64(g) >= float64(last)*sweepGrowth {
				picks, last, n = append(picks, best[g]), g, n+1
			}
		}
	}
	if len(picks) == 0 {
		return nil, nil
	}
	sort.SliceStable(picks, func(i, j int) bool {
		if picks[i].cost != picks[j].cost {
			return picks[i].cost < picks[j].cost
		}
		return picks[i].bound > picks[j].bound
	})
	picks = picks[:min(len(picks), pastLimitTries)]
	errs, err := s.steadyEach(ctx, picks, o, func(c *candidate, r *sim.Result) { _, c.ok, _ = s.verdict(r) })
	if err != nil {
		return nil, err
	}
	s.res.Search.Simulations = s.sims
	lb.Simulated = len(picks)
	pick := picks[0]
	for i, c := range picks {
		if errs[i] == nil && c.ok {
			pick, lb.Meets = c, true
			break
		}
	}
	if !lb.Meets && !math.IsInf(against, 1) {
		return nil, nil // nothing cut off shown to beat the recommendation
	}
	lb.Cheapest, lb.CheapestGPUs, lb.CheapestCost = pick.t.gpu.Name+" "+shape(Notation(pick.topo), pick.t.attnDP), pick.gpus, pick.cost
	if !math.IsInf(against, 1) {
		lb.Against = against
	}
	return lb, nil
}

// tooSlow reports a latency floor above an SLO's limit: no deployment of
// the template meets it, however many workers.
func (t *template) tooSlow(slos []SLO) bool {
	for _, slo := range slos {
		if t.floor[slo.Family] > slo.LimitMs {
			return true
		}
	}
	return false
}
