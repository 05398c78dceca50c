package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// A screening run replays a short benchmark (20 s of arrivals, at least
// 400 requests) on an empty system; a candidate that misses an SLO there by
// more than shortMargin gets no steady-state verdict. Under open loop a
// system that starts empty and drains at the end rarely shows worse
// latencies than its steady state: the margin covers the noise of a small
// sample. A candidate whose verdict misses by at most settingsReach tries
// other engine settings.
const (
	shortMargin   = 1.25
	settingsReach = 1.15
)

// template is one deployment shape (GPU, engine, mode, TP degrees) with one
// worker per pool; candidates scale its worker counts.
type template struct {
	gpu    model.GPU
	engine engine.ID
	disagg bool
	tpA    int // replicas' or prefill workers' TP
	tpB    int // decode workers' TP (disaggregated)
	// dpAttention is the SGLang data-parallel attention degree the search
	// asked for (calibrate.Target.DPAttention; 0 runs the calibrated
	// default); attnDP the degree the workers run, as their engine settings
	// report it (predict.SettingsOf: 0 for attention split by TP; of
	// disaggregated pools that differ under the default, the larger).
	dpAttention, attnDP int
	dep                 calibrate.Deployment
	price               float64 // per GPU (1 when ranking by GPU count)
	// per-worker bounds of the pools
	prefill, decode, agg poolBounds
	floor                map[string]float64 // ms, per latency family
	prior                bool               // every pool's costs come from the roofline prior
}

// candidate is one deployment to evaluate.
type candidate struct {
	t     *template
	topo  model.Topology
	gpus  int
	cost  float64
	bound float64 // requests per second the deployment could serve at best

	state   candState
	metrics map[string]float64
	pools   []sim.PoolStats
	misses  []Miss
	ok      bool
	err     error
	// sweep marks a candidate beyond the cost cutoff simulated only to
	// widen the Pareto frontier.
	sweep bool
	// settings overrides the engines' defaults (nil: the defaults);
	// saturated marks a steady-state run that could not keep up.
	settings      *variant
	saturated     bool
	steady        *sim.Steady
	triedSettings bool
	// runs counts the simulations of this candidate (under search.mu).
	runs int
}

type candState int

const (
	statePending candState = iota
	stateCostlier
	stateShortMissed
	stateSimulated
)

// deployment is the template's deployment scaled to the candidate's worker
// counts, with its engine settings.
func (c *candidate) deployment() (calibrate.Deployment, error) {
	return c.withSettings(c.t.dep, c.settings)
}

// withSettings scales d to the candidate's worker counts (and the router
// that many run behind) and applies v (nil: none). An error means v's
// limits cannot be sized on d: the settings are not simulated, so never
// reported.
func (c *candidate) withSettings(d calibrate.Deployment, v *variant) (calibrate.Deployment, error) {
	d, err := v.applyTo(d.Scaled(c.topo), c.t.disagg)
	if err != nil {
		return calibrate.Deployment{}, fmt.Errorf("plan: %s with its searched engine settings: %w", c.name(), err)
	}
	return d, nil
}

// shape names the template's GPU, engine and worker TP degrees.
func (t *template) shape() string {
	if t.disagg {
		return fmt.Sprintf("%s, %s, prefill TP%d + decode TP%d%s", t.gpu.Name, t.engine.Label, t.tpA, t.tpB, dpSuffix(t.attnDP))
	}
	return fmt.Sprintf("%s, %s, TP%d%s", t.gpu.Name, t.engine.Label, t.tpA, dpSuffix(t.attnDP))
}

func (c *candidate) name() string {
	return fmt.Sprintf("%s on %d× %s", shape(Notation(c.topo), c.t.attnDP), c.gpus, c.t.gpu.Name)
}

// dpAttentionChoices are the attention layouts to try for workers of the
// given TP degrees: for an SGLang engine, attention split by TP (1) and one
// data-parallel group per rank of the TP all the workers share (a degree
// must divide every worker's TP); otherwise, and with
// NoDPAttentionSearch, only the calibrated default (0).
func (o Options) dpAttentionChoices(e engine.ID, tps ...int) []int {
	if o.NoDPAttentionSearch || e.Family != engine.SGLang {
		return []int{0}
	}
	g := 0
	for _, tp := range tps {
		g = gcd(g, tp)
	}
	if g <= 1 {
		return []int{0}
	}
	return []int{1, g}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// workload is the run of n prompts at load l.
func (o Options) workload(l model.Load, n int) workload.Workload {
	w := o.Workload
	w.Load, w.NumPrompts = l, n
	return w
}

// cachedBound is the most prompt tokens of a prompt of n tokens that dep
// serves from its prefix cache: the flat rate's share, or with shared
// prompts on replicas that cache them the most any request can hit
// (model.Sharing.MaxCached), so that capacity bounds and latency floors
// stay bounds.
func (o Options) cachedBound(dep calibrate.Deployment, n int) int {
	if o.Workload.PrefixHitRate > 0 || !o.Workload.Sharing.On() || !predict.CachesPrefixes(dep) {
		return sim.CachedPrefix(o.Workload.PrefixHitRate, n)
	}
	return o.Workload.Sharing.MaxCached(n)
}

// numPrompts is the measured requests of a verdict's first steady-state
// run at a load (predict.DefaultNumPrompts), held to what one run may
// simulate with its warm-up at the higher loads of a headroom search.
func (o Options) numPrompts(l model.Load) int {
	return min(predict.DefaultNumPrompts(o.Workload.NumPrompts, sim.SteadyState, l), sim.MaxNumPrompts/2)
}

// screenPrompts is the length of a screening run (benchmark replay, open
// loop only): 20 s of arrivals, at least 400 (calibrate.SteadyStatePrompts).
func (o Options) screenPrompts(l model.Load) int {
	n, err := calibrate.SteadyStatePrompts(l, 0)
	if err != nil {
		return sim.MaxNumPrompts
	}
	return n
}

// Run searches deployments of opts.Model that meet opts.SLOs at opts.Workload.Load.
// When none qualifies, the Result says why (Why, Best) and err is nil; err
// reports bad options, a model that fits nowhere within MaxGPUs, or cancellation.
func Run(ctx context.Context, prof Profile, opts Options) (*Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	opts = opts.withDefaults()
	s, err := newSearch(prof, opts)
	if err != nil {
		return nil, err
	}
	s.enumerate()
	if err := s.simulate(ctx); err != nil {
		return nil, err
	}
	if err := s.recommend(ctx); err != nil {
		return nil, err
	}
	if err := s.limits(ctx); err != nil {
		return nil, err
	}
	if err := s.sweep(ctx); err != nil {
		return nil, err
	}
	s.frontier()
	if err := s.margin(ctx); err != nil {
		return nil, err
	}
	return s.res, nil
}

type search struct {
	prof Profile
	opts Options
	band float64 // cost-band position of every verdict (Options.Band)
	// tracked are the steady-state statistics whose stability verdicts need
	tracked []string
	llm     model.LLM
	tmpls   []*template
	cands   []*candidate // survivors of the bounds, in evaluation order
	res     *Result

	mu       sync.Mutex
	feasible []float64 // costs of feasible candidates so far, sorted
	sims     int
	done     int
	// bestFloor is, per SLO index, the lowest latency floor over all
	// templates, and bestFloorOn the worker shape that has it.
	bestFloor   []float64
	bestFloorOn []string
	bestBound   float64 // highest capacity bound over all candidates
	boundBy     string
	boundTopo   model.Topology
	boundGPU    string
	boundDP     int  // the bound's data-parallel attention degree (template.attnDP)
	noShort     bool // tests: full runs only
}

func newSearch(prof Profile, o Options) (*search, error) {
	if prof == nil {
		return nil, errors.New("plan: no profile")
	}
	if err := o.validate(&o.Workload.Dataset); err != nil {
		return nil, err
	}
	llm, err := model.LookupLLM(o.Model)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	usable, tpErr := false, error(nil) // the first TP the model cannot use
	for _, tp := range o.TPs {
		err := llm.CheckTP(tp)
		if tp > o.MaxGPUs {
			err = fmt.Errorf("TP %d needs more GPUs than the %d a deployment may have (max GPUs)", tp, o.MaxGPUs)
		}
		if err == nil {
			usable = true
		} else if tpErr == nil {
			tpErr = err
		}
	}
	if !usable {
		return nil, fmt.Errorf("plan: %w", tpErr)
	}
	s := &search{prof: prof, opts: o, band: o.Band(), tracked: trackedMetrics(o.SLOs), llm: llm, bestFloor: make([]float64, len(o.SLOs)), bestFloorOn: make([]string, len(o.SLOs)), noShort: o.noShortRuns}
	for i := range s.bestFloor {
		s.bestFloor[i] = math.Inf(1)
	}
	s.res = &Result{Model: llm.Name, ISL: o.Workload.ISL, OSL: o.Workload.OSL, PrefixHitRate: o.Workload.PrefixHitRate, Sharing: o.Workload.Sharing, Dataset: o.Workload.Dataset, Load: o.Workload.Load, SLOs: o.SLOs, MaxGPUs: o.MaxGPUs, CostUnit: CostGPUs,
		Mode: sim.SteadyState, Confidence: roundDecimals(o.Confidence, 4), BandSigmas: roundDecimals(s.band, 3)}
	if o.GPUCost != nil {
		s.res.CostUnit = CostPerHour
	}
	s.res.FrontendMS = predict.FrontendMS(o.Frontend)
	s.res.KVLink = o.KVLink
	if s.disaggCap(o.MaxGPUs) < o.MaxGPUs {
		s.noteOnce(fmt.Sprintf("disaggregated deployments take at most %d GPUs: the stated KV link %s is within one server", model.GPUsPerServer, o.KVLink))
	}
	return s, s.buildTemplates()
}

// gpusToSearch resolves opts.GPUs (or the whole catalog) and their prices
// (nil when ranking by GPU count).
func (s *search) gpusToSearch() (gpus []model.GPU, prices map[string]float64, explicit bool, err error) {
	prices = map[string]float64{}
	for name, p := range s.opts.GPUCost {
		g, err := model.LookupGPU(name)
		if err != nil {
			return nil, nil, false, fmt.Errorf("plan: GPU cost: %w", err)
		}
		if !(p > 0) || math.IsInf(p, 0) {
			return nil, nil, false, fmt.Errorf("plan: GPU cost of %s must be a positive number, got %v", g.Name, p)
		}
		prices[g.Name] = p
	}
	if len(s.opts.GPUs) == 0 {
		gpus = model.GPUs()
	} else {
		explicit = true
		seen := map[string]bool{}
		for _, name := range s.opts.GPUs {
			g, err := model.LookupGPU(name)
			if err != nil {
				return nil, nil, false, fmt.Errorf("plan: %w", err)
			}
			if !seen[g.Name] {
				seen[g.Name] = true
				gpus = append(gpus, g)
			}
		}
	}
	if s.opts.GPUCost == nil {
		return gpus, nil, explicit, nil
	}
	var unpriced []string
	kept := gpus[:0:0]
	for _, g := range gpus {
		if _, ok := prices[g.Name]; ok {
			kept = append(kept, g)
		} else {
			unpriced = append(unpriced, g.Name)
		}
	}
	if len(kept) == 0 {
		return nil, nil, false, fmt.Errorf("plan: no GPU cost for any GPU searched (%s)", gpuNames(gpus))
	}
	if explicit && len(unpriced) > 0 {
		s.res.Notes = append(s.res.Notes, fmt.Sprintf("no GPU cost for %s: left out of the search (give a cost to include it)", strings.Join(unpriced, ", ")))
	}
	return kept, prices, explicit, nil
}

func gpuNames(gs []model.GPU) string {
	var n []string
	for _, g := range gs {
		n = append(n, g.Name)
	}
	return strings.Join(n, ", ")
}

// buildTemplates configures every GPU, mode and TP combination that fits.
func (s *search) buildTemplates() error {
	gpus, prices, explicit, err := s.gpusToSearch()
	if err != nil {
		return err
	}
	o := s.opts
	minGPUs := math.MaxInt // fewest GPUs any deployment needs, for the error
	minGPUsOn := ""
	var configureErrs []string
	for _, g := range gpus {
		price := 1.0
		if p, ok := prices[g.Name]; ok {
			price = p
		}
		modes := []bool{}
		if o.Aggregated {
			modes = append(modes, false)
		}
		if o.Disaggregated {
			modes = append(modes, true)
		}
		var gt []*template
		for _, disagg := range modes {
			eng, err := s.prof.ResolveEngine(g.Name, s.llm.Name, o.Engine, disagg)
			if err != nil {
				configureErrs = append(configureErrs, err.Error())
				continue
			}
			// The TP degrees whose workers hold the model with the
			// engine's own memory rule, as Configure will size them.
			mo := calibrate.MemoryOptionsFor(eng, g, s.llm, o.Stated)
			var fit []int
			for _, tp := range o.TPs {
				if _, err := model.WorkerMemory(g, s.llm, model.Pool{Count: 1, TP: tp}, mo); err == nil {
					fit = append(fit, tp)
				}
			}
			if len(fit) == 0 {
				if explicit {
					msg := fmt.Sprintf("%s does not fit on %s at TP %s with %s", model.ShortName(s.llm.Name), g.Name, joinInts(o.TPs), eng.Label)
					if tp, err := model.SmallestTP(g, s.llm, mo); err == nil {
						msg += fmt.Sprintf(" (smallest TP that fits: TP%d)", tp)
					} else {
						msg += " (nor at any TP up to 64)"
					}
					if !slices.Contains(configureErrs, msg) {
						configureErrs = append(configureErrs, msg)
					}
				}
				continue
			}
			// The smallest deployment that fits, whatever the profile says.
			need, shape := fit[0], fmt.Sprintf("1xTP%d on %s", fit[0], g.Name)
			if disagg {
				need, shape = 2*fit[0], fmt.Sprintf("1P(TP%d) 1D(TP%d) on %s", fit[0], fit[0], g.Name)
			}
			if need < minGPUs {
				minGPUs, minGPUsOn = need, shape
			}
			if need > o.MaxGPUs {
				continue
			}
			if !disagg {
				for _, tp := range fit {
					if tp > o.MaxGPUs {
						continue
					}
					for _, dp := range o.dpAttentionChoices(eng, tp) {
						t, err := s.newTemplate(g, eng, model.Aggregated(model.Pool{Count: 1, TP: tp}), price, dp)
						if err != nil {
							configureErrs = append(configureErrs, err.Error())
							s.noteDPFailure(dp, err)
							continue
						}
						gt = append(gt, t)
					}
				}
				continue
			}
			if calibrate.CheckKVLink(g, o.KVLink, oneServer) != nil {
				s.noteOnce(fmt.Sprintf("%s: left out of the disaggregated search: the stated KV link %s is not its link", g.Name, o.KVLink))
				continue
			}
			for _, a := range fit {
				for _, b := range fit {
					if a+b > s.disaggMax() {
						continue
					}
					for _, dp := range o.dpAttentionChoices(eng, a, b) {
						t, err := s.newTemplate(g, eng, model.Disaggregated(model.Pool{Count: 1, TP: a}, model.Pool{Count: 1, TP: b}), price, dp)
						if err != nil {
							configureErrs = append(configureErrs, err.Error())
							s.noteDPFailure(dp, err)
							continue
						}
						gt = append(gt, t)
					}
				}
			}
		}
		if !explicit {
			// By default search only GPUs with fitted or derived costs.
			anyCalibrated := false
			for _, t := range gt {
				anyCalibrated = anyCalibrated || !t.prior
			}
			if !anyCalibrated {
				continue
			}
		} else if len(gt) > 0 && allPrior(gt) {
			s.res.Notes = append(s.res.Notes, fmt.Sprintf("%s: no fitted or derived costs for %s; its costs come from the roofline prior (±50%%)", g.Name, model.ShortName(s.llm.Name)))
		}
		if len(gt) > 0 {
			s.res.GPUTypes = append(s.res.GPUTypes, g.Name)
		}
		s.tmpls = append(s.tmpls, gt...)
	}
	if len(s.tmpls) > 0 {
		return nil
	}
	switch {
	case minGPUs != math.MaxInt && minGPUs > o.MaxGPUs:
		return fmt.Errorf("plan: a limit of %d GPUs is too small for %s: the smallest deployment that fits is %s (%d GPUs)",
			o.MaxGPUs, model.ShortName(s.llm.Name), minGPUsOn, minGPUs)
	case len(configureErrs) > 0:
		return fmt.Errorf("plan: no deployment of %s can be configured: %s", model.ShortName(s.llm.Name), configureErrs[0])
	case !explicit:
		return fmt.Errorf("plan: the profile has no fitted or derived costs for %s on any GPU: name the GPUs to price with the roofline prior", model.ShortName(s.llm.Name))
	default:
		return fmt.Errorf("plan: %s fits on none of %s", model.ShortName(s.llm.Name), gpuNames(gpus))
	}
}

// noteDPFailure says in the result's notes why a data-parallel attention
// layout was not searched (its copied attention weights leave no room for
// the requests, say), which would otherwise go unseen beside the TP layout
// that was.
func (s *search) noteDPFailure(dp int, err error) {
	if dp <= 1 {
		return
	}
	s.noteOnce(fmt.Sprintf("DP attention %d not searched: %v", dp, err))
}

func allPrior(ts []*template) bool {
	for _, t := range ts {
		if !t.prior {
			return false
		}
	}
	return true
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}

// disaggMax is the most GPUs a disaggregated candidate takes: MaxGPUs, or
// one server's where the stated KV link is within a server.
func (s *search) disaggMax() int { return s.disaggCap(s.opts.MaxGPUs) }

// disaggCap is n, or one server's GPUs where fewer and the stated KV link
// is within a server: the most a disaggregated deployment may take.
func (s *search) disaggCap(n int) int {
	if within, _ := model.KVLinkWithinServer(s.opts.KVLink); within {
		return min(n, model.GPUsPerServer)
	}
	return n
}

// noteOnce adds a note to the result unless it holds it already.
func (s *search) noteOnce(n string) {
	if !slices.Contains(s.res.Notes, n) {
		s.res.Notes = append(s.res.Notes, n)
	}
}

// target is the calibrate.Target of one candidate at band.
func (s *search) target(gpu model.GPU, eng engine.ID, topo model.Topology, dpAttention int, band float64) calibrate.Target {
	t := calibrate.Target{GPU: gpu, LLM: s.llm, Engine: eng, Topology: topo, Band: band, Router: s.opts.Router, DPAttention: dpAttention, Stated: s.opts.Stated}
	if !topo.Disaggregated() {
		t.Frontend = s.opts.Frontend
	} else {
		t.KVLink = s.opts.KVLink
	}
	return t
}

// newTemplate configures one worker per pool and prices its bounds.
func (s *search) newTemplate(g model.GPU, eng engine.ID, topo model.Topology, price float64, dpAttention int) (*template, error) {
	dep, err := s.prof.Configure(s.target(g, eng, topo, dpAttention, s.band))
	if err != nil {
		return nil, err
	}
	t := &template{gpu: g, engine: dep.Engine, disagg: topo.Disaggregated(), dpAttention: dpAttention, dep: dep, price: price, prior: len(dep.Derived) > 0}
	for _, st := range predict.SettingsOf(dep) {
		t.attnDP = max(t.attnDP, st.DPAttention)
	}
	for _, d := range dep.Derived {
		if d.Source != calibrate.SourcePrior {
			t.prior = false
		}
	}
	isl, osl := s.opts.Workload.ISL, s.opts.Workload.OSL
	cached := s.opts.cachedBound(dep, isl)
	// Capacity bounds price the mean request; every request must fit;
	// latency floors price the shortest, so that they bound every
	// statistic of a dataset's spread of lengths (a median as well).
	w := s.opts.workload(s.opts.Workload.Load, 1)
	if err := dep.Fits(w); err != nil {
		return nil, err // collected, as Configure's are, under one plan: error
	}
	_, longOut := w.Longest()
	shortIn, shortOut := w.Shortest()
	shortCached := s.opts.cachedBound(dep, shortIn)
	cfg := dep.Config
	if t.disagg {
		t.tpA, t.tpB = topo.Prefill.TP, topo.Decode.TP
		t.prefill = boundsOf(cfg.Prefill, "prefill", isl, osl, cached)
		t.decode = boundsOf(cfg.Decode, "decode", isl, osl, cached)
		prefillOne, _ := oneRequest(cfg.Prefill, shortIn, shortCached)
		_, decodeOne := oneRequest(cfg.Decode, shortIn, shortCached)
		// The whole prompt's KV moves, cached prefix included, as the
		// simulator prices it (an upper bound: see sim.Config.PrefixHitRate).
		transfer := cfg.Transfer.Latency + cfg.Transfer.PerToken*float64(shortIn)
		t.floor = latencyFloor(prefillOne, transfer+decodeOne, decodeOne, shortOut, longOut)
	} else {
		t.tpA = topo.Replicas.TP
		t.agg = boundsOf(cfg.Replicas, "aggregated", isl, osl, cached)
		if cfg.FrontendService > 0 {
			// A replica's API server admits at most 1/FrontendService a second.
			t.agg.aggRate = math.Min(t.agg.aggRate, 1/cfg.FrontendService)
		}
		prefillOne, decodeOne := oneRequest(cfg.Replicas, shortIn, shortCached)
		t.floor = latencyFloor(prefillOne, 0, decodeOne, shortOut, longOut)
	}
	return t, nil
}

// enumerate lists every candidate within MaxGPUs, prunes those the bounds
// rule out, and orders the rest cheapest first.
func (s *search) enumerate() {
	o := s.opts
	rate := math.Inf(-1) // closed loop: no capacity pruning, the load adapts
	if o.Workload.Load.Kind == model.OpenLoop {
		rate = o.Workload.Load.Rate
	}
	var slab []candidate // survivors are allocated in blocks, not one by one
	for _, t := range s.tmpls {
		tooSlow := false
		for i, slo := range o.SLOs {
			f := t.floor[slo.Family]
			if f < s.bestFloor[i] {
				s.bestFloor[i], s.bestFloorOn[i] = f, t.shape()
			}
			if f > slo.LimitMs {
				tooSlow = true
			}
		}
		// Prune before allocating: most candidates of a large search fall
		// below the rate or are too slow, and need no candidate at all.
		add := func(topo model.Topology, bound float64) {
			s.res.Search.Candidates++
			if bound > s.bestBound {
				s.bestBound, s.boundTopo, s.boundGPU, s.boundDP = bound, topo, t.gpu.Name, t.attnDP
			}
			switch {
			case tooSlow:
				s.res.Search.TooSlow++
			case bound < rate:
				s.res.Search.Overloaded++
			default:
				if len(slab) == cap(slab) {
					slab = make([]candidate, 0, 1024)
				}
				slab = append(slab, candidate{t: t, topo: topo, gpus: topo.GPUs(), bound: bound})
				c := &slab[len(slab)-1]
				c.cost = float64(c.gpus) * t.price
				s.cands = append(s.cands, c)
			}
		}
		if !t.disagg {
			for n := 1; n*t.tpA <= o.MaxGPUs; n++ {
				add(model.Aggregated(model.Pool{Count: n, TP: t.tpA}), float64(n)*t.agg.aggRate)
			}
			continue
		}
		maxD := s.disaggMax()
		for x := 1; x*t.tpA+t.tpB <= maxD; x++ {
			pre := float64(x) * t.prefill.prefillRate
			if pre < rate && !tooSlow {
				// Every decode count is capped by this prefill pool: count them at once.
				n := (maxD - x*t.tpA) / t.tpB
				s.res.Search.Candidates += n
				s.res.Search.Overloaded += n
				if b := math.Min(pre, float64(n)*t.decode.decodeRate); b > s.bestBound {
					s.bestBound, s.boundGPU, s.boundDP = b, t.gpu.Name, t.attnDP
					s.boundTopo = model.Disaggregated(model.Pool{Count: x, TP: t.tpA}, model.Pool{Count: n, TP: t.tpB})
				}
				continue
			}
			for y := 1; x*t.tpA+y*t.tpB <= maxD; y++ {
				bound := math.Min(pre, float64(y)*t.decode.decodeRate)
				add(model.Disaggregated(model.Pool{Count: x, TP: t.tpA}, model.Pool{Count: y, TP: t.tpB}), bound)
			}
		}
	}
	if s.boundGPU != "" {
		s.boundBy = fmt.Sprintf("%s on %d× %s", shape(Notation(s.boundTopo), s.boundDP), s.boundTopo.GPUs(), s.boundGPU)
	}
	// A total order (no two candidates share GPU, topology and attention
	// layout), so an unstable sort is deterministic.
	slices.SortFunc(s.cands, func(a, b *candidate) int {
		if c := cmp.Compare(a.cost, b.cost); c != 0 {
			return c
		}
		if c := cmp.Compare(b.bound, a.bound); c != 0 {
			return c
		}
		if c := strings.Compare(a.t.gpu.Name, b.t.gpu.Name); c != 0 {
			return c
		}
		x, y := a.topo, b.topo
		for _, c := range [...]int{
			cmp.Compare(x.Replicas.Count, y.Replicas.Count), cmp.Compare(x.Replicas.TP, y.Replicas.TP),
			cmp.Compare(x.Prefill.Count, y.Prefill.Count), cmp.Compare(x.Prefill.TP, y.Prefill.TP),
			cmp.Compare(x.Decode.Count, y.Decode.Count), cmp.Compare(x.Decode.TP, y.Decode.TP),
			cmp.Compare(a.t.dpAttention, b.t.dpAttention),
		} {
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

// cutoff is the cost above which a candidate cannot make the top K: the
// K-th cheapest feasible cost so far. Call with s.mu held.
func (s *search) cutoff() float64 {
	if len(s.feasible) < s.opts.TopK {
		return math.Inf(1)
	}
	return s.feasible[s.opts.TopK-1]
}

func (s *search) progress(phase string, total int) {
	s.done++
	if s.opts.Progress != nil {
		s.opts.Progress(Progress{Phase: phase, Done: s.done, Total: total, Feasible: len(s.feasible)})
	}
}

// run is one benchmark-replay simulation of candidate c (a screening run),
// counted, turned into what a benchmark client would measure (the
// deployment's latency outside the engine).
func (s *search) run(ctx context.Context, c *candidate, w workload.Workload) (*sim.Result, error) {
	s.mu.Lock()
	s.sims++
	c.runs++
	s.mu.Unlock()
	d, err := c.deployment()
	if err != nil {
		return nil, err
	}
	return d.SimulateWith(ctx, w, s.opts.Simulate)
}

// steady is a verdict: deployment d of candidate c simulated in steady
// state at load l (sim.Converge), doubling the run until every SLO is met
// or missed by more than its statistical uncertainty (decided) or the
// longest run is reached; every run counted, and charged to c (see run).
func (s *search) steady(ctx context.Context, c *candidate, d calibrate.Deployment, l model.Load) (*sim.Result, error) {
	return s.converge(ctx, c, d, l, true)
}

// probe is a headroom probe: as steady, but it also stops once the SLOs'
// statistics are stable within Options.Steady's tolerances, since the
// headroom search brackets the boundary anyway.
func (s *search) probe(ctx context.Context, c *candidate, d calibrate.Deployment, l model.Load) (*sim.Result, error) {
	return s.converge(ctx, c, d, l, false)
}

// converge runs d for candidate c. Its runs are charged to c as well as
// counted, so that a candidate the final cutoff drops takes its runs out
// of the count (simulate): which candidates beyond the cutoff were in
// flight depends on timing, and the count must not.
func (s *search) converge(ctx context.Context, c *candidate, d calibrate.Deployment, l model.Load, strict bool) (*sim.Result, error) {
	o := s.opts
	runs := 0
	count := func(ctx context.Context, cfg sim.Config) (*sim.Result, error) {
		runs++
		return o.Simulate(ctx, cfg)
	}
	so := o.Steady
	so.Metrics = s.tracked
	if strict {
		so.MeanTol, so.P99Tol = math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64
	}
	so.Decided = s.decided
	r, err := d.SimulateWith(ctx, o.workload(l, o.numPrompts(l)), func(ctx context.Context, cfg sim.Config) (*sim.Result, error) {
		return sim.Converge(ctx, cfg, so, count)
	})
	s.mu.Lock()
	s.sims += runs
	c.runs += runs
	s.mu.Unlock()
	return r, err
}

// sweepPrompts are the measured requests of a frontier run.
const sweepPrompts = 2500

// steadyOnce is one steady-state run of sweepPrompts measured requests,
// not converged further: enough to place a deployment on the Pareto figure.
func (s *search) steadyOnce(ctx context.Context, d calibrate.Deployment, l model.Load) (*sim.Result, error) {
	o := s.opts
	s.mu.Lock()
	s.sims++
	s.mu.Unlock()
	so := o.Steady
	so.MaxPrompts = sweepPrompts
	return d.SimulateWith(ctx, o.workload(l, so.MaxPrompts), func(ctx context.Context, cfg sim.Config) (*sim.Result, error) {
		return sim.Converge(ctx, cfg, so, o.Simulate)
	})
}

// decisive is how many relative errors (sim.Steady.RelError) an SLO's
// value must lie from its limit for a steady-state run to settle it
// before the statistics are fully stable.
const decisive = 2

// decided reports whether a steady-state result settles the verdict: it is
// saturated, misses an SLO by more than decisive errors, or meets every
// one by more. An SLO on a statistic the run does not track (median, p90,
// p95) borrows its family's p99 error.
func (s *search) decided(r *sim.Result) bool {
	st := r.Steady
	if st == nil || st.Saturated {
		return true
	}
	if st.NearCritical {
		return true // fails: see verdict
	}
	all := true
	for _, slo := range s.opts.SLOs {
		v, ok := r.Metrics[slo.Metric()]
		if !ok {
			return true // never passes: check counts it as +Inf
		}
		e, ok := st.RelError[slo.Metric()]
		if !ok {
			e = st.RelError[model.MetricName("p99", slo.Family)]
		}
		switch {
		case v*(1-decisive*e) > slo.LimitMs:
			return true
		case v*(1+decisive*e) > slo.LimitMs:
			all = false
		}
	}
	return all
}

// trackedMetrics are the steady-state statistics behind the SLOs (see decided).
func trackedMetrics(slos []SLO) []string {
	var out []string
	for _, slo := range slos {
		m := slo.Metric()
		if slo.Stat != "mean" && slo.Stat != "p99" {
			m = model.MetricName("p99", slo.Family)
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// verdict checks a steady-state result against the SLOs: a saturated run
// (an open loop that could not keep up, or one with a pool near critical
// load, sim.Steady.NearCritical, whose tail latencies no run length
// settles) fails whatever its latencies: no SLO can be promised on a
// deployment with no headroom left in one of its pools.
func (s *search) verdict(r *sim.Result) (misses []Miss, ok, saturated bool) {
	misses, ok = check(s.opts.SLOs, r.Metrics)
	saturated = r.Steady != nil && (r.Steady.Saturated || r.Steady.NearCritical)
	return misses, ok && !saturated, saturated
}

// simulate evaluates the candidates cheapest first on all workers.
func (s *search) simulate(ctx context.Context) error {
	o := s.opts
	short := 0
	if o.Workload.Load.Kind == model.OpenLoop && !s.noShort {
		short = o.screenPrompts(o.Workload.Load)
	}
	total := s.res.Search.Candidates
	s.done = total - len(s.cands) // pruned by bounds: already decided
	if o.Progress != nil {
		o.Progress(Progress{Phase: "search", Done: s.done, Total: total})
	}
	// A simulator error stops the search; so does the caller's ctx.
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan *candidate)
	var wg sync.WaitGroup
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				s.evaluate(ctx, c, short)
				if c.err != nil {
					cancel()
				}
				s.mu.Lock()
				s.progress("search", total)
				s.mu.Unlock()
			}
		}()
	}
	for i, c := range s.cands {
		if ctx.Err() != nil {
			break
		}
		s.mu.Lock()
		cut := s.cutoff()
		s.mu.Unlock()
		if c.cost > cut {
			// Sorted by cost: every later candidate is costlier too.
			for _, rest := range s.cands[i:] {
				rest.state = stateCostlier
			}
			s.mu.Lock()
			s.done += len(s.cands) - i - 1
			s.progress("search", total)
			s.mu.Unlock()
			break
		}
		next <- c
	}
	close(next)
	wg.Wait()
	for _, c := range s.cands {
		if c.err != nil && !errors.Is(c.err, context.Canceled) {
			return fmt.Errorf("plan: simulating %s: %w", c.name(), c.err)
		}
	}
	if err := parent.Err(); err != nil {
		return err
	}
	// Which candidates beyond the final cutoff got simulated depends on
	// timing: drop them so the result depends on the inputs alone.
	cut := s.cutoff()
	for _, c := range s.cands {
		if c.cost > cut {
			c.state = stateCostlier
			// Nor may the simulation count depend on timing.
			s.sims -= c.runs
			c.runs = 0
		}
		switch c.state {
		case stateCostlier:
			s.res.Search.Costlier++
		case stateShortMissed:
			s.res.Search.ShortMissed++
		case stateSimulated:
			s.res.Search.Simulated++
			if c.ok {
				s.res.Search.Feasible++
			}
			if c.triedSettings {
				s.res.Search.SettingsTried++
				if c.settings != nil {
					s.res.Search.SettingsFound++
				}
			}
		}
	}
	return nil
}

// evaluate screens c with a benchmark-replay run (open loop), then gives it
// a steady-state verdict at the pessimistic cost band; a near miss tries
// other engine settings before it is rejected.
func (s *search) evaluate(ctx context.Context, c *candidate, short int) {
	o := s.opts
	s.mu.Lock()
	skip := c.cost > s.cutoff()
	s.mu.Unlock()
	if skip {
		c.state = stateCostlier
		return
	}
	if short > 0 {
		r, err := s.run(ctx, c, o.workload(o.Workload.Load, short))
		if err != nil {
			c.err = err
			return
		}
		misses, _ := check(o.SLOs, r.Metrics)
		if worst(misses).Ratio() > shortMargin {
			c.state, c.metrics, c.misses = stateShortMissed, r.Metrics, misses
			return
		}
	}
	d, err := c.deployment()
	if err != nil {
		c.err = err
		return
	}
	r, err := s.steady(ctx, c, d, o.Workload.Load)
	if err != nil {
		c.err = err
		return
	}
	c.state, c.metrics, c.pools, c.steady = stateSimulated, r.Metrics, r.Pools, r.Steady
	c.misses, c.ok, c.saturated = s.verdict(r)
	if !c.ok && !o.NoSettingsSearch && !c.saturated && worst(c.misses).Ratio() <= settingsReach {
		for _, v := range variants(c.t, o.workload(o.Workload.Load, 1)) {
			d, err := c.withSettings(c.t.dep, &v)
			if err != nil {
				continue // variants() screens these out; a limit it cannot size is not tried
			}
			r, err := s.steady(ctx, c, d, o.Workload.Load)
			if err != nil {
				c.err = err
				return
			}
			if misses, ok, _ := s.verdict(r); ok {
				v := v
				c.settings, c.metrics, c.pools, c.steady, c.misses, c.ok = &v, r.Metrics, r.Pools, r.Steady, misses, true
				break
			}
		}
		c.triedSettings = true
	}
	if c.ok {
		s.mu.Lock()
		i := sort.SearchFloat64s(s.feasible, c.cost)
		s.feasible = append(s.feasible, 0)
		copy(s.feasible[i+1:], s.feasible[i:])
		s.feasible[i] = c.cost
		s.mu.Unlock()
	}
}
