package calibrate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/optionerr"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// Target names a deployment to configure from a profile. Its GPU and model
// are catalog entries, looked up once where names enter (Resolve,
// RecordTarget): Configure compares their catalog names.
type Target struct {
	GPU      model.GPU
	LLM      model.LLM
	Engine   engine.ID // parsed where its label entered; a Label prefix (or none: the default) is resolved by ResolveEngine
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
	// Settings, when set, are the engine settings the deployment runs
	// with (a benchmark's stated flags over the engine's defaults), in
	// place of the source group's or the engine's defaults; an empty
	// Router keeps the source group's (or the default round-robin).
	Settings *engine.Settings
	// Router, when set, is the load balancer the deployment runs behind
	// (round-robin, least-outstanding, random), in place of the one the
	// source group states or its fit chose.
	Router string
	// Record, when set, sizes the KV cache and the batch limits as one
	// benchmark record did (applyRecord), over the settings', as the
	// fit simulated that record; RecordTarget sets it.
	Record *engine.Settings
	// DPAttention, when above 0, is SGLang's data-parallel attention
	// degree the deployment runs with (--enable-dp-attention --dp N; 1:
	// attention split by TP), over the source group's or the record's.
	// Configure refuses it for another engine family, or where it does
	// not divide a pool's TP.
	DPAttention int
	// Nodes is how many servers each worker's GPUs span (0 or 1: one, on
	// the GPU's own link; beyond, the node network prices its all-reduces:
	// model.GPU.AcrossNodes); 0 takes Settings.Nodes when Settings is set.
	// A source group's placement is never inherited: where a benchmark's
	// workers ran is not an engine setting.
	Nodes int
	// Stated are engine settings the user states (vLLM's flags), over the
	// source group's, the record's or the engine's defaults (the defaults
	// then computed at the stated max-model-len).
	Stated engine.Stated
	// KVLink, when set, names the link a disaggregated deployment's KV
	// transfers cross (an interconnect catalog name: the GPU's own link,
	// RDMA400, RDMA200 or Ethernet), in place of the one its size implies
	// (model.GPU.KVTransferPath); it prices the transfer even of the
	// calibrated deployment (CheckKVLink says which links a deployment
	// can use).
	KVLink string
	// Frontend, when set, is the per-request latency outside the engine
	// in seconds (API server, network and client) that the deployment's
	// clients see, stated in place of the calibrated or carried one: a
	// user who measured their own stack knows it, and a carried one is
	// another source's host and client (docs/accuracy.md,
	// fifteenth pass). It has no band. The API server's serial work stays
	// the source group's, never more than the stated latency. Aggregated
	// deployments only (StatedFrontend): a disaggregated deployment's
	// frontend is priced with its KV transfer.
	Frontend *float64
}

// StatedFrontend checks a Target.Frontend for a deployment of topo. Its
// errors wrap ErrStatedFrontend, and ErrFrontendRange for a latency
// outside 0 to MaxStatedFrontend seconds.
func StatedFrontend(latency float64, topo model.Topology) error {
	switch {
	case !(latency >= 0 && latency <= MaxStatedFrontend):
		return fmt.Errorf("calibrate: %w %w: 0 to %g s, got %v", ErrStatedFrontend, ErrFrontendRange, MaxStatedFrontend, latency)
	case topo.Disaggregated():
		return fmt.Errorf("calibrate: %w applies to aggregated deployments: a disaggregated deployment's frontend is priced with its KV transfer (its own fitted costs, or the engine's prior)", ErrStatedFrontend)
	}
	return nil
}

// MaxStatedFrontend is the longest Target.Frontend, in seconds: a
// profile's own frontend latencies are bounded there too.
var MaxStatedFrontend = profileBounds["frontend.latency_s"].hi

var (
	// ErrStatedFrontend is what StatedFrontend's errors wrap.
	ErrStatedFrontend = errors.New("a stated frontend latency")
	// ErrFrontendRange is StatedFrontend's error for a latency out of range.
	ErrFrontendRange = errors.New("out of range")
)

// RouterError is CheckRouter's error: no deployment runs behind Router.
type RouterError struct{ Router string }

func (e *RouterError) Error() string {
	return fmt.Sprintf("unknown router %q (want round-robin, least-outstanding, random or prefix-aware)", e.Router)
}

// CheckRouter accepts "" and the load balancers a deployment can run
// behind (Target.Router).
func CheckRouter(router string) error {
	switch sim.Routing(router) {
	case "", sim.RoundRobin, sim.LeastOutstanding, sim.Random, sim.PrefixAware:
		return nil
	}
	return fmt.Errorf("calibrate: %w", &RouterError{router})
}

// Derivation says where one pool's costs came from.
type Derivation struct {
	Role   string `json:"role"`   // prefill, decode or aggregated
	Pool   string `json:"pool"`   // e.g. "12xTP1"
	Source string `json:"source"` // fitted, derived or prior
	// Engine is the engine version whose measurements priced the pool (the
	// target's own engine for a prior).
	Engine string `json:"engine"`
	// From names what a derived or prior cost rests on.
	From string `json:"from"`
	// RelSigma is the relative uncertainty of a typical step time of this
	// pool: the fitted coefficients' uncertainties (with their correlation),
	// the source group's scatter about its fit, and the systematic error of
	// carrying them to another TP degree, version, GPU or model (which moves
	// every term of a step together), in quadrature; see carriedCost.
	RelSigma float64 `json:"rel_sigma"`
	// Coeffs are the costs that priced the pool at the band's centre
	// (model.Coeffs: CPU seconds and inverse efficiencies of the roofline),
	// so that every number a prediction rests on can be read.
	Coeffs model.Coeffs `json:"coeffs"`
	// Collectives says what one of the pool's tensor-parallel all-reduces
	// costs and where that comes from; "" for a single-GPU worker.
	Collectives string `json:"collectives,omitempty"`
	// Kernels says what the pool's steps pay for their kernels' latency
	// (model.StepCost.KernelFloor) and where that comes from.
	Kernels string `json:"kernels,omitempty"`
	// Experts says how a mixture of experts' experts sit on the pool's
	// GPUs and what a step reads of them; "" for a dense model.
	Experts string `json:"experts,omitempty"`
}

// Deployment is a simulator configuration built from a profile. The caller
// fills Config.Load, Input, Output and NumPrompts.
type Deployment struct {
	Config      sim.Config
	GPU         model.GPU
	LLM         model.LLM
	Engine      engine.ID
	Derived     []Derivation
	MaxModelLen int
	// Settings are the engine settings the deployment was configured with
	// (the calibrated group's, or the engine's defaults).
	Settings engine.Settings
	// Topology is the target's topology (worker counts as configured).
	Topology model.Topology
	// RouterChoice is set when Settings.Router is the calibrated group's
	// router that its records did not state and its fit chose (router.go);
	// RouterAsked when Target.Router set it; RouterFrom says where the
	// router came from, in words.
	RouterChoice *RouterChoice
	RouterAsked  bool
	RouterFrom   string
	// FrontendFrom says, for an aggregated deployment priced with its
	// engine's frontend prior (no calibration of its own) or a stated
	// latency (Target.Frontend), what it is, where it came from and its
	// band; "" when it is the deployment's own (or there is none).
	FrontendFrom string
	// TransferFrom says, for a disaggregated deployment, what a KV
	// transfer costs and where that comes from; "" when aggregated.
	TransferFrom string
	// pathBand is the band's factor on a KV transfer priced from its path
	// (priorTransfer); 0 when the transfer is a fitted deployment's own.
	pathBand float64
	kvLink   string // Target.KVLink
	// Stated are the settings the target stated (Target.Stated); Flags
	// what the engine ran with, named as vLLM's flags, each with where it
	// came from; DefaultsRule the engine rule the defaults follow.
	Stated       engine.Stated
	Flags        []engine.Flag
	DefaultsRule string
}

// collectivesNote says what a pool's all-reduces cost: the interconnect
// catalog's latency of a small one in the worker's mode, in a graph its
// measured curve where the link has one, and the bus bandwidth of a
// large one at its TP, all times the comm multiplier, and
// what of them the catalog assumed (the link's Assumed, and the GPU's
// LinkAssumed where it borrows the link's measurements).
func collectivesNote(gpu model.GPU, pool model.Pool, graphs []int, comm float64) string {
	if pool.TP <= 1 {
		return ""
	}
	ic := gpu.TPLink(pool.Stages())
	var mode string
	if len(graphs) == 0 {
		mode = fmt.Sprintf("%.1f µs eager (no CUDA graphs)", ic.AllReduceUs(pool.TP, false))
	} else {
		mode = fmt.Sprintf("%.1f µs in a CUDA graph (steps up to %d tokens), %.1f µs eager", ic.AllReduceUs(pool.TP, true), graphs[len(graphs)-1], ic.AllReduceUs(pool.TP, false))
		if b := ic.GraphGrowthBytes; len(b) > 0 {
			mode += fmt.Sprintf("; in a graph, larger ones along vLLM's measured curve to %.0f MB", b[len(b)-1]/(1<<20))
		}
	}
	scale := ""
	if math.Abs(comm-1) > 1e-3 {
		scale = fmt.Sprintf("; all × %.2f fitted", comm)
	}
	var assumed []string
	if ic.Assumed != "" {
		assumed = append(assumed, ic.Assumed)
	}
	if gpu.LinkAssumed != "" && ic.Name == gpu.Link().Name {
		assumed = append(assumed, gpu.LinkAssumed)
	}
	note := ""
	if len(assumed) > 0 {
		note = "; assumed, not measured: " + strings.Join(assumed, "; ")
	}
	bus := ic.AllReduceBps(pool.TP) / 1e9
	busText := fmt.Sprintf("%.3g", bus) // 9.4, 26.4, 445
	if bus >= 1000 {
		busText = fmt.Sprintf("%.0f", bus)
	}
	return fmt.Sprintf("a small all-reduce over %s at TP%d: %s, a large one at %s GB/s bus bandwidth%s (interconnect catalog%s)",
		ic.Name, pool.TP, mode, busText, scale, note)
}

// kernelsNote states a worker's kernel floor: measured per kernel, counted
// per layer, paid in CUDA graphs; an eager worker's launches are its
// engine row's eager overhead instead.
func kernelsNote(llm model.LLM, graphs []int) string {
	if len(graphs) == 0 {
		return "eager (no CUDA graphs): kernel launches priced in the engine's eager overhead"
	}
	heavy, small := llm.KernelsPerStep()
	return fmt.Sprintf("%.2f ms a step: %.0f GEMM and attention kernels × %.1f µs + %.0f small ones × %.1f µs in a CUDA graph, whatever the TP (measured on an H200, docs/measurements)",
		1000*llm.KernelFloor(), heavy, model.GEMMKernelUs, small, model.SmallKernelUs)
}

// expertsNote states how a mixture of experts' experts sit on a worker:
// split over its GPUs or, under expert parallelism, dealt whole to them;
// and what share of them the busiest GPU reads in a one-token step
// (model.Roofline.ExpertShare). "" for a dense model.
func expertsNote(gpu model.GPU, llm model.LLM, pool model.Pool) string {
	if !llm.IsMoE() {
		return ""
	}
	r := model.NewRoofline(gpu, llm, pool)
	k, e := llm.ActiveExperts, llm.Experts
	all := math.Ceil(math.Log(0.01) / math.Log(1-float64(k)/float64(e))) // tokens by which 99% are touched
	if ep := llm.ExpertParallelAt(pool.TP); ep > 1 {
		n := e / ep
		where := fmt.Sprintf("each of the worker's %d GPUs", ep)
		if ep < pool.TP {
			where = fmt.Sprintf("each of %d groups of %d GPUs", ep, pool.TP/ep)
		}
		return fmt.Sprintf("%d experts (%d a token) dealt %d to %s (expert parallelism): a step waits for the one whose tokens touched most of its experts, %.1f of %d at one token where split experts read the equivalent of %.1f, nearly all from %.0f tokens (uniform routing, a lower bound)",
			e, k, n, where, r.ExpertShare(1)*float64(n), n, float64(k)/float64(ep), all)
	}
	split := "on one GPU"
	if pool.TP > 1 {
		split = fmt.Sprintf("each split over the worker's %d GPUs", pool.TP)
	}
	return fmt.Sprintf("%d experts (%d a token), %s: a step reads the ones its tokens touch, %.0f%% at one token, nearly all from %.0f tokens (uniform routing)",
		e, k, split, 100*r.ExpertShare(1), all)
}

// String is the derivation as outputs print it: "aggregated 4xTP4:
// fitted from vllm-0.9.0.1 on H20 / Qwen3-32B aggregated TP4 (±12%)".
func (d Derivation) String() string {
	from := ""
	if d.From != "" {
		from = " from " + d.From
	}
	return fmt.Sprintf("%s %s: %s%s (±%.0f%%)", d.Role, d.Pool, d.Source, from, 100*d.RelSigma)
}

// derivedBandScale widens or narrows the ±1σ band of a deployment priced
// without a calibration of its own (pooled costs, the engine's frontend
// prior), per GPU class (model.GPU.Class), toward 55–80% coverage held out:
// fit --cv before it held out by GPU covered AMD 0.46, NVLink Hopper 0.53,
// Blackwell 0.52, Ampere 0.62 and PCIe 0.86 (docs/accuracy.md). Each
// factor is z(0.675)/z(coverage) for a normal error, z(c) its two-sided
// quantile; a class not listed keeps its band. AMD's was 1.6 until the
// collectives' measured bus bandwidths priced MI300X's TP8 faster, after
// which its points covered 0.58 / 0.52 / 0.56 held out by GPU / engine /
// source (0.553 pooled): 1.6 × z(0.675)/z(0.553) = 2.07.
var derivedBandScale = map[string]float64{"AMD": 2.07, "NVLink Hopper": 1.36, "NVLink Blackwell": 1.39, "NVLink Ampere": 1.12, "PCIe": 0.67}

// DerivedBandScale is the factor on g's band where nothing calibrated it.
func DerivedBandScale(g model.GPU) float64 {
	if f, ok := derivedBandScale[g.Class()]; ok {
		return f
	}
	return 1
}

// pooledBandScale widens or narrows a pooled price's band by how far the
// target lies from the groups that priced it (pooledKind): a model
// measured on other GPUs is priced mostly from its own fits (weighted
// pooledSameModel) and carried across GPUs alone, a model measured nowhere
// is carried across models too, yet the pooled σ adds one carrying error
// (sigmaOtherGroup) for all. fit --cv at 037c046, the pooled points of
// every GPU class and fold kind together, covered: another GPU 0.75
// (2337 measurements), another model 0.62 (2176), another GPU and model
// 0.50 (1495). Each factor is z(0.675)/z(coverage), as derivedBandScale's,
// measured with those class factors in place; another kind keeps its band.
var pooledBandScale = map[sourceKind]float64{sourceOtherGPU: 0.85, sourceOtherModel: 1.12, sourceOtherGPUAndModel: 1.47}

// pooledBand is the ±1σ of a pool priced from pooled groups (rel, the
// pooled σ), for the target's GPU and how far it lies from those groups.
func pooledBand(gpu model.GPU, kind sourceKind, rel float64) float64 {
	f, ok := pooledBandScale[kind]
	if !ok {
		f = 1
	}
	return rel * DerivedBandScale(gpu) * f
}

// Extra relative uncertainty added when costs are carried over rather than fitted.
const (
	sigmaOtherTP    = 0.10 // same engine, GPU and model; another TP degree or role
	sigmaOtherGroup = 0.25 // another GPU or model of the same engine family
	sigmaPrior      = 0.50 // nothing fitted: the roofline prior
	// sigmaOtherVersion is added when another engine version's overheads
	// are rescaled by the engine table to price this one.
	sigmaOtherVersion = 0.20
)

// Configure builds the simulator configuration of a target deployment:
// pools with their step costs, KV capacities and engine limits, the KV
// transfer and the routers. Costs come from the matching fitted entry when
// there is one, else are derived from the nearest fitted group (another TP,
// GPU or model of the same engine), else from the roofline prior; Derived
// says which.
func (p *Profile) Configure(t Target) (Deployment, error) {
	if err := t.Topology.Validate(); err != nil {
		return Deployment{}, fmt.Errorf("calibrate: %w", err)
	}
	gpu, llm := t.GPU, t.LLM
	switch {
	case gpu.Name == "":
		return Deployment{}, fmt.Errorf("%w (known: %s)", ErrNoGPU, GPUList())
	case llm.Name == "":
		return Deployment{}, fmt.Errorf("%w (known: %s)", ErrNoModel, LLMList())
	}
	var err error
	id := t.Engine
	if len(p.Groups) > 0 {
		id, err = p.ResolveEngine(gpu.Name, llm.Name, t.Engine.Label, t.Topology.Disaggregated())
		if err != nil {
			return Deployment{}, err
		}
	} else if id.Label == "" {
		id = engine.Parse(engine.DefaultLabel(t.Topology.Disaggregated()))
	} else if id.Family == "" {
		id = engine.Parse(id.Label) // built by hand, not parsed
	}
	label := id.Label
	src, srcKind := p.sourceGroup(gpu.Name, llm.Name, id)
	if g := p.assumedGroup(gpu.Name, llm.Name, label); t.Assumed && g != nil && srcKind != sourceExact {
		src, srcKind = g, sourceExact
	}
	if err := t.Stated.Validate(); err != nil {
		return Deployment{}, err
	}
	defaultsLen := cmp.Or(t.Stated.MaxModelLen, llm.MaxContext)
	settings := defaultSettings(id, gpu, defaultsLen)
	// sourceGroup says sourceExact only with a group (assumedGroup too).
	own := srcKind == sourceExact
	if own {
		// A benchmark's own flags (eager mode, max-model-len, memory
		// utilisation) describe that deployment; a derived target runs the
		// engine's defaults.
		settings = src.Settings
		// A stated KV cache holds for one record's shape (applyRecord);
		// a profile written before groups stopped keeping one may hold it.
		settings.KVCacheGiB = 0
	}
	if t.Settings != nil {
		router := settings.Router
		settings = *t.Settings
		if settings.Router == "" {
			// Flags that do not say how requests are spread keep the
			// calibrated group's router (the one its fit chose, router.go).
			settings.Router = router
		}
	}
	if err := CheckRouter(t.Router); err != nil {
		return Deployment{}, err
	} else if t.Router != "" {
		settings.Router = t.Router
	}
	if t.Settings == nil || t.Nodes > 0 {
		settings.Nodes = t.Nodes
	}
	if t.Record != nil {
		applyRecord(&settings, *t.Record)
	}
	settings.Apply(t.Stated)
	if err := checkStated(settings, t.Stated, id, t.Topology.Disaggregated(), llm.MaxContext); err != nil {
		return Deployment{}, err
	}
	llm = withKVCache(settings, llm)
	ran, _ := id.AsGeneration(settings.Generation) // the release, or the generation it ran on
	if settings.PrefixCaching == "" {
		settings.PrefixCaching = defaultSettings(ran, gpu, llm.MaxContext).PrefixCaching
	}
	if t.DPAttention > 0 {
		if id.Family != engine.SGLang {
			return Deployment{}, fmt.Errorf("calibrate: %w is SGLang's (--enable-dp-attention); the engine is %s", ErrDPAttention, label)
		}
		for _, pl := range []model.Pool{t.Topology.Replicas, t.Topology.Prefill, t.Topology.Decode} {
			if !pl.IsZero() && pl.TP%t.DPAttention != 0 {
				return Deployment{}, fmt.Errorf("calibrate: %w over %d groups does not divide a TP%d worker", ErrDPAttention, t.DPAttention, pl.TP)
			}
		}
		settings.DPAttention = t.DPAttention
	} else if settings.DPAttention > 1 && id.SGLangAutoDP() {
		// These releases ran one attention group per TP rank whatever --dp
		// said (dpAttentionOf): a calibrated TP8 deployment's eight groups
		// are four at TP4.
		settings.DPAttention = max(t.Topology.Replicas.TP, t.Topology.Decode.TP)
	}
	// vLLM's flag spreads the experts over every GPU of a worker
	// (model.LLM.ExpertParallelAt caps the degree at a smaller pool's TP),
	// so a calibrated vLLM or Dynamo run's degree follows the target's TP:
	// EP8 at TP8 is EP4 at TP4. SGLang's and TensorRT-LLM's state theirs.
	switch on := t.Stated.ExpertParallel; {
	case on != nil && *on && !llm.IsMoE():
		return Deployment{}, fmt.Errorf("calibrate: --%s applies to a mixture of experts; %s is dense", engine.FlagExpertParallel, model.ShortName(llm.Name))
	case on != nil && *on:
		settings.ExpertParallel = t.Topology.WidestTP()
	case on != nil:
		settings.ExpertParallel = 0
	case settings.ExpertParallel > 0 && (id.Family == engine.VLLM || id.Family == engine.Dynamo):
		settings.ExpertParallel = t.Topology.WidestTP()
	}
	llm = deployed(llm, settings)
	gpu = gpu.AcrossNodes(settings.Nodes)
	// A fitted transfer is that deployment's own (its network, connector
	// and what its fit could not tell from its prefill): another GPU,
	// model or engine prices its own path.
	path, err := kvPath(gpu, t.KVLink, t.Topology)
	if err != nil {
		return Deployment{}, err
	}
	transfer := priorTransfer(path, llm, t.Topology)
	// measuredDisagg: the calibrated deployment ran disaggregated, so its
	// fit priced a transfer (and carries its frontend in its prefill and
	// transfer). A stated link prices the transfer even there.
	measuredDisagg := own && src.Transfer.Source != ""
	ownTransfer := measuredDisagg && t.KVLink == ""
	if ownTransfer {
		// As its fit simulated every point of it, whatever the prefill TP.
		transfer = src.Transfer
	}
	d := Deployment{GPU: gpu, LLM: llm, Engine: id, MaxModelLen: settings.MaxModelLen, Settings: settings, Topology: t.Topology, kvLink: t.KVLink}
	switch {
	case t.Router != "":
		d.RouterAsked, d.RouterFrom = true, "asked for (the load balancer the deployment runs behind)"
	case t.Settings != nil && t.Settings.Router != "":
		d.RouterFrom = "the stated engine settings"
	case own && src.RouterChoice != nil:
		d.RouterChoice, d.RouterFrom = src.RouterChoice, "chosen by the fit ("+src.RouterChoice.Why+")"
	case own:
		d.RouterFrom = "the calibrated deployment's settings"
	default:
		d.RouterFrom = "the default"
	}
	frontend, service := 0.0, 0.0
	switch {
	case measuredDisagg && t.Topology.Disaggregated():
		// Its fitted prefill and KV transfer carry it (no frontend is fitted
		// apart from them), a stated link or not.
	case own && src.Frontend != nil:
		// The deployment's own: its client, network and host.
		sig := src.Frontend.RelSigma
		if src.Frontend.Source != SourceFitted {
			// Not determined by the data (its posterior spread can exceed
			// 200%): the fit bounds it together with the step overheads.
			sig = math.Min(sig, sigmaPrior)
		}
		// The serial work keeps the source's own spread; where the data
		// could not show it, it is the prior, as uncertain as the fitted
		// works lie apart (serviceSpread).
		serviceSig := sig
		if !src.Frontend.ServiceFitted {
			serviceSig = math.Hypot(sig, p.serviceSpread())
		}
		service = src.Frontend.Serial() * math.Exp(t.Band*serviceSig)
		frontend = src.Frontend.LatencyS * math.Exp(t.Band*sig)
	default:
		// Any other deployment: the engine's API server, never another
		// source's host. Its band is how far the calibrated deployments'
		// frontends lie apart (their clients and hosts).
		fe := engine.FrontendFor(label)
		sig, serviceSig := p.frontendSpread(), math.Hypot(p.serviceSpread(), sigmaPrior)
		if sig == 0 {
			sig = sigmaPrior
		}
		sig, serviceSig = sig*DerivedBandScale(gpu), serviceSig*DerivedBandScale(gpu)
		frontend = fe.LatencyS * math.Exp(t.Band*sig)
		service = math.Min(fe.ServiceS*math.Exp(t.Band*serviceSig), frontend)
		d.FrontendFrom = fmt.Sprintf("%.1f ms a request (±1σ ×/÷%.1f), %.1f ms of it serial in the API server (±1σ ×/÷%.1f): the %s engine's frontend prior (%s), not another deployment's host",
			1000*fe.LatencyS, math.Exp(sig), 1000*fe.ServiceS, math.Exp(serviceSig), label, fe.Cite)
		if t.Topology.Disaggregated() {
			d.FrontendFrom = fmt.Sprintf("%.1f ms a request (±1σ ×/÷%.1f): the %s engine's frontend prior (%s), not another deployment's host; its serial work is not queued (the front door's servers are not known)",
				1000*fe.LatencyS, math.Exp(sig), label, fe.Cite)
		}
	}
	if t.Frontend != nil {
		if err := StatedFrontend(*t.Frontend, t.Topology); err != nil {
			return Deployment{}, err
		}
		frontend = *t.Frontend
		service = math.Min(service, frontend)
		d.FrontendFrom = statedFrontendNote(frontend, service, src, srcKind)
	}
	if d.MaxModelLen == 0 {
		d.MaxModelLen = llm.MaxContext
	}
	d.Stated = t.Stated
	d.Flags, d.DefaultsRule = engineFlags(d, defaultsLen, own)
	var transferCfg sim.Transfer
	if t.Topology.Disaggregated() {
		tr := transfer
		sig := tr.RelSigma
		if tr.Source == SourcePrior {
			// Not separable from the prefill overhead: the TTFT the fit matched
			// bounds the two together, so the prior's own spread suffices.
			sig = math.Min(sig, sigmaPrior)
		}
		f := math.Exp(t.Band * sig)
		transferCfg = sim.Transfer{Latency: tr.LatencyS * f, PerToken: tr.PerTokenS * f}
		d.TransferFrom = transferNote(tr, sig, path, llm, t.Topology, ownTransfer)
		if tr.Source == SourcePrior && !ownTransfer {
			d.pathBand = f // Scaled prices another count's path
		}
	}
	poolKind := p.pooledKind(srcKind, gpu.Name, llm.Name, id) // what a pooled pool's band and derivation say
	pr := pricing{gpu: gpu, llm: llm, engine: id, settings: settings, transfer: transferCfg, frontend: frontend, service: service,
		coeffs: func(role string, pool model.Pool) (model.Coeffs, error) {
			eager := settings.CUDAGraphs(role == RolePrefill) == nil
			// No fit of this GPU and model: every fitted group prices it
			// (pooled.go), the target's own engine row its CPU costs, and
			// the roofline prior only when nothing pools.
			pooled := srcKind != sourceExact && srcKind != sourceOtherVersion
			carried := src
			if pooled {
				carried = nil
			}
			cc, der := resolveCoeffs(carried, srcKind, role, pool, label, settings, eager)
			der.Pool, der.Engine = pool.String(), label
			if carried != nil {
				der.Engine = carried.Engine
			}
			graphs := settings.CUDAGraphs(role == RolePrefill)
			if pooled {
				if pc, ok := p.pooledCoeffs(gpu, llm, pool, graphs, label, settings, role, poolKind, eager); ok {
					cc = carriedCost{coeffs: pc.coeffs, sig: constSigma(0), extra: pc.relSigma}
					der.Source, der.From, der.Engine = SourceDerived, pc.from, label
				}
			}
			der.RelSigma = cc.relSigma(gpu, llm, pool, graphs, role)
			if pooled && der.Source == SourceDerived {
				der.RelSigma = pooledBand(gpu, poolKind, der.RelSigma)
			}
			der.Collectives = collectivesNote(gpu, pool, graphs, cc.coeffs.Comm)
			der.Kernels = kernelsNote(llm, graphs)
			der.Experts = expertsNote(gpu, llm, pool)
			der.Coeffs = cc.coeffs
			d.Derived = append(d.Derived, der)
			// The band moves the whole step by its uncertainty. Shifting each
			// coefficient by its own marginal σ instead would add up terms the
			// data determine only jointly (per-step overhead and weight
			// streaming are indistinguishable at one TP), giving a band several
			// times wider than RelSigma.
			return scaleCoeffs(cc.coeffs, math.Exp(t.Band*der.RelSigma)), nil
		}}
	if d.Config, err = pr.build(t.Topology); err != nil {
		return Deployment{}, err
	}
	return d, nil
}

func orDefaultS(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// assumedGroup finds a group whose source named no GPU or model and whose
// fit assumed this GPU and model.
func (p *Profile) assumedGroup(gpu, llm, engine string) *Group {
	for i := range p.Groups {
		g := &p.Groups[i]
		if a := g.Assumed; a != nil && a.GPU == gpu && a.Model == llm && strings.EqualFold(g.Engine, engine) {
			return g
		}
	}
	return nil
}

// sourceGroup picks the group whose coefficients a target uses, and how
// far it is from the target. gpu and llm are catalog names.
func (p *Profile) sourceGroup(gpu, llm string, e engine.ID) (*Group, sourceKind) {
	return sourceGroupIn(p.Groups, gpu, llm, e)
}

// pooledKind is how far the nearest group a pooled price draws on lies
// from the target: k, sourceGroup's kind over the profile's groups, or,
// the nearer, the kind over its transfer pool's, which pooledCoeffs pools
// as well. A pool group of the target's own GPU and model (never its
// price) counts as a model measured on another GPU.
func (p *Profile) pooledKind(k sourceKind, gpu, llm string, e engine.ID) sourceKind {
	if len(p.Pool) > 0 {
		_, inPool := sourceGroupIn(p.Pool, gpu, llm, e)
		k = max(min(k, inPool), sourceOtherGPU)
	}
	return k
}

// sourceGroupIn is sourceGroup over the groups gs.
func sourceGroupIn(gs []Group, gpu, llm string, e engine.ID) (*Group, sourceKind) {
	label, fam := e.Label, e.Family
	for i := range gs {
		if g := &gs[i]; g.GPU == gpu && g.Model == llm && strings.EqualFold(g.Engine, label) {
			return g, sourceExact
		}
	}
	// Another model's group stands in for a model of the same kind (dense
	// or mixture-of-experts) first: its frontend and KV transfer were
	// measured beside engine settings (expert parallelism, DP attention)
	// that a model of the other kind does not run. Only after the target
	// model's own groups on other GPUs does a group of the other kind on
	// the target's GPU stand in (same host and client; no measured
	// difference, docs/accuracy.md, tenth pass), and a group of
	// the same kind on another GPU after that.
	moe := isMoE(llm)
	type pick struct {
		ok   func(g *Group) bool
		kind sourceKind
	}
	picks := []pick{
		{func(g *Group) bool {
			return g.GPU == gpu && g.Model == llm && engine.Family(g.Engine) == fam
		}, sourceOtherVersion},
		{func(g *Group) bool { return g.Model == llm && strings.EqualFold(g.Engine, label) }, sourceOtherGPU},
		{func(g *Group) bool {
			return g.GPU == gpu && engine.Family(g.Engine) == fam && isMoE(g.Model) == moe
		}, sourceOtherModel},
		{func(g *Group) bool { return g.Model == llm && engine.Family(g.Engine) == fam }, sourceOtherGPU},
		{func(g *Group) bool { return g.GPU == gpu && engine.Family(g.Engine) == fam }, sourceOtherModel},
		{func(g *Group) bool {
			return engine.Family(g.Engine) == fam && g.GPU != "" && isMoE(g.Model) == moe
		}, sourceOtherGPUAndModel},
		{func(g *Group) bool { return engine.Family(g.Engine) == fam && g.GPU != "" }, sourceOtherGPUAndModel},
	}
	// Without one, nothing of another deployment stands in: its frontend
	// is its host's and client's, not the engine's (Configure prices the
	// engine's frontend prior and pools the costs).
	want := e.Version
	for _, pk := range picks {
		if best := pickGroup(gs, pk.ok, want); best != nil {
			return best, pk.kind
		}
	}
	return nil, sourceNone
}

// pickGroup is the group of gs that ok accepts with the nearest engine
// version to want, then the most records.
func pickGroup(gs []Group, ok func(*Group) bool, want []int) *Group {
	var best *Group
	for i := range gs {
		g := &gs[i]
		if !ok(g) {
			continue
		}
		if best == nil {
			best = g
			continue
		}
		dg, db := engine.Distance(engine.Parse(g.Engine).Version, want), engine.Distance(engine.Parse(best.Engine).Version, want)
		if dg != db {
			if dg < db {
				best = g
			}
			continue
		}
		if len(g.Records) > len(best.Records) {
			best = g
		}
	}
	return best
}

// ErrDPAttention marks a data-parallel attention degree
// (Target.DPAttention) the deployment cannot run.
var ErrDPAttention = errors.New("data-parallel attention")

// statedFrontendNote is Deployment.FrontendFrom for a stated frontend
// latency: what it is and where the serial work in it came from.
func statedFrontendNote(latency, service float64, src *Group, srcKind sourceKind) string {
	note := fmt.Sprintf("%.1f ms a request, stated (no band)", 1000*latency)
	if service > 0 && src != nil {
		from := "the deployment's own"
		if srcKind != sourceExact {
			from = "the engine's prior"
		}
		note += fmt.Sprintf(", %.1f ms of it serial in the API server (%s; at most the stated latency)", 1000*service, from)
	}
	return note
}

// serviceSpread is the weighted standard deviation of the log serial work
// of the profile's deployments whose fit determined it (√records each,
// floored at 1 ms), the band of a work that is the prior.
func (p *Profile) serviceSpread() float64 {
	return p.frontendLogSpread(func(f *FrontendFit) (float64, bool) { return f.ServiceS, f.ServiceFitted })
}

// frontendLogSpread is the weighted standard deviation of the log of what
// value reads from each frontend of the profile's groups and transfer pool
// that state their GPU and for which value says yes (√records each,
// floored at 1 ms).
func (p *Profile) frontendLogSpread(value func(*FrontendFit) (float64, bool)) float64 {
	var sw, s1, s2 float64
	for _, gs := range [][]Group{p.Groups, p.Pool} {
		for i := range gs {
			g := &gs[i]
			if g.Frontend == nil || g.GPU == "" {
				continue
			}
			v, ok := value(g.Frontend)
			if !ok {
				continue
			}
			w := math.Sqrt(float64(len(g.Records)))
			l := math.Log(math.Max(v, 1e-3))
			sw += w
			s1 += w * l
			s2 += w * l * l
		}
	}
	if sw == 0 {
		return 0
	}
	m := s1 / sw
	return math.Sqrt(math.Max(s2/sw-m*m, 0))
}

// sourceKind is how far the group sourceGroup picks lies from a target.
type sourceKind int

const (
	sourceExact sourceKind = iota // the target's own GPU, model and engine
	// sourceOtherVersion: the target's GPU, model and engine family at
	// another version; its fit carries over with the CPU overheads
	// rescaled by the engine table.
	sourceOtherVersion
	sourceOtherGPU
	sourceOtherModel
	sourceOtherGPUAndModel
	sourceNone // no group of the target's engine family
)

// String is the kind as derivation notes word it.
func (k sourceKind) String() string {
	switch k {
	case sourceExact:
		return "the target's own"
	case sourceOtherVersion:
		return "another version"
	case sourceOtherGPU:
		return "another GPU"
	case sourceOtherModel:
		return "another model"
	case sourceOtherGPUAndModel:
		return "another GPU and model"
	case sourceNone:
		return "an engine family the profile's own groups lack"
	}
	return fmt.Sprintf("sourceKind(%d)", int(k))
}

// resolveCoeffs returns a role's coefficients for a pool shape from group
// g — the target's own (sourceExact) or its engine at another version
// (sourceOtherVersion); nil means the roofline prior — with their fitted
// relative sigmas (in model.CoeffNames order), the systematic relative
// error of carrying them over (0 when they were fitted on this shape) and
// the derivation.
func resolveCoeffs(g *Group, kind sourceKind, role string, pool model.Pool, label string, s engine.Settings, eager bool) (carriedCost, Derivation) {
	der := Derivation{Role: role}
	target := engine.OverheadWith(label, s)
	if g == nil {
		c := model.PriorCoeffsFor(target, eager)
		der.Source, der.From = SourcePrior, fmt.Sprintf("roofline prior with %s overheads (no calibrated group of this engine)", target.Generation)
		return carriedCost{coeffs: c, sig: constSigma(0), extra: sigmaPrior}, der
	}
	name := fmt.Sprintf("%s on %s / %s", g.Engine, orDefaultS(g.GPU, "unknown GPU"), model.ShortName(g.Model))
	e, extra, from := nearestEntry(g, role, pool)
	if e == nil {
		c := model.PriorCoeffsFor(target, eager)
		der.Source, der.From = SourcePrior, "roofline prior (no "+role+" costs in "+name+")"
		return carriedCost{coeffs: c, sig: constSigma(0), extra: sigmaPrior}, der
	}
	coeffs := e.Coeffs
	note := "" // what differs from the target, for der.From
	if kind != sourceExact {
		note = kind.String()
		if streamed := streamUndetermined(g, e, &coeffs); streamed != "" {
			note += "; " + streamed
		}
	}
	srcO := engine.OverheadWith(g.Engine, g.Settings)
	mode := map[bool]string{true: "eager", false: "CUDA graphs"}
	if srcO.Generation != target.Generation || e.Eager != eager {
		// Another engine version: its CPU costs are the target row's, the
		// fitted group's unexplained time staying with that deployment (the
		// efficiencies carry over). The same deployment in the other mode
		// (eager where it ran CUDA graphs, or the reverse) keeps its own
		// unexplained time over the row of its new mode. The table's own
		// uncertainty is added.
		prior := model.PriorCoeffsFor(target, eager)
		if note == "" && srcO.Generation == target.Generation {
			coeffs.Overhead = math.Max(prior.Overhead+g.Unexplained(e), minMult*target.StepS)
			note = fmt.Sprintf("run %s where it was fitted %s: the %s row's step cost in that mode, its own unexplained time kept", mode[eager], mode[e.Eager], target.Generation)
		} else {
			coeffs.Overhead, coeffs.PerSeq = prior.Overhead, prior.PerSeq
			note = strings.TrimPrefix(note+fmt.Sprintf("; CPU overheads the %s (%s) engine-table row's, not %s's own fit (%s)",
				target.Generation, mode[eager], srcO.Generation, mode[e.Eager]), "; ")
		}
		extra = math.Hypot(extra, sigmaOtherVersion)
	}
	sig := make([]float64, len(model.CoeffNames))
	for i, n := range model.CoeffNames {
		sig[i] = e.RelSigma[n]
	}
	switch {
	case note != "":
		der.Source = SourceDerived
		der.From = fmt.Sprintf("%s %s (%s)", name, from, note)
		extra = math.Hypot(extra, sigmaOtherGroup)
	case extra > 0:
		der.Source, der.From = SourceDerived, name+" "+from
	default:
		der.Source, der.From = e.Source, name+" "+from
	}
	if note == "" {
		if u := g.Unexplained(e); math.Abs(u) >= UnexplainedNoteS {
			der.From += "; " + unexplainedText(u, g)
		}
	}
	return carriedCost{coeffs: coeffs, sig: sig, corr: e.Corr, scatter: math.Max(e.Scatter, residualSigma(g, role)), extra: extra,
		fittedOn: model.Pool{Count: 1, TP: e.TP, PP: e.PP}}, der
}

// streamUndetermined prices, for a dense model's group carried to another
// deployment, the weight and KV reads its data left at the old prior at
// the GPU's measured streaming share (model.DecodeStreamSource) and its
// all-reduces at the catalog's figures, as a pooled price does: a prior is
// not a measurement of that GPU. What the data determined stays. It says
// what it replaced ("" for nothing). g's GPU and model are the target's:
// Configure carries a group only to its own GPU and model (another engine
// version); other targets are pooled.
func streamUndetermined(g *Group, e *Entry, c *model.Coeffs) string {
	gpu, err := model.LookupGPU(g.GPU)
	llm, err2 := model.LookupLLM(g.Model)
	if err != nil || err2 != nil {
		return ""
	}
	stream, ok := streamCoeff(gpu, llm)
	if !ok {
		return ""
	}
	var done []string
	for _, n := range e.Prior {
		switch n {
		case "weight":
			c.Weight = stream
			done = append(done, "weight")
		case "kv":
			c.KV = stream
			done = append(done, "KV")
		case "comm":
			c.Comm = 1 // the interconnect catalog's cited latencies
			done = append(done, "all-reduce")
		}
	}
	if len(done) == 0 {
		return ""
	}
	return strings.Join(done, ", ") + " costs the data left at the prior from the GPU's streaming share and the interconnect catalog (" + model.DecodeStreamSource + ")"
}

// carriedCost is what prices one pool before its band is drawn: the
// coefficients and what is known of their uncertainty.
type carriedCost struct {
	coeffs model.Coeffs
	sig    []float64   // relative σ of each coefficient (model.CoeffNames order)
	corr   [][]float64 // their correlation (Entry.Corr; nil: uncorrelated)
	// scatter is how far a point of the source group lies from its fit.
	scatter float64
	// extra is the systematic error of carrying the costs to this pool.
	extra float64
	// fittedOn is the worker shape the costs were fitted on (zero when
	// pooled or the prior).
	fittedOn model.Pool
}

// relSigma is the relative ±1σ of a typical step of pool: how well the
// coefficients are known, how far single points scatter about them, and
// what carrying them costs. Carried to another shape, a step is known no
// better than on the shape it was fitted on, whose terms weigh differently.
func (cc carriedCost) relSigma(gpu model.GPU, llm model.LLM, pool model.Pool, graphs []int, role string) float64 {
	s := stepSigma(model.NewStepCost(gpu, llm, pool, cc.coeffs, graphs), cc.sig, cc.corr, role)
	if f := cc.fittedOn; f.TP > 0 && (f.TP != pool.TP || f.Stages() != pool.Stages()) {
		s = math.Max(s, stepSigma(model.NewStepCost(gpu, llm, f, cc.coeffs, graphs), cc.sig, cc.corr, role))
	}
	return math.Hypot(math.Hypot(s, cc.scatter), cc.extra)
}

// nearRoles are the roles whose costs price a role, nearest first: a
// worker's own role, then the one that runs the same kind of steps
// (decode ↔ aggregated, prefill ← aggregated).
var nearRoles = map[string][]string{
	RolePrefill:    {RolePrefill, RoleAggregated},
	RoleDecode:     {RoleDecode, RoleAggregated},
	RoleAggregated: {RoleAggregated, RoleDecode},
}

// nearestEntry finds the entry of a role closest to the pool shape: the
// same shape, else the same role at another TP (coefficients are
// efficiencies, so they carry over with the new TP's roofline), else the
// closest role (decode ↔ aggregated, prefill ← aggregated).
func nearestEntry(g *Group, role string, pool model.Pool) (*Entry, float64, string) {
	roles := nearRoles[role]
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

// residualSigma is a robust standard deviation (1.4826 × the median
// absolute log ratio) of a group's own simulated residuals on the metric a
// role's steps decide: TTFT for prefill, TPOT for decode, both for
// aggregated workers. The linear fit's Scatter can understate it, since
// stage 2 and queueing move the simulated metrics further than the
// step-time rows stage 1 fits; 0 without residuals (a transfer-pool group).
// It is at most sigmaPrior: a fit that misses its own TTFTs by more than
// pricing from nothing would is missing queueing or a client's clock, not
// step time, and the band applies it to step times, which queueing then
// amplifies again (`fit --cv`: sibling-source TTFT bands reached ×10).
func residualSigma(g *Group, role string) float64 {
	metrics := map[string][]string{
		RolePrefill:    {model.MeanTTFT},
		RoleDecode:     {model.MeanTPOT},
		RoleAggregated: {model.MeanTTFT, model.MeanTPOT},
	}[role]
	var abs []float64
	for _, r := range g.Residuals {
		for _, m := range metrics {
			if v, ok := r.LogRatio[m]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				abs = append(abs, math.Abs(v))
			}
		}
	}
	if len(abs) == 0 {
		return 0
	}
	return math.Min(1.4826*median(abs), sigmaPrior)
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
func stepSigma(cost model.StepCost, sig []float64, corr [][]float64, role string) float64 {
	s := typicalStepOf(role)
	n := s.DecodeSeqs
	if s.PrefillTokens == 0 {
		n = cost.PaddedBatch(n)
	}
	terms := cost.Roofline.Terms(s, float64(n), cost.Coeffs).Vector()
	cv := cost.Coeffs.Vector()
	dev := make([]float64, len(cv)) // each term's standard deviation, in seconds
	var total float64
	for i := range cv {
		x := cv[i] * terms[i]
		total += x
		dev[i] = x * sig[i]
	}
	if total == 0 {
		return 0
	}
	// With the coefficients' correlation the terms' errors partly cancel
	// (two fixed per-step costs the data know only as a sum); without it,
	// they add in quadrature.
	var vari float64
	for i := range dev {
		for j := range dev {
			rho := 0.0
			switch {
			case i == j:
				rho = 1
			case len(corr) == len(dev) && len(corr[i]) == len(dev):
				rho = corr[i][j]
			}
			vari += dev[i] * dev[j] * rho
		}
	}
	return math.Sqrt(math.Max(vari, 0)) / total
}

// defaultSettings are the settings an engine runs with on a GPU, for a
// model of maxModelLen tokens, when its command line does not set them:
// engine.Defaults's, with Dynamo's routers (round-robin decode, a shared
// prefill queue).
func defaultSettings(e engine.ID, gpu model.GPU, maxModelLen int) engine.Settings {
	s, _ := engine.Defaults(e, gpu.Device(), maxModelLen)
	s.Router = string(sim.RoundRobin)
	if e.Family == engine.Dynamo {
		s.PrefillRouter = string(sim.SharedQueue)
	}
	return s
}

// kvPath is the path a deployment of topo on gpu moves its KV over: the
// link stated (Target.KVLink), else the one its size implies
// (model.GPU.KVTransferPath). The error is CheckKVLink's; with a known
// link the path is priced all the same.
func kvPath(gpu model.GPU, link string, topo model.Topology) (model.KVPath, error) {
	switch {
	case link == "":
		return gpu.KVTransferPath(topo.GPUs()), nil
	case !topo.Disaggregated():
		return model.KVPath{}, &KVLinkError{"it applies to a disaggregated deployment: an aggregated one moves no KV"}
	}
	p, err := gpu.KVTransferPathOver(link)
	if e, ok := optionerr.As(err); ok {
		return model.KVPath{}, &KVLinkError{e.Text(nil)}
	}
	if !p.Across && topo.GPUs() > model.GPUsPerServer {
		return p, &KVLinkError{fmt.Sprintf("%s is within one server, and %s takes %d GPUs (a server holds %d)", p.Link.Name, topo, topo.GPUs(), model.GPUsPerServer)}
	}
	return p, nil
}

// CheckKVLink refuses a stated KV link (Target.KVLink) that a deployment
// of topo on gpu cannot use: an unknown one, another GPU's link, a link
// within a server for a deployment larger than one, or any for an
// aggregated deployment. Its errors are *KVLinkError; "" is accepted.
func CheckKVLink(gpu model.GPU, link string, topo model.Topology) error {
	_, err := kvPath(gpu, link, topo)
	return err
}

// KVLinkError is CheckKVLink's: why a stated KV link cannot price a
// deployment. It is ErrKVLink (errors.Is).
type KVLinkError struct{ Reason string }

func (e *KVLinkError) Error() string        { return "calibrate: a stated KV link: " + e.Reason }
func (e *KVLinkError) Is(target error) bool { return target == ErrKVLink }

// ErrKVLink is what every CheckKVLink error is.
var ErrKVLink = errors.New("a stated KV link")

// priorTransfer prices a KV transfer no fit measured: the connector's
// fixed cost and each prefill GPU's share of the prompt's KV over path.
func priorTransfer(path model.KVPath, m model.LLM, topo model.Topology) TransferFit {
	return TransferFit{LatencyS: path.LatencyS, PerTokenS: path.PerTokenS(m, topo.Prefill.TP), Source: SourcePrior, RelSigma: sigmaPrior}
}

// transferNote is Deployment.TransferFrom: a 4,096-token prompt's
// transfer, its parts and their source.
func transferNote(tr TransferFit, sig float64, path model.KVPath, llm model.LLM, topo model.Topology, own bool) string {
	const n = 4096
	total := 1000 * (tr.LatencyS + n*tr.PerTokenS)
	if own {
		return fmt.Sprintf("%.1f ms for a %d-token prompt (%.2f ms + %.2f µs a token): the calibrated deployment's own (%s, ±%.0f%%)",
			total, n, 1000*tr.LatencyS, 1e6*tr.PerTokenS, tr.Source, 100*sig)
	}
	tp := max(topo.Prefill.TP, 1)
	bytes, who := llm.KVBytesPerToken(tp, llm.KVElemBytes())*n, "the prefill worker's"
	if !path.Shared {
		bytes, who = bytes/float64(tp), "each prefill GPU's"
	}
	return fmt.Sprintf("%.1f ms for a %d-token prompt: %.1f ms connector set-up + %s %.0f MiB of KV over %s (the interconnect catalog's line rate; set-up and RDMA efficiency measured with Mooncake's connector), not another deployment's",
		total, n, 1000*tr.LatencyS, who, bytes/(1<<20), path)
}

// frontendSpread is the weighted standard deviation of the log frontend
// latency over the profile's calibrated deployments (groups and transfer
// pool with a stated GPU, √records each, latencies floored at 1 ms):
// across the corpus's clients and hosts they run from under 1 ms to 104 ms.
// Most of them are not determined by their data alone (the fit bounds them
// with the step overheads); over the determined ones alone the spread is
// about a fifth smaller. It is ×/÷2.5 on the embedded profile. Leave-one-GPU-out, the
// band then holds 77% of the dense light-load mean TTFTs (under 300 ms)
// where it held 54% (docs/accuracy.md, tenth pass).
func (p *Profile) frontendSpread() float64 {
	return p.frontendLogSpread(func(f *FrontendFit) (float64, bool) { return f.LatencyS, true })
}
