package calibrate

import (
	"fmt"
	"math"
	"strings"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// Target names a deployment to configure from a profile.
type Target struct {
	GPU      string
	Model    string
	Engine   string // exact engine label, or a prefix resolved by ResolveEngine; "" picks the default
	Topology model.Topology
	// Band scales every pool's step costs by exp(Band × its RelSigma) (see
	// Derivation) and the KV transfer and frontend latency by their own
	// uncertainties: +1 is pessimistic (slower), −1 optimistic, 0 central.
	Band float64
	// Assumed lets a group fitted on data that named no GPU or model (its
	// Assumption) price this GPU and model, as if they had been measured.
	// Off by default: an assumption is not a measurement. Plotting such a
	// source against its own fit turns it on.
	Assumed bool
}

// Derivation says where one pool's costs came from.
type Derivation struct {
	Role   string `json:"role"`   // prefill, decode or aggregated
	Pool   string `json:"pool"`   // e.g. "12xTP1"
	Source string `json:"source"` // fitted, derived or prior
	// From names what a derived or prior cost rests on.
	From string `json:"from"`
	// RelSigma is the relative uncertainty of a typical step time of this
	// pool: the fitted coefficients' uncertainties combined in quadrature,
	// plus in quadrature the systematic error of carrying them to another
	// TP degree, GPU or model (which moves every term of a step together).
	RelSigma float64 `json:"rel_sigma"`
}

// Deployment is a simulator configuration built from a profile. The caller
// fills Config.Load, Input, Output and NumPrompts.
type Deployment struct {
	Config      sim.Config
	GPU         model.GPU
	LLM         model.LLM
	Engine      string
	Derived     []Derivation
	MaxModelLen int
	// Settings are the engine settings the deployment was configured with
	// (the calibrated group's, or the engine's defaults).
	Settings Settings
	// Topology is the target's topology (worker counts as configured).
	Topology model.Topology
	// FrontendLatency is the fitted per-request latency outside the engine
	// (API server, tokenisation) in seconds; sim.Config has no place for it,
	// so apply it to results with Adjust.
	FrontendLatency float64
}

// Extra relative uncertainty added when costs are carried over rather than fitted.
const (
	sigmaOtherTP    = 0.10 // same engine, GPU and model; another TP degree or role
	sigmaOtherGroup = 0.25 // another GPU or model of the same engine family
	sigmaPrior      = 0.50 // nothing fitted: the roofline prior
)

// Configure builds the simulator configuration of a target deployment:
// pools with their step costs, KV capacities and engine limits, the KV
// transfer and the routers. Costs come from the matching fitted entry when
// there is one, else are derived from the nearest fitted group (another TP,
// GPU or model of the same engine), else from the roofline prior; Derived
// says which.
func (p *Profile) Configure(t Target) (Deployment, error) {
	if err := t.Topology.Validate(); err != nil {
		return Deployment{}, fmt.Errorf("calibrate: %v", err)
	}
	gpu, err := model.LookupGPU(t.GPU)
	if err != nil {
		return Deployment{}, fmt.Errorf("calibrate: %v", err)
	}
	llm, err := model.LookupLLM(t.Model)
	if err != nil {
		return Deployment{}, fmt.Errorf("calibrate: %v", err)
	}
	engine := t.Engine
	if len(p.Groups) > 0 {
		engine, err = p.ResolveEngine(gpu.Name, llm.Name, t.Engine, t.Topology.Disaggregated())
		if err != nil {
			return Deployment{}, err
		}
	} else if engine == "" {
		engine = "vllm"
		if t.Topology.Disaggregated() {
			engine = "dynamo"
		}
	}
	src, srcKind := p.sourceGroup(gpu.Name, llm.Name, engine)
	if g := p.assumedGroup(gpu.Name, llm.Name, engine); t.Assumed && g != nil && srcKind != "" {
		src, srcKind = g, ""
	}
	settings := defaultSettings(engine)
	transfer := priorTransfer(llm, t.Topology.Prefill)
	if src != nil {
		settings = src.Settings
		if src.Transfer.Source != "" {
			transfer = groupTransfer(src, llm, t.Topology.Prefill)
		}
	}
	d := Deployment{GPU: gpu, LLM: llm, Engine: engine, MaxModelLen: settings.MaxModelLen, Settings: settings, Topology: t.Topology}
	if src != nil && src.Frontend != nil && !t.Topology.Disaggregated() {
		sig := src.Frontend.RelSigma
		if src.Frontend.Source != SourceFitted {
			// Not determined by the data (its posterior spread can exceed
			// 200%): the fit bounds it together with the step overheads.
			sig = math.Min(sig, sigmaPrior)
		}
		d.FrontendLatency = src.Frontend.LatencyS * math.Exp(t.Band*sig)
	}
	if d.MaxModelLen == 0 {
		d.MaxModelLen = llm.MaxContext
	}
	mem := model.MemoryOptions{Utilization: settings.GPUMemoryUtilization}
	build := func(role string, pool model.Pool) (sim.PoolConfig, error) {
		c, sig, extra, der := resolveCoeffs(src, srcKind, role, pool)
		der.Pool = pool.String()
		eager := settings.DecodeEager
		if role == RolePrefill {
			eager = settings.PrefillEager
		}
		var graphs []int
		if !eager {
			graphs = model.VLLMGraphSizes(orDefault(settings.GraphMax, 512))
		}
		cost := model.NewStepCost(gpu, llm, pool, c, graphs)
		der.RelSigma = math.Hypot(stepSigma(cost, sig, role), extra)
		// The band moves the whole step by its uncertainty. Shifting each
		// coefficient by its own marginal σ instead would add up terms the
		// data determine only jointly (per-step overhead and weight
		// streaming are indistinguishable at one TP), giving a band several
		// times wider than RelSigma.
		cost.Coeffs = scaleCoeffs(c, math.Exp(t.Band*der.RelSigma))
		d.Derived = append(d.Derived, der)
		m, err := model.WorkerMemory(gpu, llm, pool, mem)
		if err != nil {
			return sim.PoolConfig{}, fmt.Errorf("calibrate: %v", err)
		}
		return sim.PoolConfig{
			Workers:          pool.Count,
			Cost:             cost,
			KVCapacity:       m.KVTokens,
			BlockSize:        settings.BlockSize,
			MaxNumSeqs:       settings.MaxNumSeqs,
			MaxBatchedTokens: settings.MaxNumBatchedTokens,
		}, nil
	}
	cfg := &d.Config
	cfg.Router = sim.Routing(orDefaultS(settings.Router, string(sim.RoundRobin)))
	if t.Topology.Disaggregated() {
		if cfg.Prefill, err = build(RolePrefill, t.Topology.Prefill); err != nil {
			return Deployment{}, err
		}
		if cfg.Decode, err = build(RoleDecode, t.Topology.Decode); err != nil {
			return Deployment{}, err
		}
		cfg.PrefillRouter = sim.Routing(orDefaultS(settings.PrefillRouter, string(sim.SharedQueue)))
		tr := transfer
		sig := tr.RelSigma
		if tr.Source == SourcePrior {
			// Not separable from the prefill overhead: the TTFT the fit matched
			// bounds the two together, so the prior's own spread suffices.
			sig = math.Min(sig, sigmaPrior)
		}
		f := math.Exp(t.Band * sig)
		cfg.Transfer = sim.Transfer{Latency: tr.LatencyS * f, PerToken: tr.PerTokenS * f}
	} else {
		if cfg.Replicas, err = build(RoleAggregated, t.Topology.Replicas); err != nil {
			return Deployment{}, err
		}
	}
	return d, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orDefaultS(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// sourceGroup picks the group whose coefficients a target uses, and how far it is from the target:
// "" exact, otherwise a description of what differs.
// assumedGroup finds a group whose source named no GPU or model and whose
// fit assumed this GPU and model.
func (p *Profile) assumedGroup(gpu, llm, engine string) *Group {
	for i := range p.Groups {
		g := &p.Groups[i]
		if a := g.Assumed; a != nil && sameGPU(a.GPU, gpu) && model.SameModel(a.Model, llm) && strings.EqualFold(g.Engine, engine) {
			return g
		}
	}
	return nil
}

func (p *Profile) sourceGroup(gpu, llm, engine string) (*Group, string) {
	if g := p.group(gpu, llm, engine); g != nil {
		return g, ""
	}
	fam := engineFamily(engine)
	type pick struct {
		ok   func(g *Group) bool
		kind string
	}
	picks := []pick{
		{func(g *Group) bool {
			return sameGPU(g.GPU, gpu) && model.SameModel(g.Model, llm) && engineFamily(g.Engine) == fam
		}, "another version"},
		{func(g *Group) bool { return model.SameModel(g.Model, llm) && strings.EqualFold(g.Engine, engine) }, "another GPU"},
		{func(g *Group) bool { return sameGPU(g.GPU, gpu) && engineFamily(g.Engine) == fam }, "another model"},
		{func(g *Group) bool { return model.SameModel(g.Model, llm) && engineFamily(g.Engine) == fam }, "another GPU"},
		{func(g *Group) bool { return engineFamily(g.Engine) == fam && g.GPU != "" }, "another GPU and model"},
	}
	for _, pk := range picks {
		var best *Group
		for i := range p.Groups {
			g := &p.Groups[i]
			if pk.ok(g) && (best == nil || len(g.Records) > len(best.Records)) {
				best = g
			}
		}
		if best != nil {
			return best, pk.kind
		}
	}
	return nil, "none"
}

// resolveCoeffs returns a role's coefficients for a pool shape, their
// fitted relative sigmas (in model.CoeffNames order), the systematic
// relative error of carrying them over (0 when they were fitted on this
// shape) and the derivation.
func resolveCoeffs(g *Group, kind, role string, pool model.Pool) (model.Coeffs, []float64, float64, Derivation) {
	der := Derivation{Role: role}
	if g == nil {
		c := model.PriorCoeffs(role == RolePrefill)
		der.Source, der.From = SourcePrior, "roofline prior (no calibrated group of this engine)"
		return c, constSigma(0), sigmaPrior, der
	}
	name := fmt.Sprintf("%s on %s / %s", g.Engine, orDefaultS(g.GPU, "unknown GPU"), model.ShortName(g.Model))
	e, extra, from := nearestEntry(g, role, pool)
	if e == nil {
		c := model.PriorCoeffs(role == RolePrefill)
		der.Source, der.From = SourcePrior, "roofline prior (no "+role+" costs in "+name+")"
		return c, constSigma(0), sigmaPrior, der
	}
	sig := make([]float64, len(model.CoeffNames))
	for i, n := range model.CoeffNames {
		sig[i] = e.RelSigma[n]
	}
	switch {
	case kind != "":
		der.Source = SourceDerived
		der.From = fmt.Sprintf("%s %s (%s)", name, from, kind)
		extra = math.Hypot(extra, sigmaOtherGroup)
	case extra > 0:
		der.Source, der.From = SourceDerived, name+" "+from
	default:
		der.Source, der.From = e.Source, name+" "+from
	}
	return e.Coeffs, sig, extra, der
}

// nearestEntry finds the entry of a role closest to the pool shape: the
// same shape, else the same role at another TP (coefficients are
// efficiencies, so they carry over with the new TP's roofline), else the
// closest role (decode ↔ aggregated, prefill ← aggregated).
func nearestEntry(g *Group, role string, pool model.Pool) (*Entry, float64, string) {
	roles := map[string][]string{
		RolePrefill:    {RolePrefill, RoleAggregated},
		RoleDecode:     {RoleDecode, RoleAggregated},
		RoleAggregated: {RoleAggregated, RoleDecode},
	}[role]
	for ri, r := range roles {
		var best *Entry
		bestDist := math.Inf(1)
		for i := range g.Entries {
			e := &g.Entries[i]
			if e.Role != r {
				continue
			}
			dist := math.Abs(math.Log2(float64(e.TP))-math.Log2(float64(pool.TP))) +
				math.Abs(math.Log2(float64(max(e.PP, 1)))-math.Log2(float64(pool.Stages())))
			if dist < bestDist {
				best, bestDist = e, dist
			}
		}
		if best == nil {
			continue
		}
		from := fmt.Sprintf("%s TP%d", best.Role, best.TP)
		if best.PP > 1 {
			from += fmt.Sprintf("PP%d", best.PP)
		}
		extra := 0.0
		if bestDist > 0 || ri > 0 {
			extra = sigmaOtherTP
		}
		return best, extra, from
	}
	return nil, 0, ""
}

func constSigma(s float64) []float64 {
	out := make([]float64, len(model.CoeffNames))
	for i := range out {
		out[i] = s
	}
	return out
}

// scaleCoeffs multiplies every coefficient, and so every step time, by f.
func scaleCoeffs(c model.Coeffs, f float64) model.Coeffs {
	v := c.Vector()
	for i := range v {
		v[i] *= f
	}
	return model.CoeffsFromVector(v)
}

// stepSigma is the relative uncertainty of a typical step of the role:
// a 2048-token prefill, or a decode step of 32 sequences at 1,000 tokens of context.
func stepSigma(cost model.StepCost, sig []float64, role string) float64 {
	s := model.Step{DecodeSeqs: 32, DecodeKV: 32000}
	if role == RolePrefill {
		s = model.Step{PrefillTokens: 2048, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(0, 2048)}
	}
	n := s.DecodeSeqs
	if s.PrefillTokens == 0 {
		n = cost.PaddedBatch(n)
	}
	terms := cost.Roofline.Terms(s, float64(n)).Vector()
	cv := cost.Coeffs.Vector()
	var total, vari float64
	for i := range cv {
		x := cv[i] * terms[i]
		total += x
		vari += (x * sig[i]) * (x * sig[i])
	}
	if total == 0 {
		return 0
	}
	return math.Sqrt(vari) / total
}

// defaultSettings are the engine settings assumed for an engine without
// calibrated data: Dynamo 0.3 as NVIDIA's published recipe runs it, vLLM's
// own defaults otherwise.
func defaultSettings(engine string) Settings {
	if engineFamily(engine) == "dynamo" {
		return Settings{BlockSize: 128, MaxNumBatchedTokens: 4096, MaxModelLen: 4096, PrefillEager: true, GraphMax: 128,
			Router: string(sim.RoundRobin), PrefillRouter: string(sim.SharedQueue)}
	}
	return Settings{GraphMax: 512, Router: string(sim.RoundRobin)}
}

// priorTransfer prices a KV transfer when none was fitted: a few ms of
// set-up plus the prompt's KV bytes over a 25 GB/s inter-node RDMA path.
func priorTransfer(m model.LLM, prefill model.Pool) TransferFit {
	tp := max(prefill.TP, 1)
	return TransferFit{LatencyS: 0.002, PerTokenS: m.KVBytesPerToken(tp, 2) / 25e9, Source: SourcePrior, RelSigma: sigmaPrior}
}

// groupTransfer is a group's KV transfer as its fit simulated it, the
// per-token time scaled to the KV bytes a target's prompt token moves.
func groupTransfer(g *Group, target model.LLM, prefill model.Pool) TransferFit {
	tr := g.Transfer
	srcLLM := target
	if m, err := model.LookupLLM(g.Model); err == nil {
		srcLLM = m
	} else if g.Assumed != nil {
		if m, err := model.LookupLLM(g.Assumed.Model); err == nil {
			srcLLM = m
		}
	}
	srcTP := 0
	for _, e := range g.Entries {
		if e.Role == RolePrefill && (srcTP == 0 || e.TP < srcTP) {
			srcTP = e.TP
		}
	}
	from := priorTransfer(srcLLM, model.Pool{Count: 1, TP: max(srcTP, 1)}).PerTokenS
	to := priorTransfer(target, prefill).PerTokenS
	if from > 0 {
		tr.PerTokenS *= to / from
	}
	return tr
}

// withFrontend returns a simulation's metrics as a client would measure them
// when every request also spends latency seconds outside the engine (API
// server, tokenisation): TTFT and E2E statistics grow by latency; in a
// closed loop each client's cycle grows too, so throughputs shrink by
// E2E/(E2E+latency); an open loop keeps its rate; the run ends latency later.
func withFrontend(res *sim.Result, latency float64, load model.Load) map[string]float64 {
	if latency <= 0 {
		return res.Metrics
	}
	m := make(map[string]float64, len(res.Metrics))
	for k, v := range res.Metrics {
		m[k] = v
	}
	ms := 1000 * latency
	for _, stat := range []string{"mean", "median", "p90", "p95", "p99"} {
		for _, fam := range []string{"ttft", "e2el"} {
			if v, ok := m[model.MetricName(stat, fam)]; ok {
				m[model.MetricName(stat, fam)] = v + ms
			}
		}
	}
	scale := 1.0
	switch {
	case load.Kind == model.ClosedLoop:
		if e2e := res.Metrics[model.MeanE2EL] / 1000; e2e > 0 {
			scale = e2e / (e2e + latency)
		}
	case res.Duration > 0:
		scale = res.Duration / (res.Duration + latency)
	}
	for _, k := range []string{model.RequestThroughput, model.OutputThroughput, model.TotalTokenThroughput} {
		if v, ok := m[k]; ok {
			m[k] = v * scale
		}
	}
	if v, ok := m[model.Duration]; ok && scale > 0 {
		m[model.Duration] = v / scale
	}
	return m
}

// Adjust turns a simulation of this deployment into what a benchmark client
// would measure, adding the fitted per-request latency outside the engine
// (FrontendLatency) to TTFT and E2E and shrinking closed-loop throughput to
// match. Call it on every sim.Run result of d.Config; it is a no-op when
// FrontendLatency is 0.
func (d Deployment) Adjust(res *sim.Result) {
	if res == nil || d.FrontendLatency <= 0 {
		return
	}
	res.Metrics = withFrontend(res, d.FrontendLatency, d.Config.Load)
	if res.Duration > 0 && d.Config.Load.Kind != model.ClosedLoop {
		res.Duration += d.FrontendLatency
	}
}
