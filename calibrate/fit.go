package calibrate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/gonum/optimize"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/parallel"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// Options tune a fit. The zero value is the default fit.
type Options struct {
	// MaxPrompts caps the prompts simulated per point; 0 means 1280.
	// A point simulates its record's num_prompts when known, else
	// max(200, 10 × concurrency).
	MaxPrompts int
	// MaxEvals bounds the Nelder–Mead loss evaluations of stage 2 per group; 0 means DefaultMaxEvals.
	MaxEvals int
	// SkipRefine stops after the stage-1 least-squares fit (no simulation in the loop).
	SkipRefine bool
	// Workers is the number of simulations run at once; 0 means GOMAXPROCS.
	Workers int
	// CV adds leave-one-configuration-out and leave-one-shape-out errors
	// within each group, and leave-one-GPU-, engine-version- and
	// source-out errors across groups, to the report.
	CV bool
	// Simulate runs one simulation; nil means sim.Run. It must give one
	// result per configuration: Fit runs each configuration once.
	Simulate func(context.Context, sim.Config) (*sim.Result, error)
	// Pool are records fitted into the profile's transfer pool after its
	// groups (FitPool); cross-validation ignores them.
	Pool []results.Record
	// RequireStated makes a group whose records name no GPU or no model an
	// error (*UnstatedError) instead of searching the catalog for the pair
	// that explains the data best. Fits of users' own data set it, so a GPU
	// is never assumed silently; the embedded default profile does not.
	RequireStated bool

	// runner is the simulations' memo and limiter, shared by every fit a
	// Fit nests (groups, folds, the pool); Fit makes it when nil.
	runner *simRunner
	// noResiduals leaves out the groups' residuals and series reports:
	// FitPool drops them (their runs were 2% of the default fit's requests).
	noResiduals bool
	// foldRouter, in a within-group cross-validation fold, is the router
	// the group's full fit chose where its records state none: the fold
	// refines its costs behind that one instead of behind each candidate
	// (fitGroup). The choice saw the held-out points, a mild leak (on the
	// fixtures every fold chose the same router, fit --cv's JSON is
	// byte-identical); its GPU and model are still chosen without them.
	foldRouter string
}

// UnstatedError is a group whose records do not say which GPU or model
// they measured, under Options.RequireStated.
type UnstatedError struct {
	Group      string // "unknown GPU / Qwen3-8B / vllm-0.10.1"
	GPU, Model bool   // which is missing
	Sources    []string
}

func (e *UnstatedError) Error() string {
	var what []string
	if e.GPU {
		what = append(what, "GPU")
	}
	if e.Model {
		what = append(what, "model")
	}
	return fmt.Sprintf("calibrate: group %s: the records do not name the %s (sources: %s)", e.Group, strings.Join(what, " or the "), strings.Join(e.Sources, ", "))
}

// Progress reports how far a fit has come.
type Progress struct {
	Stage string  // "linear", "refine", "residuals" or "cv"
	Group string  // "H20 / Qwen3-32B / dynamo-0.3.0"
	Done  int     // steps done in this stage of this group
	Total int     // steps expected (an upper bound for "refine")
	Loss  float64 // current loss, when the stage has one
}

// Report is the fit quality per series and, with Options.CV, held-out errors.
type Report struct {
	Series []SeriesReport `json:"series"`
	CV     []SeriesReport `json:"cv"`
	// Holdout are the leave-one-GPU-, engine-version- and source-out
	// errors and band coverage (with Options.CV).
	Holdout []HoldoutReport `json:"holdout,omitempty"`
	// Notes say per group what the data determined; Warnings name problem records.
	Notes    []string `json:"-"`
	Warnings []string `json:"-"`
}

// SeriesReport is the error of one series: absolute percentage errors of
// the simulated metrics against the measured ones, over its points.
type SeriesReport struct {
	Source   string         `json:"source"`
	GPU      string         `json:"gpu"`
	Model    string         `json:"model"`
	Engine   string         `json:"engine"`
	Topology string         `json:"topology"`
	ISL      float64        `json:"isl"`
	OSL      float64        `json:"osl"`
	Points   int            `json:"points"`
	APE      map[string]APE `json:"ape"` // only metrics the source gives
	Flagged  []Flag         `json:"flagged"`
	// Holdout is "configuration" or "shape" for cross-validation rows.
	Holdout string `json:"holdout,omitempty"`
}

// APE is the median and maximum absolute percentage error of a metric.
type APE struct {
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// Judged returns the error a series is judged on for metric m, and the
// metric it really is: a source that states only token throughput is judged
// on output throughput where request throughput is asked for.
func (s SeriesReport) Judged(m string) (APE, string, bool) {
	if a, ok := s.APE[m]; ok {
		return a, m, true
	}
	if m == model.RequestThroughput {
		if a, ok := s.APE[model.OutputThroughput]; ok {
			return a, model.OutputThroughput, true
		}
	}
	return APE{}, "", false
}

// Flag is a point the fit cannot explain, with the reason.
type Flag struct {
	Record string `json:"record"`
	Load   string `json:"load"`
	Reason string `json:"reason"`
}

func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func (o Options) simulate() func(context.Context, sim.Config) (*sim.Result, error) {
	if o.runner != nil {
		return o.runner.simulate
	}
	if o.Simulate != nil {
		return o.Simulate
	}
	return runMemo
}

// withRunner is o with a simulation runner: its own, or a new one around
// o's simulator, GOMAXPROCS (or Workers) wide.
func (o Options) withRunner() Options {
	if o.runner == nil {
		o.runner = newSimRunner(o.simulate(), o.workers())
	}
	return o
}

// syncProgress serialises calls to progress from the goroutines of a fit.
func syncProgress(progress func(Progress)) func(Progress) {
	var mu sync.Mutex
	return func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		progress(p)
	}
}

// bySize is the indexes of sizes, largest first (ties in index order):
// the order to start jobs of those sizes in so that the longest does not
// start last and run alone.
func bySize(sizes []int) []int {
	idx := make([]int, len(sizes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return sizes[idx[a]] > sizes[idx[b]] })
	return idx
}

// Fit calibrates a profile from measured records: per (GPU, model,
// engine) group a stage-1 regularised least-squares fit on low-load
// points, then a simulation-in-the-loop refinement over every point, then
// residuals, flags and (with opts.CV) held-out errors.
func Fit(ctx context.Context, recs []results.Record, opts Options, progress func(Progress)) (*Profile, *Report, error) {
	if progress == nil {
		progress = func(Progress) {}
	}
	if len(recs) == 0 {
		return nil, nil, fmt.Errorf("calibrate: no records to fit")
	}
	groups, order, warn := preparePoints(recs, opts.MaxPrompts)
	for i := range recs {
		if w := physicalCheck(&recs[i]); w != "" {
			warn = append(warn, w)
		}
	}
	if len(order) == 0 {
		return nil, nil, fmt.Errorf("calibrate: none of the %d records can be fitted: %s", len(recs), strings.Join(warn, "; "))
	}
	prof := &Profile{Schema: SchemaV1, CostModel: CostModel, Warnings: append([]string(nil), warn...)}
	rep := &Report{Series: []SeriesReport{}, CV: []SeriesReport{}, Warnings: warn}
	if opts.runner == nil {
		opts, progress = opts.withRunner(), syncProgress(progress)
	}
	// Groups are fitted independently of each other, so at once; their
	// results are taken in order, as one after the other would give them.
	outs := make([]groupOutcome, len(order))
	sizes := make([]int, len(order))
	for i, key := range order {
		sizes[i] = len(groups[key])
	}
	runOrder := bySize(sizes)
	err := parallel.ForEach(ctx, len(order), opts.workers(), func(j int) {
		i := runOrder[j]
		outs[i] = fitOutcome(ctx, order[i], groups[order[i]], opts, progress)
	})
	if err != nil {
		for _, o := range outs {
			if o.err != nil {
				return nil, nil, o.err
			}
		}
		return nil, nil, err
	}
	for i, key := range order {
		o, pts := outs[i], groups[key]
		if o.skip != "" {
			prof.Warnings, rep.Warnings = append(prof.Warnings, o.skip), append(rep.Warnings, o.skip)
			continue
		}
		if o.err != nil {
			if ctx.Err() != nil || len(order) == 1 {
				return nil, nil, o.err
			}
			// One group the simulator cannot run (a model that does not fit
			// its stated GPUs at the stated memory share) does not stop the rest.
			w := fmt.Sprintf("group %s: %d records skipped: %v", key, len(pts), o.err)
			prof.Warnings, rep.Warnings = append(prof.Warnings, w), append(rep.Warnings, w)
			continue
		}
		if o.cvErr != nil {
			return nil, nil, o.cvErr
		}
		g := o.group
		prof.Groups = append(prof.Groups, g)
		prof.Calibrated = append(prof.Calibrated, seriesInfos(g, pts)...)
		if !opts.noResiduals {
			rep.Series = append(rep.Series, seriesReports(g, pts, o.res, "")...)
		}
		for _, n := range g.Notes {
			rep.Notes = append(rep.Notes, key.String()+": "+n)
		}
		rep.CV = append(rep.CV, o.cv...)
	}
	if opts.CV {
		h, err := crossGroups(ctx, recs, prof, opts, progress)
		if err != nil {
			return nil, nil, err
		}
		rep.Holdout = h
	}
	if len(prof.Groups) == 0 {
		return nil, nil, fmt.Errorf("calibrate: no group of the %d records can be fitted: %s", len(recs), strings.Join(rep.Warnings, "; "))
	}
	if len(opts.Pool) > 0 && !opts.CV {
		if err := FitPool(ctx, prof, opts.Pool, opts, progress); err != nil {
			return nil, nil, err
		}
	}
	return prof, rep, nil
}

// groupOutcome is one group's fit as Fit takes it: skipped (skip, a
// warning), failed (err), or fitted with its residuals and, with
// Options.CV, its folds (cv, or cvErr).
type groupOutcome struct {
	skip  string
	err   error
	group Group
	res   []Residual
	cv    []SeriesReport
	cvErr error
}

// fitOutcome fits one group of Fit's.
func fitOutcome(ctx context.Context, key groupKey, pts []*point, opts Options, progress func(Progress)) groupOutcome {
	if why := notInCatalog(key); why != "" {
		// A GPU or model the catalogs lack (a quantized checkpoint, a
		// mixture of experts) has no roofline: say so and fit the rest.
		return groupOutcome{skip: fmt.Sprintf("group %s: %d records skipped: %s", key, len(pts), why)}
	}
	gf, err := fitGroup(ctx, key, pts, pts, opts, progress)
	var res []Residual
	if err == nil && !opts.noResiduals {
		res, err = residuals(ctx, gf.env, gf.layout, gf.params, pts, opts, progress, key.String())
	}
	if err != nil {
		return groupOutcome{err: err}
	}
	o := groupOutcome{group: gf.group(pts, res), res: res}
	if opts.CV {
		fo := opts
		fo.foldRouter = gf.env.settings.Router
		o.cv, o.cvErr = crossValidate(ctx, key, pts, fo, progress)
	}
	return o
}

// notInCatalog says why a group's stated GPU or model cannot be priced, or
// why it cannot become a profile group (no engine: predict looks groups up
// by engine and refuses one without), or "".
func notInCatalog(key groupKey) string {
	if key.engine == "" {
		return "the records do not name the engine (give it with --engine, e.g. vllm-0.10.1, or a sidecar's \"engine\")"
	}
	if key.gpu != "" {
		if _, err := model.LookupGPU(key.gpu); err != nil {
			return err.Error()
		}
	}
	if key.model != "" {
		if _, err := model.LookupLLM(key.model); err != nil {
			return err.Error()
		}
	}
	return ""
}

// groupFit is a fitted group before it becomes a profile Group.
type groupFit struct {
	key    groupKey
	env    env
	layout layout
	lin    linearFit
	params params
	notes  []string
	// assumed explains a GPU or model inferred because the source did not state it.
	assumed string
	// router is set when the records did not state the router and the fit chose it.
	router *RouterChoice
	// serviceFitted: stage 2 ran with the frontend's serial work as a knob.
	serviceFitted bool
}

// fitGroup runs both stages on one group's points.
// all are every point of the group (a superset of pts in cross-validation):
// an unstated GPU or model must be able to hold all of them.
func fitGroup(ctx context.Context, key groupKey, pts, all []*point, opts Options, progress func(Progress)) (*groupFit, error) {
	name := key.String()
	gf := &groupFit{key: key, layout: layoutOf(pts)}
	settings := settingsFrom(key.engine, pts)
	// A stated KV cache holds for its own record's worker shape: each point
	// keeps its own (forPoint), the group's settings none (applyRecord).
	settings.KVCacheGiB = 0
	cands, note, err := candidates(key, all)
	if err != nil {
		return nil, err
	}
	if opts.RequireStated && (key.gpu == "" || key.model == "") {
		seen := map[string]bool{}
		var sources []string
		for _, p := range all {
			if f := p.rec.Source.File; !seen[f] {
				seen[f] = true
				sources = append(sources, f)
			}
		}
		return nil, &UnstatedError{Group: name, GPU: key.gpu == "", Model: key.model == "", Sources: sources}
	}
	// With the GPU or model unknown, pick the catalog pair whose roofline
	// needs efficiencies closest to the prior to explain the data.
	best := math.Inf(1)
	for i, c := range cands {
		e := env{gpu: c.gpu.AcrossNodes(settings.Nodes), llm: c.llm, settings: settings, engine: engine.Parse(key.engine)}
		prior := priorParams(gf.layout, c.gpu, deployed(c.llm, settings), pts, settings, key.engine)
		lin, err := fitLinear(ctx, e, gf.layout, prior, pts)
		if err != nil {
			return nil, fmt.Errorf("calibrate: group %s: %w", name, err)
		}
		score := lin.rmsRel*lin.rmsRel + penalty(gf.layout, lin.x)
		if len(cands) > 1 && !opts.SkipRefine {
			// Stage 1 approximates; judge each candidate by simulating every point.
			sims, err := simulateAll(ctx, e, lin.params, pts, opts)
			if err != nil {
				continue // this GPU and model cannot run the workload
			}
			var sl, w float64
			for j, p := range pts {
				sl += p.weight * pointLoss(p, sims[j])
				w += p.weight
			}
			score = sl/math.Max(w, 1e-9) + penalty(gf.layout, lin.x)
		}
		progress(Progress{Stage: "linear", Group: name, Done: i + 1, Total: len(cands), Loss: score})
		if score < best {
			best, gf.env, gf.lin = score, e, lin
		}
	}
	if gf.lin.x == nil { // every candidate's loss overflowed
		return nil, fmt.Errorf("calibrate: group %s: its least-squares loss is not finite: a measured value is out of any physical range", name)
	}
	if note != "" {
		gf.assumed = fmt.Sprintf("%s; of %d catalog candidates that can hold its requests, %s on %s explains the data best (loss %.3g) and is assumed",
			note, len(cands), model.ShortName(gf.env.llm.Name), gf.env.gpu.Name, best)
		gf.notes = append(gf.notes, gf.assumed)
	}
	gf.params = gf.lin.params
	if gf.lin.unsettled {
		gf.notes = append(gf.notes, fmt.Sprintf("stage 1: the GEMMs' compute/memory split did not settle in %d solves (the solutions alternate across a jump); the better fitting of the last two is kept", linearPasses))
	}
	if !opts.SkipRefine && len(pts) > 0 {
		gf.serviceFitted = gf.layout.service
		// Stage 2 per candidate router (router.go): the stated one, or both
		// when the records leave a multi-replica deployment's router open.
		routers := routerCandidates(key.engine, gf.env.settings, pts)
		if len(routers) > 1 && slices.Contains(routers, opts.foldRouter) {
			routers = []string{opts.foldRouter}
		}
		var tries []routerTry
		for _, r := range routers {
			e := gf.env
			e.settings.Router = r
			p, note, err := refine(ctx, e, gf.layout, gf.lin.params, pts, opts, func(done int, loss float64) {
				progress(Progress{Stage: "refine", Group: name, Done: done, Total: opts.maxEvals() + 1, Loss: loss}) // the start, then Nelder–Mead's
			})
			if err != nil {
				return nil, fmt.Errorf("calibrate: group %s: %w", name, err)
			}
			// Each router is judged by the numbers the profile would store.
			t := routerTry{router: r, params: p.stored(), note: note}
			if len(routers) > 1 {
				sims, err := simulateAll(ctx, e, t.params, pts, opts)
				if err != nil {
					return nil, fmt.Errorf("calibrate: group %s: %w", name, err)
				}
				t.score = routerScore(pts, sims)
			}
			tries = append(tries, t)
		}
		best := tries[0]
		if len(tries) > 1 {
			best, gf.router = chooseRouter(tries, hasTails(pts))
			gf.notes = append(gf.notes, gf.router.Why)
		}
		gf.env.settings.Router = best.router
		gf.params = best.params
		if best.note != "" {
			gf.notes = append(gf.notes, best.note)
		}
	}
	// The residuals and every later use simulate the numbers the profile
	// stores (stage 2 already judged the routers by them), not the
	// unrounded solution: a discrete-event run can move by
	// more than the rounding where a step boundary crosses an arrival.
	gf.params = gf.params.stored()
	gf.env.at = gf.params.coeffs
	return gf, nil
}

// stored is p as a profile stores it (group writes it as it is): coefficients to 5
// significant digits, the frontend latency and its serial work to 4
// (the work at most the latency, as the simulator takes it), the KV
// transfer to 5.
func (p params) stored() params {
	q := p.clone()
	for role, c := range q.coeffs {
		q.coeffs[role] = roundCoeffs(c)
	}
	q.frontend = roundSignificant(q.frontend, 4)
	q.service = roundSignificant(math.Min(q.service, q.frontend), 4)
	q.transfer.LatencyS = roundSignificant(q.transfer.LatencyS, 5)
	q.transfer.PerTokenS = roundSignificant(q.transfer.PerTokenS, 5)
	return q
}

// DefaultMaxEvals is Options.MaxEvals when zero.
const DefaultMaxEvals = 40

// stalledIterations is how many Nelder–Mead iterations in a row may fail
// to lower a group's loss by 0.1% + 1e-4 before its refinement stops. At
// 6 (was 8) the fit simulates 14% fewer requests, the hidden H20
// configurations are predicted exactly as before and fit --cv's medians
// move by under 0.5 point; at 5 those predictions move by up to 11%
// (docs/profiling.md).
const stalledIterations = 6

func (o Options) maxEvals() int {
	if o.MaxEvals > 0 {
		return o.MaxEvals
	}
	return DefaultMaxEvals
}

func penalty(l layout, x []float64) float64 {
	sd := priorSD(l)
	s := 0.0
	for i, v := range x {
		lambda := (noiseRelSD / sd[i]) * (noiseRelSD / sd[i])
		s += lambda * (v - 1) * (v - 1)
	}
	return s
}

type candidate struct {
	gpu model.GPU
	llm model.LLM
}

// candidates are the named GPU and model, or, for whatever the source did
// not state, every catalog entry on which the group's longest request fits.
func candidates(key groupKey, pts []*point) ([]candidate, string, error) {
	gpus := model.GPUs()
	if key.gpu != "" {
		g, err := model.LookupGPU(key.gpu)
		if err != nil {
			return nil, "", fmt.Errorf("calibrate: group %s: %w", key, err)
		}
		gpus = []model.GPU{g}
	}
	llms := model.LLMs()
	if key.model != "" {
		m, err := model.LookupLLM(key.model)
		if err != nil {
			return nil, "", fmt.Errorf("calibrate: group %s: %w", key, err)
		}
		llms = []model.LLM{m}
	}
	if key.gpu != "" && key.model != "" {
		return []candidate{{gpus[0], llms[0]}}, "", nil
	}
	longest := 0
	for _, p := range pts {
		// The simulated requests reach their distributions' maxima, and KV is allocated in blocks.
		in, out := p.workload().Longest()
		longest = max(longest, in+out+256)
	}
	var out []candidate
	for _, g := range gpus {
		for _, m := range llms {
			if m.MaxContext < longest {
				continue
			}
			ok := true
			for _, p := range pts {
				for _, pl := range []model.Pool{p.topo.Replicas, p.topo.Prefill, p.topo.Decode} {
					if pl.IsZero() {
						continue
					}
					mem, err := model.WorkerMemory(g, m, pl, MemoryOptionsFor(engine.Parse(key.engine), g, m, engine.Stated{}))
					if err != nil || mem.KVTokens < longest {
						ok = false
					}
				}
			}
			if ok {
				out = append(out, candidate{g, m})
			}
		}
	}
	var missing []string
	if key.gpu == "" {
		missing = append(missing, "GPU")
	}
	if key.model == "" {
		missing = append(missing, "model")
	}
	note := strings.Join(missing, " and ") + " not stated by the source"
	if len(out) == 0 {
		return nil, "", fmt.Errorf("calibrate: group %s: %s, and no catalog GPU and model can hold its %d-token requests", key, note, longest)
	}
	return out, note, nil
}

// refineKnobs are the stage-2 parameters: log multipliers on groups of
// coefficients that the measured curves constrain beyond stage 1.
type refineKnob struct {
	role     string
	fields   []int // indexes into model.CoeffNames
	label    string
	frontend bool // scales the frontend latency instead
	service  bool // scales the frontend's serial work per request instead
}

const (
	iOverhead = iota
	iPerSeq
	iWeight
	iCompute
	iAttn
	iKV
	iComm
)

func knobsFor(l layout) []refineKnob {
	var k []refineKnob
	for _, r := range l.roles {
		switch r {
		case RolePrefill:
			k = append(k, refineKnob{role: r, fields: []int{iOverhead, iCompute, iAttn, iComm}, label: "prefill step"})
		case RoleDecode:
			k = append(k, refineKnob{role: r, fields: []int{iOverhead, iWeight}, label: r + " step base"},
				refineKnob{role: r, fields: []int{iPerSeq, iCompute, iKV}, label: r + " per-sequence"})
		case RoleAggregated:
			k = append(k, refineKnob{role: r, fields: []int{iOverhead, iWeight}, label: r + " step base"},
				refineKnob{role: r, fields: []int{iPerSeq, iKV}, label: r + " per-sequence"},
				refineKnob{role: r, fields: []int{iCompute, iAttn}, label: "chunked prefill"},
				refineKnob{label: "frontend latency", frontend: true})
			if l.service {
				k = append(k, refineKnob{label: "frontend serial work", service: true})
			}
		}
	}
	return k
}

// applyKnobs scales the knobs' coefficients by exp(θ), keeping every
// inverse efficiency at or above 1 (peak hardware) and communication at or
// above minComm.
func applyKnobs(base params, knobs []refineKnob, theta []float64) params {
	p := base.clone()
	for i, k := range knobs {
		if k.frontend {
			p.frontend *= math.Exp(theta[i])
			continue
		}
		if k.service {
			p.service *= math.Exp(theta[i])
			continue
		}
		v := p.coeffs[k.role].Vector()
		f := math.Exp(theta[i])
		for _, j := range k.fields {
			v[j] = clampPhysical(j, v[j]*f)
		}
		p.coeffs[k.role] = model.CoeffsFromVector(v)
	}
	return p
}

// clampPhysical keeps coefficient j within its physical bound.
func clampPhysical(j int, v float64) float64 {
	switch {
	case model.IsEfficiency(j):
		return math.Max(v, 1)
	case j == iComm:
		return math.Max(v, minComm)
	}
	return v
}

// boundHits names the coefficients of a role that sit at their bounds:
// the efficiencies at peak hardware (the data would have them faster than
// the GPU allows), and comm at minComm (the data would price the
// collectives below half the interconnect catalog's latency).
func boundHits(c model.Coeffs) (peak []string, comm bool) {
	for j, v := range c.Vector() {
		if model.IsEfficiency(j) && v <= 1+1e-4 {
			peak = append(peak, model.CoeffNames[j])
		}
	}
	return peak, atCommBound(c.Comm)
}

// atCommBound reports a comm multiplier at minComm, its lower bound.
func atCommBound(comm float64) bool { return comm <= minComm+1e-4 }

// refine minimises a robust loss between simulated and measured metrics
// over every point by Nelder–Mead on a few log multipliers.
func refine(ctx context.Context, e env, l layout, start params, pts []*point, opts Options, report func(int, float64)) (params, string, error) {
	knobs := knobsFor(l)
	if len(knobs) == 0 {
		return start, "", nil
	}
	evals := 0
	var simErr error
	envs := keptEnvs(e, pts)
	loss := func(theta []float64) float64 {
		for _, t := range theta {
			if math.Abs(t) > maxKnob {
				return 1e6 // beyond ×3 either way is not a refinement of stage 1
			}
		}
		prm := applyKnobs(start, knobs, theta)
		sims, err := simulateEach(ctx, envs, prm, pts, opts)
		if err != nil {
			simErr = err
			return 1e6
		}
		var s, w float64
		for i, p := range pts {
			s += p.weight * pointLoss(p, sims[i])
			w += p.weight
		}
		reg := 0.0
		for _, t := range theta {
			reg += 0.02 * t * t
		}
		evals++
		v := s/math.Max(w, 1e-9) + reg
		report(evals, v)
		return v
	}
	x0 := make([]float64, len(knobs))
	f0 := loss(x0)
	if simErr != nil {
		return start, "", simErr
	}
	prob := optimize.Problem{Func: loss}
	settings := &optimize.Settings{FuncEvaluations: opts.maxEvals(), Converger: &optimize.FunctionConverge{Absolute: 1e-4, Relative: 1e-3, Iterations: stalledIterations}}
	method := &optimize.NelderMead{SimplexSize: 0.15}
	res, err := optimize.Minimize(prob, x0, settings, method)
	if simErr != nil {
		return start, "", simErr
	}
	if err != nil && res == nil {
		return start, "", err
	}
	if res == nil || !(res.F < f0) {
		return start, fmt.Sprintf("stage 2 kept the stage-1 costs (loss %.4f)", f0), nil
	}
	var parts []string
	for i, k := range knobs {
		parts = append(parts, fmt.Sprintf("%s ×%.3f", k.label, math.Exp(res.X[i])))
	}
	note := fmt.Sprintf("stage 2 (%d simulations of every point) moved the loss %.4f → %.4f: %s", evals, f0, res.F, strings.Join(parts, ", "))
	return applyKnobs(start, knobs, res.X), note, nil
}

// maxKnob bounds a stage-2 log multiplier: ln 3.
var maxKnob = math.Log(3)

func huber(r, delta float64) float64 {
	a := math.Abs(r)
	if a <= delta {
		return 0.5 * r * r
	}
	return delta * (a - 0.5*delta)
}

// pointLoss is the robust loss of one point: Huber on log ratios, δ = 10%.
func pointLoss(p *point, simulated map[string]float64) float64 {
	s := 0.0
	for _, m := range fitMetrics {
		want, ok := p.meas[m.name]
		if !ok {
			continue
		}
		got := simulated[m.name]
		if !(got > 0) {
			s += m.weight * 1
			continue
		}
		s += m.weight * huber(math.Log(got/want), 0.1)
	}
	return s
}

// FitSeed is the seed the fit simulates every record with; re-simulating
// a record with it (plot, validate --results) repeats the fit exactly.
const FitSeed = 1

// workload is the benchmark run a point measured, simulated with FitSeed.
func (p *point) workload() workload.Workload {
	w := p.w
	w.Seed = FitSeed
	return w
}

// deployment prices one point's deployment with trial parameters.
func (e env) deployment(prm params, topo model.Topology) (Deployment, error) {
	pr := pricing{gpu: e.gpu, llm: e.llm, engine: e.engine, settings: e.settings, frontend: prm.frontend, service: prm.service,
		transfer: sim.Transfer{Latency: prm.transfer.LatencyS, PerToken: prm.transfer.PerTokenS},
		coeffs:   func(role string, _ model.Pool) (model.Coeffs, error) { return prm.coeffs[role], nil },
		kept:     e.kept}
	cfg, err := pr.build(topo)
	if err != nil {
		return Deployment{}, err
	}
	return Deployment{Config: cfg, GPU: e.gpu, LLM: e.llm, Engine: e.engine}, nil
}

// forPoint is e with the KV-cache sizing and batch limits p's record states.
func (e env) forPoint(p *point) env {
	applyRecord(&e.settings, p.stated)
	e.llm = withKVCache(e.settings, deployed(e.llm, e.settings))
	return e
}

// simConfig is the simulator configuration of one point with trial parameters.
func simConfig(e env, prm params, p *point) (sim.Config, error) {
	d, err := e.forPoint(p).deployment(prm, p.topo)
	if err != nil {
		return sim.Config{}, err
	}
	return d.WithWorkload(p.workload()).Config, nil
}

// simulateAll simulates every point, opts.workers() at a time, and
// returns each point's metrics (plus output_throughput) in point order.
func simulateAll(ctx context.Context, e env, prm params, pts []*point, opts Options) ([]map[string]float64, error) {
	envs := make([]env, len(pts))
	for i, p := range pts {
		envs[i] = e.forPoint(p)
	}
	return simulateEach(ctx, envs, prm, pts, opts)
}

// keptEnvs are e for each point (forPoint), each keeping its workers'
// rooflines and memory for every stage-1 pass or evaluation of a
// refinement. A kept env is for one fitLinearOnce or simulateEach at a
// time.
func keptEnvs(e env, pts []*point) []env {
	envs := make([]env, len(pts))
	for i, p := range pts {
		envs[i] = e.forPoint(p)
		envs[i].kept = newKeptShapes()
	}
	return envs
}

// simulateEach is simulateAll with envs[i] pricing pts[i].
func simulateEach(ctx context.Context, envs []env, prm params, pts []*point, opts Options) ([]map[string]float64, error) {
	out := make([]map[string]float64, len(pts))
	errs := make([]error, len(pts))
	run := opts.simulate()
	err := parallel.ForEach(ctx, len(pts), opts.workers(), func(i int) {
		d, err := envs[i].deployment(prm, pts[i].topo)
		if err != nil {
			errs[i] = fmt.Errorf("record %s: %w", pts[i].rec.ID, err)
			return
		}
		res, err := d.SimulateWith(ctx, pts[i].workload(), run)
		if err != nil {
			errs[i] = fmt.Errorf("record %s: simulate: %w", pts[i].rec.ID, err)
			return
		}
		out[i] = res.Metrics
	})
	if err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// residuals simulates every point with the final parameters and flags those
// the fit cannot explain.
func residuals(ctx context.Context, e env, l layout, prm params, pts []*point, opts Options, progress func(Progress), name string) ([]Residual, error) {
	var sims []map[string]float64
	analytic := opts.SkipRefine && opts.Simulate == nil
	if analytic {
		var err error
		if sims, err = analyticMetrics(ctx, e, l, prm, pts); err != nil {
			return nil, err
		}
	} else {
		var err error
		if sims, err = simulateAll(ctx, e, prm, pts, opts); err != nil {
			return nil, fmt.Errorf("calibrate: group %s: %w", name, err)
		}
	}
	progress(Progress{Stage: "residuals", Group: name, Done: len(pts), Total: len(pts)})
	out := make([]Residual, len(pts))
	for i, p := range pts {
		r := Residual{Record: p.rec.ID, Series: p.series, Load: p.w.Load.String(), Measured: map[string]float64{},
			Fitted: map[string]float64{}, LogRatio: map[string]float64{}, Weight: roundSignificant(p.weight, 4)}
		for _, m := range fitMetrics {
			want, ok := p.meas[m.name]
			if !ok {
				continue
			}
			got, priced := sims[i][m.name]
			if analytic && !priced {
				continue // --quick prices only what the analytic model gives; the rest is not an error
			}
			r.Measured[m.name] = want
			r.Fitted[m.name] = roundSignificant(got, 4)
			if got > 0 {
				r.LogRatio[m.name] = roundSignificant(math.Log(got/want), 4)
			}
		}
		r.Flag = flagReason(p, r, pts)
		out[i] = r
	}
	return out, nil
}

// roundSignificant rounds v to digits significant digits, so that a
// profile stores each cost as precisely as its scale warrants.
func roundSignificant(v float64, digits int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	mag := math.Pow(10, float64(digits)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*mag) / mag
}

// flagThreshold is the log-ratio beyond which a metric counts as unexplained.
var flagThreshold = map[string]float64{
	model.RequestThroughput: 0.15, model.OutputThroughput: 0.15, model.MeanTPOT: 0.15,
	model.MeanTTFT: 0.35, model.MeanE2EL: 0.2,
}

// flagReason explains why a point is off, or returns "" when it is not.
func flagReason(p *point, r Residual, all []*point) string {
	var off []string
	for _, m := range fitMetrics {
		lr, ok := r.LogRatio[m.name]
		if !ok {
			if _, meas := r.Measured[m.name]; meas {
				off = append(off, m.name+" not simulated")
			}
			continue
		}
		if math.Abs(lr) > flagThreshold[m.name] {
			off = append(off, fmt.Sprintf("%s measured %.4g, simulated %.4g (%+.0f%%)", m.name, r.Measured[m.name], r.Fitted[m.name], 100*(math.Exp(lr)-1)))
		}
	}
	if len(off) == 0 {
		return ""
	}
	var why []string
	if p99, ok := p.rec.Metric(model.P99TTFT); ok {
		mean := p.meas[model.MeanTTFT]
		switch {
		case mean > 0 && p99 > 2*mean && r.LogRatio[model.MeanTTFT] < -0.35 && isLowest(p, all):
			why = append(why, fmt.Sprintf("slow first request (p99 TTFT %.0f ms vs mean %.0f ms at the lowest load)", p99, mean))
		case mean > 0 && p99 > 3*mean && r.LogRatio[model.MeanTTFT] < -0.35:
			why = append(why, fmt.Sprintf("heavy TTFT tail (p99 %.0f ms is %.1f× the mean %.0f ms: a few very slow requests)", p99, p99/mean, mean))
		}
	}
	// In a closed loop each client's throughput X/c cannot rise with c:
	// a point below a higher concurrency's per-client rate is a dip.
	if x, ok := p.meas[model.RequestThroughput]; ok && p.w.Load.Kind == model.ClosedLoop && r.LogRatio[model.RequestThroughput] > 0.15 {
		for _, q := range all {
			qx, ok := q.meas[model.RequestThroughput]
			if ok && q.series == p.series && q.w.Load.Kind == model.ClosedLoop && q.w.Load.Concurrency > p.w.Load.Concurrency &&
				qx/float64(q.w.Load.Concurrency) > 1.2*x/float64(p.w.Load.Concurrency) {
				why = append(why, fmt.Sprintf("throughput dip: %.3g req/s per client, below the %.3g of %s (per-client throughput cannot rise with concurrency)",
					x/float64(p.w.Load.Concurrency), qx/float64(q.w.Load.Concurrency), q.w.Load))
				break
			}
		}
	}
	if rt, ok := p.meas[model.RequestThroughput]; ok && r.LogRatio[model.RequestThroughput] > 0.15 && !strings.Contains(strings.Join(why, ""), "dip") {
		for _, q := range all {
			if q.series == p.series && q.w.Load.X() < p.w.Load.X() && q.meas[model.RequestThroughput] > rt {
				why = append(why, fmt.Sprintf("throughput dip: %.3g req/s below the %.3g req/s of %s", rt, q.meas[model.RequestThroughput], q.w.Load))
				break
			}
		}
	}
	if p.rec.Errors > 0 {
		why = append(why, fmt.Sprintf("%d failed requests (down-weighted)", p.rec.Errors))
	}
	if len(why) == 0 {
		why = append(why, "not explained by the cost model")
	}
	return strings.Join(why, "; ") + ": " + strings.Join(off, ", ")
}

func isLowest(p *point, all []*point) bool {
	for _, q := range all {
		if q.series == p.series && q.w.Load.X() < p.w.Load.X() {
			return false
		}
	}
	return true
}

// analyticMetrics approximates metrics without simulating (stage 1 only,
// used when refinement is skipped): the stage-1 rows evaluated at the fit.
func analyticMetrics(ctx context.Context, e env, l layout, prm params, pts []*point) ([]map[string]float64, error) {
	x := make([]float64, l.size())
	for _, r := range l.roles {
		copy(x[l.offset(r):], prm.coeffs[r].Vector())
	}
	if l.transfer {
		x[l.transferIndex()], x[l.transferIndex()+1] = prm.transfer.LatencyS, prm.transfer.PerTokenS
	}
	if l.frontend {
		x[l.frontendIndex()] = prm.frontend
	}
	ones := make([]float64, len(x))
	for i := range ones {
		ones[i] = 1
	}
	out := make([]map[string]float64, len(pts))
	for i, p := range pts {
		out[i] = map[string]float64{}
		inFlight, _ := loadShape(p)
		var ttft, tpot float64
		rows, err := rowsFor(ctx, e.forPoint(p), l, p)
		if err != nil {
			return nil, err
		}
		for _, rw := range rows {
			v := rw.eval(ones, x)
			switch rw.what {
			case model.MeanTTFT:
				ttft = v
			case model.MeanTPOT:
				tpot = v
			}
		}
		if ttft > 0 {
			out[i][model.MeanTTFT] = 1000 * ttft
		}
		if tpot > 0 {
			out[i][model.MeanTPOT] = 1000 * tpot
			e2e := ttft + float64(p.w.OSL-1)*tpot
			out[i][model.MeanE2EL] = 1000 * e2e
			if p.w.Load.Kind == model.ClosedLoop && e2e > 0 {
				out[i][model.RequestThroughput] = inFlight / e2e
				out[i][model.OutputThroughput] = inFlight * float64(p.w.OSL) / e2e
			}
		}
	}
	return out, nil
}

// group turns a fitted group into its profile form.
func (gf *groupFit) group(pts []*point, res []Residual) Group {
	// A GPU or model the source did not state stays empty, so that Configure
	// never mistakes an inferred group for a measured one; Assumed says what the fit used.
	g := Group{GPU: gf.key.gpu, Model: gf.key.model, Engine: gf.key.engine, Settings: gf.env.settings, Residuals: res}
	if gf.assumed != "" {
		g.Assumed = &Assumption{GPU: gf.env.gpu.Name, Model: gf.env.llm.Name, Why: gf.assumed}
	}
	g.RouterChoice = gf.router
	if gf.layout.frontend {
		// gf.params are already the stored numbers (params.stored).
		g.Frontend = &FrontendFit{LatencyS: gf.params.frontend, ServiceS: gf.params.service,
			ServiceFitted: gf.serviceFitted, Source: SourcePrior, RelSigma: roundSignificant(gf.lin.frontendSigma, 3)}
		if gf.lin.frontendFitted {
			g.Frontend.Source = SourceFitted
		}
	}
	if gf.layout.transfer {
		g.Transfer = gf.params.transfer
		g.Transfer.RelSigma = roundSignificant(g.Transfer.RelSigma, 3)
	}
	shapes := map[string]map[model.Pool][]string{}
	for _, p := range pts {
		g.Records = append(g.Records, p.rec.ID)
		add := func(role string, pl model.Pool) {
			if shapes[role] == nil {
				shapes[role] = map[model.Pool][]string{}
			}
			w := model.Pool{Count: 1, TP: pl.TP, PP: pl.Stages()}
			shapes[role][w] = append(shapes[role][w], p.rec.ID)
		}
		if p.topo.Disaggregated() {
			add(RolePrefill, p.topo.Prefill)
			add(RoleDecode, p.topo.Decode)
		} else {
			add(RoleAggregated, p.topo.Replicas)
		}
	}
	for _, role := range gf.layout.roles {
		o := gf.layout.offset(role)
		sig := map[string]float64{}
		var fitted, prior []string
		var corr [][]float64
		if gf.lin.postCorr != nil {
			corr = make([][]float64, len(model.CoeffNames))
			for i := range corr {
				corr[i] = make([]float64, len(model.CoeffNames))
				for j := range corr[i] {
					corr[i][j] = math.Round(100*gf.lin.postCorr[o+i][o+j]) / 100
				}
			}
		}
		for i, n := range model.CoeffNames {
			x := gf.lin.x[o+i]
			sig[n] = roundSignificant(gf.lin.postSD[o+i]/math.Max(x, minMult), 3)
			if gf.lin.determ[o+i] {
				fitted = append(fitted, n)
			} else {
				prior = append(prior, n)
			}
		}
		var pools []model.Pool
		for pl := range shapes[role] {
			pools = append(pools, pl)
		}
		sort.Slice(pools, func(i, j int) bool {
			return pools[i].TP < pools[j].TP || (pools[i].TP == pools[j].TP && pools[i].PP < pools[j].PP)
		})
		for _, pl := range pools {
			e := Entry{Role: role, TP: pl.TP, PP: pl.PP, Source: SourceFitted, Coeffs: gf.params.coeffs[role],
				RelSigma: sig, Corr: corr, Scatter: roundSignificant(gf.lin.rmsRel, 3), Fitted: fitted, Prior: prior, Records: shapes[role][pl]}
			if gr := gf.env.graphs(role); gr == nil {
				e.Eager = true
			} else {
				e.GraphSizes = slices.Clone(gr) // graphSizes' list is shared
			}
			if len(fitted) == 0 {
				e.Source = SourcePrior
			}
			g.Entries = append(g.Entries, e)
		}
		if n := len(g.Entries); n > 0 && g.Entries[n-1].Role == role {
			if u := g.Unexplained(&g.Entries[n-1]); math.Abs(u) >= UnexplainedNoteS {
				gf.notes = append(gf.notes, fmt.Sprintf("%s: %s", role, unexplainedText(u, &g)))
			}
		}
		peak, comm := boundHits(gf.params.coeffs[role])
		if len(peak) > 0 {
			gf.notes = append(gf.notes, fmt.Sprintf("%s: %s at the physical bound (peak hardware): the data would price this work faster than the GPU allows", role, strings.Join(peak, ", ")))
		}
		if comm {
			gf.notes = append(gf.notes, fmt.Sprintf("%s: comm at its bound (%.1f× the interconnect catalog's latencies): the data would price the collectives cheaper still", role, minComm))
		}
		if len(prior) > 0 {
			gf.notes = append(gf.notes, fmt.Sprintf("%s: the data determine %s; %s stay at the roofline prior",
				role, listOrNone(fitted), strings.Join(prior, ", ")))
		} else {
			gf.notes = append(gf.notes, fmt.Sprintf("%s: the data determine every coefficient", role))
		}
	}
	if gf.layout.transfer {
		if g.Transfer.Source == SourceFitted {
			gf.notes = append(gf.notes, "KV transfer: fitted")
		} else {
			gf.notes = append(gf.notes, "KV transfer: prior (not separable from prefill overhead)")
		}
	}
	g.Notes = gf.notes
	return g
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func roundCoeffs(c model.Coeffs) model.Coeffs {
	v := c.Vector()
	for i := range v {
		v[i] = roundSignificant(v[i], 5)
	}
	return model.CoeffsFromVector(v)
}
