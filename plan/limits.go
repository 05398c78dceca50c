package plan

import (
	"context"
	"math"
	"sort"

	"github.com/capsim/capsim/internal/parallel"
	"github.com/capsim/capsim/model"
)

// LimitBound says that the GPU cap (Options.MaxGPUs) cut off deployments
// that beat what the search found: past the cap, deployments that pass the
// same capacity and latency-floor bounds as the candidates and cost less
// than the top recommendation (any, when nothing qualified). The cheapest
// of them are simulated (pastLimitTries).
type LimitBound struct {
	Limit string `json:"limit"` // LimitMaxGPUs
	Value int    `json:"value"`
	// Untried counts the deployments past the cap, of up to UpTo GPUs,
	// that pass the bounds and cost less than Against.
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

// LimitMaxGPUs names Options.MaxGPUs in LimitBound.Limit.
const LimitMaxGPUs = "max_gpus"

// Past the cap, deployments are counted up to pastLimitHorizon times it
// (at least MaxGPUsLimit GPUs), and at most pastLimitTries of the cheapest
// are simulated, up to pastLimitPerShape GPU counts of each worker shape
// spaced as the frontier sweep spaces them: enough to show what the cap
// cut off without a second search.
const (
	pastLimitHorizon  = 4
	pastLimitTries    = 8
	pastLimitPerShape = 3
)

// limits fills Result.Limits: whether the GPU cap bound the search. It is
// said when a deployment past the cap meets every SLO at a lower cost than
// the top recommendation, or, when nothing qualified, what lies past it.
func (s *search) limits(ctx context.Context) error {
	o := s.opts
	rate := 0.0 // closed loop: the load adapts, no capacity bound
	if o.Load.Kind == model.OpenLoop {
		rate = o.Load.Rate
	}
	against := math.Inf(1)
	if len(s.res.Recommendations) > 0 {
		against = s.res.Recommendations[0].Cost
	}
	upTo := max(pastLimitHorizon*o.MaxGPUs, MaxGPUsLimit)
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
	lb := LimitBound{Limit: LimitMaxGPUs, Value: o.MaxGPUs, UpTo: upTo}
	type key struct {
		gpu            string
		disagg         bool
		tpA, tpB, attn int
	}
	seen := map[key]bool{}
	var picks []*candidate
	for _, t := range s.tmpls {
		k := key{t.gpu.Name, t.disagg, t.tpA, t.tpB, t.attnDP}
		if seen[k] || t.tooSlow(o.SLOs) {
			continue
		}
		seen[k] = true
		maxG := upTo
		if !math.IsInf(against, 1) {
			maxG = min(int(against/t.price), upTo)
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
			for n := max(need(t.agg.aggRate), o.MaxGPUs/t.tpA+1); n*t.tpA <= maxG; n++ {
				consider(model.Aggregated(model.Pool{Count: n, TP: t.tpA}), float64(n)*t.agg.aggRate)
			}
		} else {
			for x := need(t.prefill.prefillRate); x*t.tpA+t.tpB <= maxG; x++ {
				for y := max(need(t.decode.decodeRate), (o.MaxGPUs-x*t.tpA)/t.tpB+1); x*t.tpA+y*t.tpB <= maxG; y++ {
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
		return nil
	}
	sort.SliceStable(picks, func(i, j int) bool {
		if picks[i].cost != picks[j].cost {
			return picks[i].cost < picks[j].cost
		}
		return picks[i].bound > picks[j].bound
	})
	picks = picks[:min(len(picks), pastLimitTries)]
	errs := make([]error, len(picks))
	err := parallel.ForEach(ctx, len(picks), o.Workers, func(i int) {
		c := picks[i]
		d, err := c.deployment()
		if err != nil {
			errs[i] = err
			return
		}
		r, err := s.steadyOnce(ctx, d, o.Load)
		if err != nil {
			errs[i] = err
			return
		}
		_, c.ok, _ = s.verdict(r)
	})
	if err != nil {
		return err
	}
	lb.Simulated = len(picks)
	pick := picks[0]
	for i, c := range picks {
		if errs[i] == nil && c.ok {
			pick, lb.Meets = c, true
			break
		}
	}
	if !lb.Meets && !math.IsInf(against, 1) {
		return nil // nothing past the cap shown to beat the recommendation
	}
	lb.Cheapest, lb.CheapestGPUs, lb.CheapestCost = pick.t.gpu.Name+" "+shape(Notation(pick.topo), pick.t.attnDP), pick.gpus, pick.cost
	if !math.IsInf(against, 1) {
		lb.Against = against
	}
	s.res.Limits = append(s.res.Limits, lb)
	s.res.Search.Simulations = s.sims
	return nil
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
