package predict

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/parallel"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// Options choose what to predict. Zero values are documented defaults.
type Options struct {
	// Target is the deployment: GPU, model, engine (resolved by the caller) and topology.
	Target calibrate.Target
	// Workload is the requests of every load point. ISL and OSL both 0
	// predict each shape calibrated for the target's GPU, model and engine.
	// Zero OSLMax and ExactOutput spread outputs within ±20% of OSL; a
	// Sharing's SharedLen must be under ISL, and a PrefixHitRate (in
	// [0, 1)) above 0 overrides it. NumPrompts is per load point: in
	// steady state the measured requests of the first run (sim.Converge
	// doubles them until stable), in replay the requests sent; 0 means
	// DefaultNumPrompts. The same Seed gives the same bytes. Its Load is
	// not read: Loads are the loads.
	Workload workload.Workload
	// Loads to simulate; empty means concurrency 1, 2, 4, …, 256.
	Loads []model.Load
	// Mode is sim.SteadyState (the default, "" too) or sim.BenchmarkReplay.
	// A burst (rate inf) has no steady state and is always replayed.
	Mode sim.Mode
	// Settings override engine settings per pool role ("replicas",
	// "prefill", "decode"): a non-zero MaxNumSeqs or MaxNumBatchedTokens
	// replaces the profile's (as a planner's chosen settings).
	Settings []EngineSettings
	// Steady bounds the steady-state runs; zero values are sim's defaults
	// (means within ±2% at 95%, p99s within ±5%, at most 64,000 measured requests).
	Steady sim.SteadyOptions
	// NoBand skips the uncertainty band (two extra simulations per point).
	NoBand bool
	// Progress, if set, is called after each simulated point.
	Progress func(done, total int)
}

// DefaultConcurrencies is 1, 2, 4, …, 256.
func DefaultConcurrencies() []model.Load {
	var loads []model.Load
	for c := 1; c <= 256; c *= 2 {
		loads = append(loads, model.Closed(c))
	}
	return loads
}

// Point is one predicted load point.
type Point struct {
	Load model.Load `json:"load"`
	// Mode is how the point was simulated: "steady-state" or "benchmark-replay".
	Mode sim.Mode `json:"mode"`
	// NumPrompts is the requests measured (steady state) or sent (replay).
	NumPrompts int `json:"num_prompts"`
	// Steady describes a steady-state point's measurement: warm-up, window,
	// offered and achieved rates, saturation, relative errors.
	Steady  *sim.Steady        `json:"steady,omitempty"`
	GPUs    int                `json:"gpus"`
	Metrics map[string]float64 `json:"metrics"`
	// OutputPerGPU is output tokens per second per GPU.
	OutputPerGPU float64 `json:"output_throughput_per_gpu"`
	// Lo and Hi bound request throughput and mean TTFT with the costs shifted
	// one standard deviation either way.
	Lo    map[string]float64 `json:"lo,omitempty"`
	Hi    map[string]float64 `json:"hi,omitempty"`
	Pools []sim.PoolStats    `json:"pools"`
	// PrefixHitRate is the share of prompt tokens the prefix cache served
	// in the simulation (sim.Result.PrefixHitRate).
	PrefixHitRate float64 `json:"prefix_hit_rate"`
}

// Knee is the smallest load reaching KneeShare of the maximum throughput.
type Knee struct {
	Load                 model.Load `json:"load"`
	RequestThroughput    float64    `json:"request_throughput"`
	MaxRequestThroughput float64    `json:"max_request_throughput"`
	MaxOutputThroughput  float64    `json:"max_output_throughput"`
}

// The knee and blow-up thresholds: a load reaching KneeShare of the
// highest throughput is the knee; a mean TTFT BlowupFactor times the
// lowest load's is a blow-up.
const (
	KneeShare    = 0.9
	BlowupFactor = 3.0
)

// Blowup is the first load whose mean TTFT is at least BlowupFactor times the lowest load's.
type Blowup struct {
	Found      bool       `json:"found"`
	Load       model.Load `json:"load,omitzero"`
	MeanTTFTms float64    `json:"mean_ttft_ms,omitempty"`
	BaseTTFTms float64    `json:"base_ttft_ms"`
}

// Bottleneck names what limits throughput at the highest load.
type Bottleneck struct {
	Resource    string             `json:"resource"` // "prefill pool", "decode pool", "replicas", "KV capacity", "KV transfer", "none"
	Why         string             `json:"why"`
	Utilisation map[string]float64 `json:"utilisation"`
	KVUsage     map[string]float64 `json:"max_kv_usage"`
}

// Prediction is the forecast for one deployment and workload shape.
type Prediction struct {
	GPU    string `json:"gpu"`
	Model  string `json:"model"`
	Engine string `json:"engine"`
	// Disaggregated says the topology has prefill and decode pools.
	Disaggregated bool                   `json:"disaggregated,omitempty"`
	Topology      string                 `json:"topology"`
	GPUs          int                    `json:"gpus"`
	ISL           int                    `json:"isl"`
	OSL           int                    `json:"osl"`
	Points        []Point                `json:"points"`
	Knee          Knee                   `json:"knee"`
	Blowup        Blowup                 `json:"ttft_blowup"`
	Bottleneck    Bottleneck             `json:"bottleneck"`
	Derived       []calibrate.Derivation `json:"derived"`
	Warnings      []string               `json:"warnings,omitempty"`
	// Mode is the simulation mode asked for (a burst point is replayed whatever it says).
	Mode sim.Mode `json:"mode"`
	// Settings are the engine settings of each pool, as simulated.
	Settings []EngineSettings `json:"engine_settings"`
	// EngineFlags are the settings the engine ran with, named as vLLM's
	// flags, each stated, the engine version's default on the GPU, or
	// the calibrated deployment's; EngineDefaults is the rule the
	// defaults follow (calibrate.Deployment.Flags).
	EngineFlags    []engine.Flag `json:"engine_flags"`
	EngineDefaults string        `json:"engine_defaults"`
	// Router is how requests were spread over several replicas (or decode
	// workers), and RouterFrom where that came from; both empty for one.
	Router     string `json:"router,omitempty"`
	RouterFrom string `json:"router_from,omitempty"`
	// Frontend says what the per-request frontend latency is and where it
	// came from when it is the engine's prior or stated
	// (calibrate.Deployment.FrontendFrom);
	// FrontendStatedMS is the stated one in ms (Target.Frontend), nil when
	// not stated: it has no band.
	Frontend         string   `json:"frontend,omitempty"`
	FrontendStatedMS *float64 `json:"frontend_stated_ms,omitempty"`
	// Transfer says what a disaggregated deployment's KV transfer costs
	// and where it comes from (calibrate.Deployment.TransferFrom).
	Transfer string `json:"transfer,omitempty"`
	// KVLink is the link Options.Target.KVLink stated ("" by its size).
	KVLink string `json:"kv_link,omitempty"`
	// RouterChosenByFit: the calibration's records did not state the
	// router and its fit chose Router (calibrate.RouterChoice).
	RouterChosenByFit bool `json:"router_chosen_by_fit,omitempty"`
	// RouterAsked: the target asked for Router (calibrate.Target.Router).
	RouterAsked bool `json:"router_asked,omitempty"`
	// MaxModelLen and GPUMemoryUtilization are the engine's
	// --max-model-len and --gpu-memory-utilization (0: vLLM's default).
	MaxModelLen          int     `json:"max_model_len"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"`
	// KVFitTokens is the longest request one worker's KV cache holds
	// (KVFit): an export's --max-model-len is at most it.
	KVFitTokens int `json:"kv_fit_tokens,omitempty"`
	// PrefixHitRate is the prefix-cache hit rate assumed (Options.Workload.PrefixHitRate).
	PrefixHitRate float64 `json:"prefix_hit_rate,omitempty"`
	// Sharing is the prompts' prefix sharing simulated (Options.Workload.Sharing),
	// PrefixCaching whether the replicas (a disaggregated deployment's
	// prefill workers) cached prefixes, and PrefixRouter the router that
	// spread the prompts over them (each
	// point's PrefixHitRate is what the cache served).
	Sharing       model.Sharing `json:"sharing,omitzero"`
	PrefixCaching bool          `json:"prefix_caching"`
	PrefixRouter  string        `json:"prefix_router,omitempty"`
	// Dataset is the dataset whose lengths the requests drew (Options.Workload.Dataset).
	Dataset string `json:"dataset,omitempty"`
	// ExactOutput: every output ran to exactly its shape's OSL
	// (Options.Workload.ExactOutput, as ignore_eos gets them), not spread ±20%.
	ExactOutput bool `json:"exact_output,omitempty"`
}

// Run predicts every shape of opts over its loads with the profile's costs.
func Run(ctx context.Context, prof *calibrate.Profile, opts Options) ([]Prediction, error) {
	if err := opts.validate(&opts.Workload.Dataset); err != nil {
		return nil, err
	}
	w := &opts.Workload
	given := w.ISL > 0 || w.OSL > 0
	central, err := prof.Configure(opts.Target)
	if err != nil {
		return nil, err
	}
	var shapes []workload.Workload
	if given {
		shapes = []workload.Workload{*w}
	} else {
		for _, s := range prof.Series(central.GPU.Name, central.LLM.Name, central.Engine.Label) {
			sh := calibratedShape(*w, s)
			if !slices.ContainsFunc(shapes, func(o workload.Workload) bool { return o.ISL == sh.ISL && o.OSL == sh.OSL }) {
				shapes = append(shapes, sh)
			}
		}
		if len(shapes) == 0 {
			return nil, fmt.Errorf("predict: the profile has no calibrated workload shape for %s / %s / %s: name a prompt and output length",
				central.GPU.Name, model.ShortName(central.LLM.Name), central.Engine.Label)
		}
	}
	if mml := opts.Target.Stated.MaxModelLen; mml > 0 {
		for _, sh := range shapes {
			// The engine refuses such requests; a calibrated max-model-len
			// only warns (extrapolationWarnings), a stated one is the user's.
			if span, what := sh.Span(); span > mml {
				return nil, fmt.Errorf("predict: %s = %d exceeds the stated --%s %d: the engine refuses such requests", what, span, engine.FlagMaxModelLen, mml)
			}
		}
	}
	loads := opts.Loads
	if len(loads) == 0 {
		loads = DefaultConcurrencies()
	}
	mode := cmp.Or(opts.Mode, sim.SteadyState)
	prompts := make([]int, len(loads))
	for i, l := range loads {
		if err := l.Validate(); err != nil {
			return nil, fmt.Errorf("predict: %w", err)
		}
		// The replay length a benchmark would send; errors for absurd loads.
		if prompts[i], err = calibrate.SteadyStatePrompts(l, w.NumPrompts); err != nil {
			return nil, fmt.Errorf("predict: %w", err)
		}
		if m := pointMode(mode, l); m == sim.SteadyState {
			if prompts[i] = DefaultNumPrompts(w.NumPrompts, m, l); prompts[i] > sim.MaxNumPrompts/2 {
				return nil, fmt.Errorf("predict: %w", sim.TooManyPrompts("%s needs %d measured requests for a steady state, more than a run may simulate with its warm-up; give a smaller load or --num-prompts", l, prompts[i]))
			}
		}
	}
	if central, err = override(central, opts.Settings); err != nil {
		return nil, err
	}
	deps := []calibrate.Deployment{central}
	if !opts.NoBand {
		for _, band := range []float64{-1, 1} {
			t := opts.Target
			t.Band = opts.Target.Band + band
			d, err := prof.Configure(t)
			if err != nil {
				return nil, err
			}
			if d, err = override(d, opts.Settings); err != nil {
				return nil, err
			}
			deps = append(deps, d)
		}
	}

	// A request no worker can hold fails before any simulation, naming it.
	for _, sh := range shapes {
		if err := central.Fits(sh); err != nil {
			return nil, fmt.Errorf("predict: ISL %d OSL %d: %w", sh.ISL, sh.OSL, err)
		}
	}
	type job struct{ shape, load, dep int }
	var jobs []job
	for si := range shapes {
		for li := range loads {
			for di := range deps {
				jobs = append(jobs, job{si, li, di})
			}
		}
	}
	out := make([]*sim.Result, len(jobs))
	errs := make([]error, len(jobs))
	var mu sync.Mutex
	done := 0
	err = parallel.ForEach(ctx, len(jobs), runtime.GOMAXPROCS(0), func(i int) {
		j := jobs[i]
		l := loads[j.load]
		run := shapes[j.shape]
		run.Load, run.NumPrompts = l, prompts[j.load]
		out[i], errs[i] = deps[j.dep].SimulateWith(ctx, run, Runner(pointMode(mode, l), opts.Steady))
		if opts.Progress != nil {
			mu.Lock()
			done++
			opts.Progress(done, len(jobs))
			mu.Unlock()
		}
	})
	if err != nil {
		return nil, err
	}
	for i, err := range errs {
		if err != nil {
			j := jobs[i]
			return nil, fmt.Errorf("predict: ISL %d OSL %d at %s: %w", shapes[j.shape].ISL, shapes[j.shape].OSL, loads[j.load], err)
		}
	}

	var preds []Prediction
	stride := len(deps)
	for si, sh := range shapes {
		p := Prediction{
			GPU:                  central.GPU.Name,
			Model:                central.LLM.Name,
			Engine:               central.Engine.Label,
			Topology:             opts.Target.Topology.String(),
			Disaggregated:        opts.Target.Topology.Disaggregated(),
			GPUs:                 opts.Target.Topology.GPUs(),
			ISL:                  sh.ISL,
			OSL:                  sh.OSL,
			Derived:              central.Derived,
			Warnings:             extrapolationWarnings(prof, central, sh),
			Mode:                 mode,
			Settings:             SettingsOf(central),
			EngineFlags:          central.Flags,
			EngineDefaults:       central.DefaultsRule,
			Router:               RouterOf(central),
			RouterFrom:           routerFrom(central),
			Frontend:             central.FrontendFrom,
			Transfer:             central.TransferFrom,
			KVLink:               opts.Target.KVLink,
			FrontendStatedMS:     FrontendMS(opts.Target.Frontend),
			RouterChosenByFit:    RouterOf(central) != "" && central.RouterChoice != nil,
			RouterAsked:          RouterOf(central) != "" && central.RouterAsked,
			MaxModelLen:          central.MaxModelLen,
			GPUMemoryUtilization: central.Settings.GPUMemoryUtilization,
			KVFitTokens:          KVFit(central),
			PrefixHitRate:        w.PrefixHitRate,
			Sharing:              w.Sharing,
			PrefixCaching:        CachesPrefixes(central),
			PrefixRouter:         prefixRouter(central),
			Dataset:              w.Dataset,
			ExactOutput:          w.ExactOutput,
		}
		p.Warnings = append(p.Warnings, sharingWarnings(central, opts)...)
		if central.RouterAsked && behindRouter(central) < 2 && prefixRouter(central) != string(sim.PrefixAware) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("router %s asked for, but %s has one worker behind its router: it changes nothing", opts.Target.Router, opts.Target.Topology))
		}
		for li, l := range loads {
			base := (si*len(loads) + li) * stride
			r := out[base]
			pt := Point{Load: l, Mode: r.Mode, NumPrompts: r.Completed, Steady: r.Steady, GPUs: p.GPUs, Metrics: r.Metrics, Pools: r.Pools, PrefixHitRate: r.PrefixHitRate}
			pt.OutputPerGPU = r.Metrics[model.OutputThroughput] / float64(p.GPUs)
			if stride == 3 {
				pt.Lo, pt.Hi = band(out[base+1], out[base+2])
			}
			p.Points = append(p.Points, pt)
		}
		p.Knee = findKnee(p.Points)
		p.Blowup = findBlowup(p.Points)
		p.Bottleneck = findBottleneck(p.Points)
		preds = append(preds, p)
	}
	return preds, nil
}

// override applies engine-setting overrides to d's pools, their KV caches
// resized for the new limits as the engine sizes them.
func override(d calibrate.Deployment, settings []EngineSettings) (calibrate.Deployment, error) {
	for _, st := range settings {
		role := st.Role
		if role == "replicas" {
			role = calibrate.RoleAggregated
		}
		var err error
		if d, err = d.WithBatchLimits(role, st.MaxNumSeqs, st.MaxNumBatchedTokens); err != nil {
			return d, fmt.Errorf("predict: %w", err)
		}
	}
	return d, nil
}

// calibratedShape is w at the lengths a series was run with: the requested
// lengths where the source states them (what a user would ask for; Dynamo's
// 1000-token outputs, for one, stopped early at about 850), else the means.
func calibratedShape(w workload.Workload, s calibrate.SeriesInfo) workload.Workload {
	sh := w
	sh.ISL, sh.OSL = s.ISLMax, s.OSLMax
	if sh.ISL <= 0 {
		sh.ISL = int(math.Round(s.ISL))
	}
	if sh.OSL <= 0 {
		sh.OSL = int(math.Round(s.OSL))
	}
	return sh
}

// DefaultNumPrompts is n when positive, else the default length of a run
// in mode m at load l. Replay: max(400, 20 × concurrency) for a closed
// loop, 20 s of arrivals (at least 400) for an open loop, 400 for a burst,
// as a benchmark would send. Steady state (the measured requests of the
// first run, which sim.Converge doubles while it is not stable): max(10,000,
// 20 × concurrency), or five minutes of arrivals (at least 10,000): a p99
// rests on a hundred requests in its tail, and rare queueing bursts that
// set a p99 need that many to show up at their true rate.
func DefaultNumPrompts(n int, m sim.Mode, l model.Load) int {
	if n > 0 {
		return n
	}
	floor, span := ReplayMinPrompts, ReplaySeconds
	if m == sim.SteadyState {
		floor, span = SteadyMinPrompts, SteadySeconds
	}
	switch l.Kind {
	case model.ClosedLoop:
		return max(floor, PromptsPerClient*l.Concurrency)
	case model.OpenLoop:
		return max(floor, int(math.Ceil(span*l.Rate)))
	default:
		return ReplayMinPrompts
	}
}

// The terms of DefaultNumPrompts: requests per closed-loop client, and
// per mode the seconds of open-loop arrivals and the least requests.
const (
	PromptsPerClient = 20
	SteadySeconds    = 300.0
	SteadyMinPrompts = 10_000
	ReplaySeconds    = 20.0
	ReplayMinPrompts = 400
)

// pointMode is the mode a load point runs in: a burst has no steady state.
func pointMode(m sim.Mode, l model.Load) sim.Mode {
	if l.Kind == model.Burst {
		return sim.BenchmarkReplay
	}
	return m
}

// Runner is the simulator of mode m: sim.Run for a replay, sim.Converge
// with opts for steady state.
func Runner(m sim.Mode, opts sim.SteadyOptions) func(context.Context, sim.Config) (*sim.Result, error) {
	if m != sim.SteadyState {
		return func(ctx context.Context, cfg sim.Config) (*sim.Result, error) {
			cfg.Mode = sim.BenchmarkReplay
			return sim.Run(ctx, cfg)
		}
	}
	return func(ctx context.Context, cfg sim.Config) (*sim.Result, error) {
		return sim.Converge(ctx, cfg, opts, sim.Run)
	}
}

// band orders the two shifted runs into lower and upper bounds of the
// metrics a planner reads first.
func band(a, b *sim.Result) (lo, hi map[string]float64) {
	lo, hi = map[string]float64{}, map[string]float64{}
	for _, m := range []string{model.RequestThroughput, model.OutputThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL} {
		x, y := a.Metrics[m], b.Metrics[m]
		lo[m], hi[m] = math.Min(x, y), math.Max(x, y)
	}
	return lo, hi
}

func findKnee(pts []Point) Knee {
	var k Knee
	for _, p := range pts {
		k.MaxRequestThroughput = math.Max(k.MaxRequestThroughput, p.Metrics[model.RequestThroughput])
		k.MaxOutputThroughput = math.Max(k.MaxOutputThroughput, p.Metrics[model.OutputThroughput])
	}
	for _, p := range pts {
		if v := p.Metrics[model.RequestThroughput]; v >= KneeShare*k.MaxRequestThroughput {
			k.Load, k.RequestThroughput = p.Load, v
			break
		}
	}
	return k
}

func findBlowup(pts []Point) Blowup {
	if len(pts) == 0 {
		return Blowup{}
	}
	b := Blowup{BaseTTFTms: pts[0].Metrics[model.MeanTTFT]}
	for _, p := range pts[1:] {
		if v := p.Metrics[model.MeanTTFT]; v >= BlowupFactor*b.BaseTTFTms {
			b.Found, b.Load, b.MeanTTFTms = true, p.Load, v
			break
		}
	}
	return b
}

// findBottleneck reads the pools at the highest load. Requests pile up in
// front of what limits throughput, so the pool with the longest queue is
// the bottleneck (its KV cache, when that was full); with no queue anywhere
// the busiest pool is named. Busy time alone misleads for decode: a worker
// decoding one request is as "busy" as one decoding a full batch.
func findBottleneck(pts []Point) Bottleneck {
	b := Bottleneck{Resource: "none", Utilisation: map[string]float64{}, KVUsage: map[string]float64{}}
	if len(pts) == 0 {
		return b
	}
	last := pts[len(pts)-1]
	var busiest, queued sim.PoolStats
	for _, ps := range last.Pools {
		b.Utilisation[ps.Name] = round3(ps.Utilisation)
		b.KVUsage[ps.Name] = round3(ps.MaxKVUsage)
		if ps.Utilisation > busiest.Utilisation {
			busiest = ps
		}
		// A queue marks a bottleneck only in front of a pool that is busy
		// too: requests waiting for KV blocks behind an idle decode worker,
		// or a prompt or two waiting for a mostly idle prefill pool, do not.
		if ps.MeanQueue > queued.MeanQueue && ps.Utilisation >= 0.7 {
			queued = ps
		}
	}
	// what names a pool in words; name as a resource.
	what := func(pool string) string {
		if pool == sim.FrontendPool {
			return "API servers"
		}
		return pool
	}
	name := func(pool string) string {
		if pool == "replicas" || pool == sim.FrontendPool {
			return what(pool)
		}
		return pool + " pool"
	}
	switch {
	case queued.MeanQueue >= 1 && queued.MaxKVUsage >= 0.95:
		b.Resource = "KV capacity"
		b.Why = fmt.Sprintf("%s KV cache reached %.0f%% with %.1f requests waiting on average", queued.Name, 100*queued.MaxKVUsage, queued.MeanQueue)
	case queued.MeanQueue >= 1:
		b.Resource = name(queued.Name)
		b.Why = fmt.Sprintf("%.1f requests wait for the %s on average at the highest load (busy %.0f%%)", queued.MeanQueue, what(queued.Name), 100*queued.Utilisation)
	case busiest.Name == "":
		b.Why = "no pool was busy"
	case busiest.Utilisation < 0.5:
		b.Why = fmt.Sprintf("no queue and no pool above 50%% busy at the highest load (busiest: %s at %.0f%%): the offered load is the limit", what(busiest.Name), 100*busiest.Utilisation)
	default:
		b.Resource = name(busiest.Name)
		b.Why = fmt.Sprintf("no queue; %s busy %.0f%% of the time at the highest load, mean batch %.1f", what(busiest.Name), 100*busiest.Utilisation, busiest.MeanBatch)
	}
	return b
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// extrapolationWarnings says when a shape lies outside what the engine was
// calibrated on, so a prediction there leans on physics alone.
func extrapolationWarnings(prof *calibrate.Profile, d calibrate.Deployment, sh workload.Workload) []string {
	var w []string
	if span, what := sh.Span(); d.MaxModelLen > 0 && span > d.MaxModelLen {
		w = append(w, fmt.Sprintf("%s = %d exceeds the calibrated engine's max-model-len %d: the prediction extrapolates", what, span, d.MaxModelLen))
	}
	series := prof.Series(d.GPU.Name, d.LLM.Name, d.Engine.Label)
	if len(series) == 0 {
		return w
	}
	minI, maxI, minO, maxO := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		minI, maxI = math.Min(minI, s.ISL), math.Max(maxI, s.ISL)
		minO, maxO = math.Min(minO, s.OSL), math.Max(maxO, s.OSL)
	}
	if float64(sh.ISL) < minI/4 || float64(sh.ISL) > maxI*4 || float64(sh.OSL) < minO/4 || float64(sh.OSL) > maxO*4 {
		w = append(w, fmt.Sprintf("ISL %d / OSL %d is far outside the calibrated range (ISL %.0f–%.0f, OSL %.0f–%.0f): the prediction extrapolates",
			sh.ISL, sh.OSL, minI, maxI, minO, maxO))
	}
	return w
}

// behindRouter is the number of workers the deployment's router spreads
// requests over: replicas, or decode workers when disaggregated.
func behindRouter(d calibrate.Deployment) int {
	if d.Topology.Disaggregated() {
		return d.Topology.Decode.Count
	}
	return d.Topology.Replicas.Count
}

// sharingWarnings say when a workload's shared prefixes are not served
// by a simulated prefix cache.
func sharingWarnings(d calibrate.Deployment, opts Options) []string {
	switch {
	case !opts.Workload.Sharing.On() || opts.Workload.PrefixHitRate > 0:
		return nil
	case !CachesPrefixes(d):
		return []string{fmt.Sprintf("prefix caching is off (%s's default, or the stated setting): shared prefixes are prefilled again for every request", d.Engine.Label)}
	}
	return nil
}

// prefixRouter is the router that decides which cache a prompt meets:
// the prefill router of a disaggregated deployment.
func prefixRouter(d calibrate.Deployment) string {
	if d.Topology.Disaggregated() {
		return string(d.Config.PrefillRouter)
	}
	return string(d.Config.Router)
}

// CachesPrefixes says whether d's prompt-computing workers (replicas, or
// a disaggregated deployment's prefill workers) keep prefix caches.
func CachesPrefixes(d calibrate.Deployment) bool {
	if d.Topology.Disaggregated() {
		return d.Config.Prefill.PrefixCaching
	}
	return d.Config.Replicas.PrefixCaching
}

// RouterOf is the router a deployment with several replicas or decode
// workers behind it was simulated with, or "" for one.
func RouterOf(d calibrate.Deployment) string {
	if behindRouter(d) < 2 {
		return ""
	}
	return string(d.Config.Router)
}

// routerFrom says where the router came from.
func routerFrom(d calibrate.Deployment) string {
	if behindRouter(d) < 2 {
		return ""
	}
	return d.RouterFrom
}

// FrontendMS is a stated frontend latency (calibrate.Target.Frontend, in
// seconds) in ms to 0.1 µs, so the flag's value comes back as given;
// nil when not stated.
func FrontendMS(s *float64) *float64 {
	if s == nil {
		return nil
	}
	ms := math.Round(1e7**s) / 1e4
	return &ms
}
