package plan

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/internal/parallel"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// Headroom search: the first probe is the capacity bound times headroomOver
// (above any sustainable rate); bisection stops at headroomTol relative
// width or after headroomSteps probes.
const (
	headroomOver  = 1.25
	headroomTol   = 0.01
	headroomSteps = 10
	// A closed-loop headroom search doubles the concurrency up to
	// concurrencyGrowth times the target (at most maxConcurrent).
	concurrencyGrowth = 16
	maxConcurrent     = 4096
)

// slack is a feasible candidate's smallest limit-to-value ratio: how far
// it is from its tightest SLO, the tie-break before headroom is known.
func (c *candidate) slack() float64 {
	return 1 / worst(c.misses).Ratio()
}

// recommend ranks the feasible candidates, finds the headroom of the
// leaders, and explains an empty result.
func (s *search) recommend(ctx context.Context) error {
	feasible := func() []*candidate {
		var feas []*candidate
		for _, c := range s.cands {
			if c.state == stateSimulated && c.ok {
				feas = append(feas, c)
			}
		}
		return feas
	}
	feas := feasible()
	if len(feas) == 0 {
		if err := s.confirmMisses(ctx); err != nil {
			return err
		}
		feas = feasible()
	}
	if len(feas) == 0 {
		s.explain()
		return nil
	}
	sort.SliceStable(feas, func(i, j int) bool {
		if feas[i].cost != feas[j].cost {
			return feas[i].cost < feas[j].cost
		}
		return feas[i].slack() > feas[j].slack()
	})
	// Headroom for the top K and for up to K more at the same cost as the
	// K-th, since headroom may reorder them.
	k := s.opts.TopK
	n := min(len(feas), k)
	for n < len(feas) && n < 2*k && feas[n].cost == feas[k-1].cost {
		n++
	}
	lead := feas[:n]
	recs := make([]Recommendation, n)
	errs := make([]error, n)
	s.done = 0
	err := parallel.ForEach(ctx, n, s.opts.Workers, func(i int) {
		recs[i], errs[i] = s.recommendation(ctx, lead[i])
		s.mu.Lock()
		s.progress("headroom", n)
		s.mu.Unlock()
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].Cost != recs[j].Cost {
			return recs[i].Cost < recs[j].Cost
		}
		return recs[i].Headroom.Ratio > recs[j].Headroom.Ratio
	})
	recs = recs[:min(len(recs), k)]
	for i := range recs {
		recs[i].Rank = i + 1
	}
	s.res.Recommendations = recs
	s.res.Search.Simulations = s.sims
	return nil
}

func (s *search) recommendation(ctx context.Context, c *candidate) (Recommendation, error) {
	o := s.opts
	s.mu.Lock()
	dep, err := s.prof.Configure(s.target(c.t.gpu, c.t.engine, c.topo, c.t.dpAttention, s.band))
	var central calibrate.Deployment
	if err == nil && s.band != 0 {
		central, err = s.prof.Configure(s.target(c.t.gpu, c.t.engine, c.topo, c.t.dpAttention, 0))
	}
	s.mu.Unlock()
	if err != nil {
		return Recommendation{}, err
	}
	withSettings, err := c.withSettings(dep, c.settings)
	if err != nil {
		return Recommendation{}, err
	}
	r := Recommendation{
		GPU: c.t.gpu.Name, Engine: dep.Engine.Label, Topology: c.topo, Layout: c.topo.String(), Notation: Notation(c.topo),
		DPAttention: c.t.attnDP, GPUs: c.gpus, Cost: c.cost, Metrics: c.metrics, Derived: dep.Derived, Bound: roundDecimals(c.bound, 3),
		OutputPerGPU: roundDecimals(c.metrics[model.OutputThroughput]/float64(c.gpus), 3),
		PerUser:      roundDecimals(perUser(c.metrics), 3),
		Settings:     settingsOf(withSettings, c.t.disagg, c.settings),
		Steady:       c.steady,
		MaxModelLen:  dep.MaxModelLen, GPUMemoryUtilization: dep.Settings.GPUMemoryUtilization, KVFitTokens: predict.KVFit(withSettings),
		Router: predict.RouterOf(dep), Frontend: dep.FrontendFrom,
	}
	if s.band != 0 {
		r.Frontend = central.FrontendFrom // the band moves the serial work it names
	}
	for _, m := range c.misses {
		r.SLOValues = append(r.SLOValues, achieved(m, ""))
	}
	if s.band != 0 {
		d, err := c.withSettings(central, c.settings)
		if err != nil {
			return Recommendation{}, err
		}
		cr, err := s.steady(ctx, c, d, o.Workload.Load)
		if err != nil {
			return Recommendation{}, fmt.Errorf("plan: %s with central costs: %w", c.name(), err)
		}
		misses, _ := check(o.SLOs, cr.Metrics)
		for _, m := range misses {
			r.Central = append(r.Central, achieved(m, ""))
		}
	}
	r.Costs = calibrate.SourceFitted
	for _, d := range dep.Derived {
		r.Uncertainty = math.Max(r.Uncertainty, roundDecimals(d.RelSigma, 3))
		switch {
		case d.Source == calibrate.SourcePrior:
			r.Costs = calibrate.SourcePrior
		case d.Source != calibrate.SourceFitted && r.Costs == calibrate.SourceFitted:
			r.Costs = calibrate.SourceDerived
		}
	}
	if span, what := o.workload(o.Workload.Load, 1).Span(); dep.MaxModelLen > 0 && span > dep.MaxModelLen {
		s.mu.Lock()
		note := fmt.Sprintf("%s = %d exceeds %s's calibrated max-model-len %d on %s: its predictions extrapolate", what, span, dep.Engine.Label, dep.MaxModelLen, c.t.gpu.Name)
		if !slices.Contains(s.res.Notes, note) {
			s.res.Notes = append(s.res.Notes, note)
		}
		s.mu.Unlock()
	}
	pools, err := s.headroom(ctx, c, &r.Headroom)
	if err != nil {
		return Recommendation{}, err
	}
	r.Bottleneck = predict.BottleneckOf(pools)
	return r, nil
}

// headroom bisects the load between the target (which passes) and a load
// that fails, and returns the pools of the highest passing run.
func (s *search) headroom(ctx context.Context, c *candidate, h *Headroom) ([]sim.PoolStats, error) {
	o := s.opts
	pass := func(l model.Load) (bool, []Miss, []sim.PoolStats, error) {
		d, err := c.deployment()
		if err != nil {
			return false, nil, nil, err
		}
		r, err := s.probe(ctx, c, d, l)
		if err != nil {
			return false, nil, nil, fmt.Errorf("plan: headroom of %s at %s: %w", c.name(), l, err)
		}
		m, ok, _ := s.verdict(r)
		return ok, m, r.Pools, nil
	}
	bestPools := c.pools
	var failMiss []Miss
	if o.Workload.Load.Kind == model.ClosedLoop {
		lo, hi := o.Workload.Load.Concurrency, 0
		for n := 2 * lo; n <= min(maxConcurrent, concurrencyGrowth*o.Workload.Load.Concurrency); n *= 2 {
			ok, m, p, err := pass(model.Closed(n))
			if err != nil {
				return nil, err
			}
			if !ok {
				hi, failMiss = n, m
				break
			}
			lo, bestPools = n, p
		}
		if hi == 0 {
			h.AtLeast = true
		} else {
			for step := 0; hi-lo > 1 && step < headroomSteps; step++ {
				mid := (lo + hi) / 2
				ok, m, p, err := pass(model.Closed(mid))
				if err != nil {
					return nil, err
				}
				if ok {
					lo, bestPools = mid, p
				} else {
					hi, failMiss = mid, m
				}
			}
		}
		h.MaxConcurrency = lo
		h.Ratio = roundDecimals(float64(lo)/float64(o.Workload.Load.Concurrency), 3)
	} else {
		open := func(r float64) model.Load { return model.Open(r, o.Workload.Load.Burstiness) }
		lo := o.Workload.Load.Rate
		hi := math.Max(c.bound, lo) * headroomOver
		ok, m, p, err := pass(open(hi))
		if err != nil {
			return nil, err
		}
		if ok {
			lo, bestPools, h.AtLeast = hi, p, true
		} else {
			failMiss = m
			for step := 0; (hi-lo)/lo > headroomTol && step < headroomSteps; step++ {
				mid := (lo + hi) / 2
				ok, m, p, err := pass(open(mid))
				if err != nil {
					return nil, err
				}
				if ok {
					lo, bestPools = mid, p
				} else {
					hi, failMiss = mid, m
				}
			}
		}
		h.RequestRate = roundDecimals(lo, 3)
		h.Ratio = roundDecimals(lo/o.Workload.Load.Rate, 3)
	}
	if failMiss != nil {
		h.Binding = worstMissed(failMiss).SLO.Label()
		if worstMissed(failMiss).Ratio() <= 1 {
			h.Binding = BindingSaturated
		}
	}
	return bestPools, nil
}

// worstMissed is the missed SLO with the highest ratio.
func worstMissed(ms []Miss) Miss { return worst(ms) }

func perUser(m map[string]float64) float64 {
	if t := m[model.MeanTPOT]; t > 0 {
		return 1000 / t
	}
	return 0
}

func achieved(m Miss, by string) Achieved {
	return Achieved{SLO: m.SLO.Label(), Limit: m.SLO.LimitMs, Value: roundDecimals(m.Value, 3), Met: m.Value <= m.SLO.LimitMs, By: by}
}

// roundDecimals rounds x to digits places after the decimal point, for
// numbers a plan reports.
func roundDecimals(x float64, digits int) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// confirmRuns is how many of the candidates closest to each SLO get a full
// run when every candidate missed, so the explanation quotes full-run values
// (and a short run that misjudged a candidate is caught).
const confirmRuns = 3

// confirmMisses gives a full run to the candidates that came closest to each
// SLO in a short run.
func (s *search) confirmMisses(ctx context.Context) error {
	o := s.opts
	picked := map[*candidate]bool{}
	var runs []*candidate
	for i := range o.SLOs {
		var short []*candidate
		for _, c := range s.cands {
			if c.state == stateShortMissed {
				short = append(short, c)
			}
		}
		sort.SliceStable(short, func(a, b int) bool { return short[a].misses[i].Value < short[b].misses[i].Value })
		for _, c := range short[:min(len(short), confirmRuns)] {
			if !picked[c] {
				picked[c] = true
				runs = append(runs, c)
			}
		}
	}
	for _, c := range runs {
		d, err := c.deployment()
		if err != nil {
			return err
		}
		r, err := s.steady(ctx, c, d, o.Workload.Load)
		if err != nil {
			return fmt.Errorf("plan: simulating %s: %w", c.name(), err)
		}
		c.state, c.metrics, c.pools, c.steady = stateSimulated, r.Metrics, r.Pools, r.Steady
		c.misses, c.ok, c.saturated = s.verdict(r)
		s.res.Search.ShortMissed--
		s.res.Search.Simulated++
		if c.ok {
			s.res.Search.Feasible++
		}
	}
	return nil
}

// explain says why no candidate qualifies: an SLO below every latency
// floor, a rate beyond every capacity bound, or the best each SLO reached.
func (s *search) explain() {
	o := s.opts
	res := s.res
	res.Search.Simulations = s.sims
	// An SLO no deployment can meet even with a single request of the
	// shortest prompt and output (newTemplate).
	in, out := o.workload(o.Workload.Load, 1).Shortest()
	shortestNote := func(family string) string {
		switch {
		case o.Workload.Dataset != "":
			return "; the shortest prompt and the shortest output of the " + o.Workload.Dataset + " dataset scaled to ISL and OSL"
		case family == "e2el" && out != o.Workload.OSL:
			return fmt.Sprintf("; %d is the shortest output of the ±%s spread around OSL %d", out, workload.OutputSpreadText, o.Workload.OSL)
		}
		return ""
	}
	for i, slo := range o.SLOs {
		if s.bestFloor[i] > slo.LimitMs {
			res.Why = fmt.Sprintf("no deployment can meet %s: even a lone request takes at least %s ms (%s, on %s)",
				slo, fmtMs(s.bestFloor[i]), floorWhat(slo.Family, in, out, sim.CachedPrefix(o.Workload.PrefixHitRate, in))+shortestNote(slo.Family), s.bestFloorOn[i])
			res.Best = append(res.Best, Achieved{SLO: slo.Label(), Limit: slo.LimitMs, Value: roundDecimals(s.bestFloor[i], 3), By: s.bestFloorOn[i]})
			return
		}
	}
	if res.Search.Simulated == 0 {
		res.Why = fmt.Sprintf("no deployment within %d GPUs can sustain %s: the largest capacity bound is %.3g req/s (%s)",
			o.MaxGPUs, o.Workload.Load, s.bestBound, s.boundBy)
		return
	}
	// Best value of each SLO over every simulated candidate.
	var binding *Achieved
	for i, slo := range o.SLOs {
		best := Achieved{SLO: slo.Label(), Limit: slo.LimitMs, Value: math.Inf(1)}
		for _, c := range s.cands {
			if c.state != stateSimulated {
				continue
			}
			if v := c.misses[i].Value; v < best.Value {
				best.Value, best.By = v, c.name()
			}
		}
		best.Value = roundDecimals(best.Value, 3)
		best.Met = best.Value <= slo.LimitMs
		res.Best = append(res.Best, best)
		if !best.Met && (binding == nil || best.Value/best.Limit > binding.Value/binding.Limit) {
			b := best
			binding = &b
		}
	}
	if binding != nil {
		res.Why = fmt.Sprintf("no deployment within %d GPUs meets %s<=%sms at %s: the best %s reached is %s ms (%s)",
			o.MaxGPUs, binding.SLO, fmtMs(binding.Limit), o.Workload.Load, binding.SLO, fmtMs(binding.Value), binding.By)
		return
	}
	// Every SLO is met by some candidate, never all by one: name the closest.
	var closest *candidate
	for _, c := range s.cands {
		if c.state != stateSimulated {
			continue
		}
		if closest == nil || worst(c.misses).Ratio() < worst(closest.misses).Ratio() {
			closest = c
		}
	}
	w := worst(closest.misses)
	if w.Ratio() <= 1 {
		res.Why = fmt.Sprintf("no deployment within %d GPUs keeps up with %s in steady state: the closest, %s, meets every SLO but is saturated",
			o.MaxGPUs, o.Workload.Load, closest.name())
		return
	}
	res.Why = fmt.Sprintf("no deployment within %d GPUs meets every SLO at once at %s: the closest, %s, misses %s with %s ms",
		o.MaxGPUs, o.Workload.Load, closest.name(), w.SLO, fmtMs(w.Value))
}

// margin runs the search again with central costs (band 0) to find the
// cheapest deployment that would be recommended without the confidence
// margin, and says what the margin cost.
func (s *search) margin(ctx context.Context) error {
	o := s.opts
	if o.NoMargin || s.band == 0 || len(s.res.Recommendations) == 0 {
		return nil
	}
	co := o
	co.Confidence, co.NoMargin, co.NoSweep, co.TopK, co.Progress = 0.5, true, true, 1, nil
	cs, err := newSearch(s.prof, co)
	if err != nil {
		return err
	}
	cs.enumerate()
	if err := cs.simulate(ctx); err != nil {
		return err
	}
	top := s.res.Recommendations[0]
	m := &Margin{Cost: top.Cost}
	var best *candidate
	for _, c := range cs.cands {
		if c.state == stateSimulated && c.ok && (best == nil || c.cost < best.cost || (c.cost == best.cost && c.slack() > best.slack())) {
			best = c
		}
	}
	if best != nil {
		m.CentralBest, m.CentralGPU, m.CentralGPUs, m.CentralCost = shape(Notation(best.topo), best.t.attnDP), best.t.gpu.Name, best.gpus, best.cost
		m.Extra = roundDecimals(top.Cost-best.cost, 6)
	}
	s.res.Margin = m
	s.res.Search.MarginSimulations = cs.sims
	return nil
}

// floorWhat says what a latency floor prices: the prefill of a prompt of
// isl tokens, of which the prefix cache serves the first cached.
func floorWhat(family string, isl, osl, cached int) string {
	prefill := fmt.Sprintf("one %d-token prompt", isl)
	if cached > 0 {
		prefill = fmt.Sprintf("the %d uncached tokens of one %d-token prompt (%d from the prefix cache)", isl-cached, isl, cached)
	}
	switch family {
	case "ttft":
		return "the fastest prefill of " + prefill
	case "e2el":
		return fmt.Sprintf("the prefill of %s and %d decode steps at the fastest", prefill, osl-1)
	default:
		return "one decode step of a lone request at the fastest"
	}
}

func fmtMs(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// frontier collects every fully simulated candidate and the Pareto
// frontier of those meeting the SLOs: no other has both more output
// throughput per GPU and more output tokens per second per user.
func (s *search) frontier() {
	var pts []FrontierPoint
	for _, c := range s.cands {
		if c.state != stateSimulated && !c.sweep {
			continue
		}
		pts = append(pts, FrontierPoint{
			GPU: c.t.gpu.Name, Layout: c.topo.String(), Notation: Notation(c.topo), DPAttention: c.t.attnDP, GPUs: c.gpus, Cost: c.cost,
			OutputPerGPU: roundDecimals(c.metrics[model.OutputThroughput]/float64(c.gpus), 3),
			PerUser:      roundDecimals(perUser(c.metrics), 3),
			MeetsSLOs:    c.ok,
		})
	}
	s.res.Cloud = pts
	// The frontier of what a planner can pick: deployments meeting the SLOs
	// (those that miss them, often by not keeping up with the load, would
	// crowd its cheap end); all simulated ones when none does.
	var meets []FrontierPoint
	for _, p := range pts {
		if p.MeetsSLOs {
			meets = append(meets, p)
		}
	}
	s.res.FrontierOf = "deployments meeting the SLOs"
	if len(meets) == 0 {
		meets, s.res.FrontierOf = pts, "all simulated deployments (none meets the SLOs)"
	}
	s.res.Frontier = Pareto(meets)
}

// Pareto returns the points no other point beats on both output
// throughput per GPU and output speed per user, fastest per user first.
func Pareto(pts []FrontierPoint) []FrontierPoint {
	sorted := append([]FrontierPoint(nil), pts...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].PerUser != sorted[j].PerUser {
			return sorted[i].PerUser > sorted[j].PerUser
		}
		if sorted[i].OutputPerGPU != sorted[j].OutputPerGPU {
			return sorted[i].OutputPerGPU > sorted[j].OutputPerGPU
		}
		return strings.Compare(sorted[i].Label(), sorted[j].Label()) < 0
	})
	var out []FrontierPoint
	bestY := math.Inf(-1)
	for _, p := range sorted {
		if p.OutputPerGPU > bestY {
			out = append(out, p)
			bestY = p.OutputPerGPU
		}
	}
	return out
}
