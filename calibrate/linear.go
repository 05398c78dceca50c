package calibrate

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// nCoeff is the number of cost coefficients of one role.
var nCoeff = len(model.CoeffNames)

// params is what is fitted for a group: one coefficient set per role
// (shared by every TP degree of that role) and the KV transfer.
type params struct {
	coeffs   map[string]model.Coeffs
	transfer TransferFit
	// frontend is the per-request latency outside the engine (API server,
	// tokenisation) of aggregated deployments, in seconds.
	frontend float64
	// service is the API server's serial work per request within the
	// frontend latency (sim.Config.FrontendService), in seconds: fitted
	// in stage 2 only, where bursts queue there.
	service float64
}

func (p params) clone() params {
	q := params{coeffs: map[string]model.Coeffs{}, transfer: p.transfer, frontend: p.frontend, service: p.service}
	for k, v := range p.coeffs {
		q.coeffs[k] = v
	}
	return q
}

// layout maps a group's roles and transfer onto the unknowns of the linear fit.
type layout struct {
	roles    []string // in order; each owns nCoeff unknowns
	transfer bool     // two more unknowns: latency and per-token time
	frontend bool     // one more: the per-request latency outside the engine
	// service: stage 2 fits the frontend's serial work (never stage 1),
	// where a point can queue there (frontendQueues).
	service bool
}

func (l layout) size() int {
	n := len(l.roles) * nCoeff
	if l.transfer {
		n += 2
	}
	if l.frontend {
		n++
	}
	return n
}

// transferIndex is the unknown of the transfer latency (per-token time follows).
func (l layout) transferIndex() int { return len(l.roles) * nCoeff }

// frontendIndex is the unknown of the frontend latency.
func (l layout) frontendIndex() int {
	if l.transfer {
		return len(l.roles)*nCoeff + 2
	}
	return len(l.roles) * nCoeff
}

func (l layout) offset(role string) int {
	for i, r := range l.roles {
		if r == role {
			return i * nCoeff
		}
	}
	return -1
}

func layoutOf(pts []*point) layout {
	var l layout
	has := map[string]bool{}
	for _, p := range pts {
		if p.topo.Disaggregated() {
			has[RolePrefill], has[RoleDecode] = true, true
		} else {
			has[RoleAggregated] = true
		}
	}
	for _, r := range []string{RolePrefill, RoleDecode, RoleAggregated} {
		if has[r] {
			l.roles = append(l.roles, r)
		}
	}
	l.transfer = has[RolePrefill]
	l.frontend = has[RoleAggregated]
	l.service = l.frontend && frontendQueues(pts)
	return l
}

// frontendQueues reports whether any aggregated point can say how much
// serial work the API server does per request: a burst (every request
// sent at once), or a point that measured at least frontendBusy of one
// server's time at the prior's work per request. Elsewhere the work
// barely shows, and one more stage-2 knob only slows the search.
func frontendQueues(pts []*point) bool {
	for _, p := range pts {
		if p.topo.Disaggregated() {
			continue
		}
		if p.w.Load.Kind == model.Burst {
			return true
		}
		perServer := p.meas[model.RequestThroughput] / float64(max(p.topo.Replicas.Count, 1))
		if perServer*priorFrontendService >= frontendBusy {
			return true
		}
	}
	return false
}

// frontendBusy is the share of an API server's time that makes its
// serial work worth fitting: 10%, where its queue first adds a tenth of
// the work to a request's wait.
const frontendBusy = 0.1

// priorParams are the roofline prior for a group.
func priorParams(l layout, gpu model.GPU, llm model.LLM, pts []*point, s engine.Settings, label string) params {
	p := params{coeffs: map[string]model.Coeffs{}}
	o := engine.OverheadWith(label, s)
	for _, r := range l.roles {
		eager := s.DecodeEager
		if r == RolePrefill {
			eager = s.PrefillEager
		}
		p.coeffs[r] = model.PriorCoeffsFor(o, eager)
	}
	// The prior of the group's largest disaggregated deployment (the
	// first of that size): one price for every point, whatever their order.
	var big model.Topology
	for _, pt := range pts {
		if pt.topo.Disaggregated() && pt.topo.GPUs() > big.GPUs() {
			big = pt.topo
		}
	}
	if big.Disaggregated() {
		p.transfer = priorTransfer(gpu.KVTransferPath(big.GPUs()), llm, big)
	}
	if l.frontend {
		fe := engine.FrontendFor(label)
		p.frontend, p.service = fe.LatencyS, fe.ServiceS
	}
	return p
}

// priorFrontendService is the serial work per request that makes an API
// server's queue worth fitting (frontendQueues): the largest engine prior
// (engine.FrontendFor), so no group whose server could queue is missed.
var priorFrontendService = engine.FrontendFor("").ServiceS

// env is what pricing a point needs besides the parameters.
type env struct {
	gpu      model.GPU
	llm      model.LLM
	settings engine.Settings
	engine   engine.ID
	// at are the coefficients that split, per role, each step's GEMM time
	// between its compute and memory terms in the linear rows.
	at map[string]model.Coeffs
	// kept, when set, keeps each worker's roofline (and memory) for the
	// next stage-1 pass (fitLinear) or evaluation of a refinement
	// (keptEnvs).
	kept *keptShapes
}

// workerShape is a role's worker shape: the key of keptShapes.
type workerShape struct {
	role string
	pool model.Pool
}

func (e env) graphs(role string) []int { return e.settings.CUDAGraphs(role == RolePrefill) }

// stepTerms are the coefficient terms of one step on a worker of shape
// pool, and the step's fixed time that no coefficient scales (its kernel
// floor, model.StepCost.KernelFloor): a row's target less that.
func (e env) stepTerms(role string, pool model.Pool, s model.Step) ([]float64, float64) {
	return e.stepCost(role, pool).terms(s)
}

// splitCost is a worker's step cost at the coefficients that split its
// GEMMs (env.at): built once for the chunks of a prompt, not per chunk.
type splitCost struct {
	c  model.StepCost
	at model.Coeffs
}

func (e env) stepCost(role string, pool model.Pool) splitCost {
	at, ok := e.at[role]
	if !ok {
		at = model.PriorCoeffs(false)
	}
	return splitCost{e.kept.stepCost(e.gpu, e.llm, role, pool, at, e.graphs(role)), at}
}

// terms are stepTerms' of step s on this worker.
func (sc splitCost) terms(s model.Step) ([]float64, float64) {
	n := s.DecodeSeqs
	if s.PrefillTokens == 0 {
		n = sc.c.PaddedBatch(n)
	}
	return sc.c.Roofline.Terms(s, float64(n), sc.at).Vector(), sc.c.KernelFloor()
}

// loadShape estimates, from a point's measured metrics, how many requests
// are in flight and how many of them decode on one decode worker.
func loadShape(p *point) (inFlight, decodeBatch float64) {
	e2e, hasE2E := p.meas[model.MeanE2EL]
	ttft, hasTTFT := p.meas[model.MeanTTFT]
	switch p.w.Load.Kind {
	case model.ClosedLoop:
		inFlight = float64(p.w.Load.Concurrency)
	case model.Burst:
		inFlight = float64(p.w.NumPrompts)
	default:
		if rt, ok := p.meas[model.RequestThroughput]; ok && hasE2E {
			inFlight = rt * e2e / 1000 // Little's law
		} else {
			inFlight = p.w.Load.Rate
		}
	}
	frac := 0.8
	if hasE2E && hasTTFT && e2e > ttft {
		frac = (e2e - ttft) / e2e
	}
	workers := p.topo.Replicas.Count
	if p.topo.Disaggregated() {
		workers = p.topo.Decode.Count
	}
	return inFlight, math.Max(1, math.Round(inFlight*frac/float64(max(workers, 1))))
}

// row is one linear observation: Σ a·x + fixed ≈ y with weight w, where
// fixed is the part of y no unknown scales (the steps' kernel floors).
type row struct {
	a     []float64
	y     float64
	fixed float64
	w     float64
	pt    *point
	what  string
}

// eval is the row's modelled value at the unknowns x in units of scale.
func (r row) eval(scale, x []float64) float64 { return dot(r.a, scale, x) + r.fixed }

// rowsFor builds the stage-1 observations of one point: TPOT as a decode
// step, TTFT at low load as prefill (+ transfer + first decode step), and,
// when a source gives neither, E2E as TTFT plus OSL−1 decode steps.
func rowsFor(ctx context.Context, e env, l layout, p *point) ([]row, error) {
	var rows []row
	inFlight, b := loadShape(p)
	disagg := p.topo.Disaggregated()
	decRole, decPool := RoleAggregated, p.topo.Replicas.Worker()
	if disagg {
		decRole, decPool = RoleDecode, p.topo.Decode.Worker()
	}
	lowLoad := inFlight <= 2 || (!disagg && inFlight <= float64(p.topo.Replicas.Count))
	kv := b * (float64(p.w.ISL) + float64(p.w.OSL)/2)
	decode := make([]float64, l.size())
	var decodeFixed float64
	{
		t, f := e.stepTerms(decRole, decPool, model.Step{DecodeSeqs: int(b), DecodeKV: kv})
		copy(decode[l.offset(decRole):], t)
		decodeFixed = f
	}
	ttft := make([]float64, l.size())
	var ttftFixed float64
	if disagg {
		pre := p.topo.Prefill.Worker()
		chunk := e.settings.Budget()
		cost := e.stepCost(RolePrefill, pre)
		for done := sim.CachedPrefix(p.w.PrefixHitRate, p.w.ISL); done < p.w.ISL; done += chunk {
			if err := chunkCanceled(ctx, done, chunk); err != nil {
				return nil, err
			}
			c := min(chunk, p.w.ISL-done)
			t, f := cost.terms(model.Step{PrefillTokens: c, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(done, c)})
			addTo(ttft[l.offset(RolePrefill):], t, 1)
			ttftFixed += f
		}
		// The transfer moves the whole prompt's KV, cached prefix included,
		// as the simulator prices it (an upper bound: sim.Config.PrefixHitRate).
		o := l.transferIndex()
		ttft[o] = 1
		ttft[o+1] = float64(p.w.ISL)
		first, f := e.stepTerms(RoleDecode, decPool, model.Step{DecodeSeqs: 1, DecodeKV: float64(p.w.ISL)})
		addTo(ttft[l.offset(RoleDecode):], first, 1)
		ttftFixed += f
	} else {
		chunk := e.settings.Budget()
		others := int(b) - 1
		cost := e.stepCost(RoleAggregated, decPool)
		for done := sim.CachedPrefix(p.w.PrefixHitRate, p.w.ISL); done < p.w.ISL; done += chunk {
			if err := chunkCanceled(ctx, done, chunk); err != nil {
				return nil, err
			}
			c := min(chunk, p.w.ISL-done)
			t, f := cost.terms(model.Step{PrefillTokens: c, PrefillSeqs: 1,
				PrefillAttn: model.ChunkAttn(done, c), DecodeSeqs: others, DecodeKV: float64(others) * (float64(p.w.ISL) + float64(p.w.OSL)/2)})
			addTo(ttft[l.offset(RoleAggregated):], t, 1)
			ttftFixed += f
		}
		ttft[l.frontendIndex()] = 1
	}
	tpot, hasTPOT := p.meas[model.MeanTPOT]
	if hasTPOT && disagg {
		rows = append(rows, row{a: decode, y: tpot / 1000, fixed: decodeFixed, w: p.weight, pt: p, what: model.MeanTPOT})
	}
	if hasTPOT && !disagg {
		// With chunked prefill a decoding request also waits for the prompts
		// that arrive at its replica meanwhile: during the TPOT of one token,
		// λ·TPOT prompts' prefill work (arrival rate λ per replica, from the
		// measured throughput) joins the steps. TPOT = step(b) + λ·TPOT·P.
		a := append([]float64(nil), decode...)
		if lambda := arrivalRate(p); lambda > 0 {
			pre := e.prefillOnlyTerms(RoleAggregated, decPool, p.w.ISL, sim.CachedPrefix(p.w.PrefixHitRate, p.w.ISL))
			addTo(a[l.offset(RoleAggregated):], pre, lambda*tpot/1000)
		}
		rows = append(rows, row{a: a, y: tpot / 1000, fixed: decodeFixed, w: p.weight, pt: p, what: model.MeanTPOT})
	}
	if v, ok := p.meas[model.MeanTTFT]; ok && lowLoad {
		rows = append(rows, row{a: ttft, y: v / 1000, fixed: ttftFixed, w: p.weight, pt: p, what: model.MeanTTFT})
	}
	if !hasTPOT {
		e2e, ok := p.meas[model.MeanE2EL]
		e2e /= 1000
		if !ok && p.w.Load.Kind == model.ClosedLoop {
			if v, ok2 := p.meas[model.OutputThroughput]; ok2 {
				e2e, ok = inFlight*float64(p.w.OSL)/v, true
			} else if v, ok2 := p.meas[model.RequestThroughput]; ok2 {
				e2e, ok = inFlight/v, true
			}
		}
		if ok {
			a := make([]float64, l.size())
			addTo(a, ttft, 1)
			addTo(a, decode, float64(p.w.OSL-1))
			w := 1.0
			if !lowLoad {
				w = 0.5
			}
			fixed := ttftFixed + float64(p.w.OSL-1)*decodeFixed
			rows = append(rows, row{a: a, y: e2e, fixed: fixed, w: w * p.weight, pt: p, what: model.MeanE2EL})
		}
	}
	return rows, nil
}

// chunkCanceled checks ctx every 1024 chunks of a prompt's prefill: a
// prompt of model.MaxSequenceTokens in chunks of a few tokens is millions.
func chunkCanceled(ctx context.Context, done, chunk int) error {
	if (done/max(chunk, 1))%1024 != 0 {
		return nil
	}
	return ctx.Err()
}

// arrivalRate is the measured request rate per replica (aggregated) in req/s.
func arrivalRate(p *point) float64 {
	x, ok := p.meas[model.RequestThroughput]
	if !ok {
		if o, ok2 := p.meas[model.OutputThroughput]; ok2 {
			x = o / float64(p.w.OSL)
		}
	}
	return x / float64(max(p.topo.Replicas.Count, 1))
}

// prefillOnlyTerms are the terms a prompt of isl tokens, the first cached
// of them from the prefix cache, adds to the steps it is chunked into: its
// own compute, attention and per-token traffic, without the per-step costs
// the steps pay anyway.
func (e env) prefillOnlyTerms(role string, pool model.Pool, isl, cached int) []float64 {
	cost := e.stepCost(role, pool)
	full, _ := cost.terms(model.Step{PrefillTokens: isl - cached, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(cached, isl-cached)})
	empty, _ := cost.terms(model.Step{})
	for i := range full {
		full[i] -= empty[i]
	}
	return full
}

func addTo(dst, src []float64, k float64) {
	for i := range src {
		dst[i] += k * src[i]
	}
}

// linearFit is the outcome of stage 1.
type linearFit struct {
	params params
	x      []float64 // unknowns relative to the prior
	postSD []float64 // posterior standard deviation of x
	// postCorr is the posterior correlation of x (nil if the posterior
	// could not be inverted): the per-step overhead and the all-reduce
	// latency, both fixed per step at one TP, are known together far
	// better than either alone.
	postCorr [][]float64
	determ   []bool // whether the data (not the prior) determined each unknown
	rows     int
	rmsRel   float64 // weighted RMS relative residual
	// frontendSigma and frontendFitted describe the frontend latency.
	frontendSigma  float64
	frontendFitted bool
	// unsettled is set when the compute/memory split of the GEMM rows did
	// not settle within linearPasses solves; the better fitting of the last
	// two solutions is kept (see fitLinear).
	unsettled bool
}

// Prior relative standard deviation of every multiplier, and the floor of
// the measurement noise, both on relative (log-like) scale.
const (
	priorRelSD = 0.5
	noiseRelSD = 0.04
	minMult    = 0.02 // overheads are kept at or above 2% of the prior
	// minComm is the smallest communication multiplier: the catalog's
	// interconnect latencies are partly assumed, so the fit may halve them.
	minComm = 0.5
)

// wideRelSD is the prior spread of quantities no spec sheet predicts:
// per-step and per-request overheads depend on the engine's software.
const wideRelSD = 2.0

// priorSD is the prior relative standard deviation of each unknown.
func priorSD(l layout) []float64 {
	sd := make([]float64, l.size())
	for i := range sd {
		sd[i] = priorRelSD
	}
	for _, r := range l.roles {
		sd[l.offset(r)+iOverhead] = wideRelSD
	}
	if l.transfer {
		sd[l.transferIndex()] = wideRelSD
	}
	if l.frontend {
		sd[l.frontendIndex()] = wideRelSD
	}
	return sd
}

// lowerBounds are the smallest allowed unknowns (relative to the prior):
// overheads may shrink to almost nothing, inverse efficiencies not below 1
// (no work runs faster than the hardware's peak), communication not below minComm.
func lowerBounds(l layout, scale []float64) []float64 {
	lb := make([]float64, len(scale))
	for i := range lb {
		lb[i] = minMult
	}
	for _, r := range l.roles {
		o := l.offset(r)
		for j := iWeight; j <= iComm; j++ {
			if scale[o+j] <= 0 {
				continue
			}
			floor := 1.0
			if j == iComm {
				floor = minComm
			}
			lb[o+j] = math.Max(minMult, floor/scale[o+j])
		}
	}
	return lb
}

// fitLinear solves the stage-1 least-squares problem: relative residuals of
// the rows, a ridge toward the prior (so unknowns the data do not determine
// stay at the prior), Huber reweighting against outliers and an active set
// keeping every multiplier non-negative.
//
// The GEMMs' smooth roofline (model.RooflineP) makes the rows linear only
// once each role's compute-to-weight split is fixed, so the split is
// iterated: each pass moves it halfway (geometrically) to the solution's,
// until the two agree within splitTolerance or after linearPasses. Where
// the solution jumps across some split no split reproduces itself and the
// passes alternate between two solutions: the one that fits its rows
// better (lower rmsRel) is kept, and the fit notes it (linearFit.unsettled).
func fitLinear(ctx context.Context, e env, l layout, prior params, pts []*point) (linearFit, error) {
	envs := keptEnvs(e, pts) // each point's worker rooflines, kept for every pass
	at := prior.coeffs
	var fit, previous linearFit
	var err error
	for pass := 0; pass < linearPasses; pass++ {
		previous = fit
		for i := range envs {
			envs[i].at = at
		}
		if fit, err = fitLinearOnce(ctx, envs, l, prior, pts); err != nil {
			return fit, err
		}
		if splitSettled(at, fit.params.coeffs, l.roles) {
			return fit, nil
		}
		at = splitBetween(at, fit.params.coeffs, l.roles)
	}
	if previous.rmsRel < fit.rmsRel {
		fit = previous
	}
	fit.unsettled = true
	return fit, nil
}

// linearPasses bounds the solves of fitLinear; splitTolerance is how far
// (in log) a role's compute-to-weight ratio may differ from the one its
// rows were split with.
const (
	linearPasses   = 20
	splitTolerance = 1e-3
)

// splitRatio is the compute-to-weight coefficient ratio that splits a
// role's GEMM time between its two terms.
func splitRatio(c model.Coeffs) float64 { return c.Compute / c.Weight }

// splitSettled reports whether solution splits every role's GEMMs as at does.
func splitSettled(at, solution map[string]model.Coeffs, roles []string) bool {
	for _, r := range roles {
		a, b := splitRatio(at[r]), splitRatio(solution[r])
		if !(a > 0 && b > 0) || math.Abs(math.Log(b/a)) > splitTolerance {
			return false
		}
	}
	return true
}

// splitBetween is at with each role's compute and weight coefficients
// moved halfway (geometric mean) to solution's.
func splitBetween(at, solution map[string]model.Coeffs, roles []string) map[string]model.Coeffs {
	out := make(map[string]model.Coeffs, len(at))
	for r, c := range at {
		out[r] = c
	}
	for _, r := range roles {
		c, s := out[r], solution[r]
		c.Compute, c.Weight = math.Sqrt(c.Compute*s.Compute), math.Sqrt(c.Weight*s.Weight)
		out[r] = c
	}
	return out
}

// fitLinearOnce is one solve of fitLinear, envs[i] pricing pts[i] (forPoint).
func fitLinearOnce(ctx context.Context, envs []env, l layout, prior params, pts []*point) (linearFit, error) {
	var rows []row
	for i, p := range pts {
		r, err := rowsFor(ctx, envs[i], l, p)
		if err != nil {
			return linearFit{}, err
		}
		rows = append(rows, r...)
	}
	k := l.size()
	scale := make([]float64, k) // prior value of each unknown
	for _, r := range l.roles {
		copy(scale[l.offset(r):], prior.coeffs[r].Vector())
	}
	if l.transfer {
		scale[l.transferIndex()], scale[l.transferIndex()+1] = prior.transfer.LatencyS, prior.transfer.PerTokenS
	}
	if l.frontend {
		scale[l.frontendIndex()] = prior.frontend
	}
	sd := priorSD(l)
	lb := lowerBounds(l, scale)
	robust := make([]float64, len(rows))
	for i := range robust {
		robust[i] = 1
	}
	fixed := make([]bool, k)
	var x []float64
	var ata []float64 // the normal equations' upper triangle, k×k
	scaled := make([]scaledRow, len(rows))
	for i, r := range rows {
		scaled[i] = scaleRow(r, scale)
	}
	w := make([]float64, len(rows))
	for iter := 0; iter < 8; iter++ {
		for i, r := range rows {
			w[i] = r.w * robust[i]
		}
		up, atb := normalEquations(scaled, w, k)
		ata = up
		// The system in full (both triangles), as SolveVec copies it.
		lhs := make([]float64, k*k)
		rhs := make([]float64, k)
		minRidge := math.Inf(1)
		for a := 0; a < k; a++ {
			for b := a; b < k; b++ {
				lhs[a*k+b], lhs[b*k+a] = up[a*k+b], up[a*k+b]
			}
			lambda := (noiseRelSD / sd[a]) * (noiseRelSD / sd[a])
			lhs[a*k+a] += lambda
			rhs[a] = atb[a] + lambda
			minRidge = math.Min(minRidge, lambda)
		}
		// Active set: a clamped unknown is pinned at its lower bound.
		for a := 0; a < k; a++ {
			if !fixed[a] {
				continue
			}
			for b := 0; b < k; b++ {
				if b != a {
					rhs[b] -= lhs[a*k+b] * lb[a]
					lhs[a*k+b], lhs[b*k+a] = 0, 0
				}
			}
			lhs[a*k+a] = 1
			rhs[a] = lb[a]
		}
		sol, err := solveRidge(lhs, k, rhs, len(rows), minRidge)
		if err != nil {
			return linearFit{}, fmt.Errorf("calibrate: least squares: %w", err)
		}
		x = sol
		clamped := false
		for a := range x {
			if x[a] < lb[a] && !fixed[a] {
				fixed[a], clamped = true, true
			}
		}
		if clamped {
			continue
		}
		// Huber reweighting on relative residuals (δ = 10%).
		for i, r := range rows {
			res := math.Abs(r.eval(scale, x)/r.y - 1)
			robust[i] = 1
			if res > 0.1 {
				robust[i] = 0.1 / res
			}
		}
	}
	fit := linearFit{x: x, rows: len(rows), postSD: make([]float64, k), determ: make([]bool, k)}
	var ss, sw float64
	for i, r := range rows {
		res := r.eval(scale, x)/r.y - 1
		ss += r.w * robust[i] * res * res
		sw += r.w * robust[i]
	}
	if sw > 0 {
		fit.rmsRel = math.Sqrt(ss / sw)
	}
	noise := math.Max(fit.rmsRel, noiseRelSD)
	post := mat.NewSymDense(k, nil)
	for a := 0; a < k; a++ {
		for b := a; b < k; b++ {
			post.SetSym(a, b, ata[a*k+b]/(noise*noise))
		}
		post.SetSym(a, a, post.At(a, a)+1/(sd[a]*sd[a]))
	}
	var inv mat.Dense
	if err := inv.Inverse(post); err == nil {
		for a := 0; a < k; a++ {
			psd := math.Sqrt(math.Max(inv.At(a, a), 0))
			fit.postSD[a] = psd
			// The data determined an unknown when they shrank its prior uncertainty by half or more.
			fit.determ[a] = psd/math.Max(x[a], minMult) < 0.5*math.Min(sd[a], priorRelSD) && !fixed[a]
		}
		fit.postCorr = make([][]float64, k)
		for a := 0; a < k; a++ {
			fit.postCorr[a] = make([]float64, k)
			for b := 0; b < k; b++ {
				if d := fit.postSD[a] * fit.postSD[b]; d > 0 {
					fit.postCorr[a][b] = math.Max(-1, math.Min(1, inv.At(a, b)/d))
				}
			}
		}
	}
	fit.params = prior.clone()
	for _, r := range l.roles {
		o := l.offset(r)
		v := prior.coeffs[r].Vector()
		for i := range v {
			v[i] *= x[o+i]
		}
		fit.params.coeffs[r] = model.CoeffsFromVector(v)
	}
	if l.transfer {
		ti := l.transferIndex()
		fit.params.transfer.LatencyS *= x[ti]
		fit.params.transfer.PerTokenS *= x[ti+1]
		if fit.determ[ti] || fit.determ[ti+1] {
			fit.params.transfer.Source = SourceFitted
		}
		fit.params.transfer.RelSigma = math.Max(fit.postSD[ti]/x[ti], fit.postSD[ti+1]/x[ti+1])
	}
	if l.frontend {
		fi := l.frontendIndex()
		fit.params.frontend *= x[fi]
		fit.frontendSigma = fit.postSD[fi] / math.Max(x[fi], minMult)
		fit.frontendFitted = fit.determ[fi]
	}
	return fit, nil
}

// scaledRow is a row in units of its target and the unknowns' scale:
// its terms other than zero, by unknown, and its target less the fixed
// part. Stage 1's iterations only reweight them.
type scaledRow struct {
	terms  []scaledTerm
	target float64
}

type scaledTerm struct {
	i int
	v float64
}

func scaleRow(r row, scale []float64) scaledRow {
	s := scaledRow{target: 1 - r.fixed/r.y}
	for a := range r.a {
		if v := r.a[a] * scale[a] / r.y; v != 0 {
			s.terms = append(s.terms, scaledTerm{a, v})
		}
	}
	return s
}

// normalEquations sums the weighted normal equations of rows (weights w)
// over k unknowns: their upper triangle, k×k in a plain slice (the same
// sums as through SymDense's checked At and SetSym, at a fraction of the
// cost; stage 1 runs for every catalog candidate of an unstated group, in
// every fold), and the right-hand side. A zero term adds nothing and is
// skipped, as a dense loop over every unknown skips it.
func normalEquations(rows []scaledRow, w []float64, k int) (up, atb []float64) {
	up, atb = make([]float64, k*k), make([]float64, k)
	for i, r := range rows {
		for j, ta := range r.terms {
			atb[ta.i] += w[i] * ta.v * r.target
			for _, tb := range r.terms[j:] {
				up[ta.i*k+tb.i] += w[i] * ta.v * tb.v
			}
		}
	}
	return up, atb
}

func dot(a, scale, x []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * scale[i] * x[i]
	}
	return s
}
