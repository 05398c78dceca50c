package calibrate

import (
	"cmp"
	"fmt"
	"math"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// pricing is what turns a topology into simulator pools: the hardware,
// the engine's settings, each pool's step-cost coefficients, the KV
// transfer and the frontend latency. Both the fit (with trial parameters)
// and Configure (with a profile's) price deployments through build.
type pricing struct {
	gpu      model.GPU
	llm      model.LLM
	engine   engine.ID // the release; settings.Generation says which engine generation it ran
	settings engine.Settings
	// coeffs gives a role's coefficients for a pool shape.
	coeffs   func(role string, pool model.Pool) (model.Coeffs, error)
	transfer sim.Transfer
	frontend float64 // seconds per request outside the engine; aggregated deployments only
	service  float64 // of which the API server's serial work per request (sim.Config.FrontendService)
	// kept, when set, keeps each worker shape's roofline and memory for
	// the next pricing at other coefficients (a fit's evaluations).
	kept *keptShapes
}

// keptShapes are worker rooflines (without coefficients) and memory of
// one GPU, model and settings, by role and shape.
type keptShapes struct {
	costs map[workerShape]model.StepCost
	mem   map[workerShape]model.Memory
}

func newKeptShapes() *keptShapes {
	return &keptShapes{costs: map[workerShape]model.StepCost{}, mem: map[workerShape]model.Memory{}}
}

// stepCost is NewStepCost of a role's workers of shape pl at c.
func (pr pricing) stepCost(role string, pl model.Pool, c model.Coeffs) model.StepCost {
	return pr.kept.stepCost(pr.gpu, pr.llm, role, pl, c, pr.settings.CUDAGraphs(role == RolePrefill))
}

// stepCost is NewStepCost(gpu, llm, pl, c, graphs), its roofline (the
// same at any coefficients) built once per role and shape; k nil builds
// it anew.
func (k *keptShapes) stepCost(gpu model.GPU, llm model.LLM, role string, pl model.Pool, c model.Coeffs, graphs []int) model.StepCost {
	if k == nil {
		return model.NewStepCost(gpu, llm, pl, c, graphs)
	}
	sc, ok := k.costs[workerShape{role, pl}]
	if !ok {
		sc = model.NewStepCost(gpu, llm, pl, model.Coeffs{}, graphs)
		k.costs[workerShape{role, pl}] = sc
	}
	sc.Coeffs = c
	return sc
}

// memory is WorkerMemory of workers of shape pl.
func (pr pricing) memory(role string, pl model.Pool) (model.Memory, error) {
	if pr.kept == nil {
		return model.WorkerMemory(pr.gpu, pr.llm, pl, memoryOptions(pr.engine, pr.settings))
	}
	if m, ok := pr.kept.mem[workerShape{role, pl}]; ok {
		return m, nil
	}
	m, err := model.WorkerMemory(pr.gpu, pr.llm, pl, memoryOptions(pr.engine, pr.settings))
	if err == nil {
		pr.kept.mem[workerShape{role, pl}] = m
	}
	return m, err
}

// memoryOptions are what sizes a worker's KV cache under these settings:
// the engine's memory share and reserve, a stated KV cache, the batch
// limits vLLM's profiling run takes its peak from, and what release e
// (on the generation s states) keeps out beside them
// (engine.MemoryProfile): the one place the release's figures are read,
// so a profile written before them takes them too.
func memoryOptions(e engine.ID, s engine.Settings) model.MemoryOptions {
	const gib = 1 << 30
	ran, _ := e.AsGeneration(s.Generation)
	sampler, nonTorch, nonTorchTP := engine.MemoryProfile(ran)
	return model.MemoryOptions{Utilization: s.GPUMemoryUtilization, ReserveGB: s.ReserveGB, KVCacheGiB: s.KVCacheGiB,
		MaxNumSeqs: s.MaxNumSeqs, MaxBatchedTokens: s.MaxNumBatchedTokens, WindowPool: s.WindowPool,
		SamplerBytes: sampler, NonTorchGB: nonTorch * gib / 1e9, NonTorchTPGB: nonTorchTP * gib / 1e9}
}

// MemoryOptionsFor are the KV-cache sizing options an engine runs with on
// a GPU and model, by default or as st states them: plan screens TP
// degrees with them, so that a shape the screen keeps is one Configure
// can size.
func MemoryOptionsFor(e engine.ID, g model.GPU, m model.LLM, st engine.Stated) model.MemoryOptions {
	s := defaultSettings(e, g, cmp.Or(st.MaxModelLen, m.MaxContext))
	s.Apply(st)
	o := memoryOptions(e, s)
	o.KVBytes = engine.KVCacheBytes(st.KVCacheDtype)
	return o
}

// WithBatchLimits is d with one role's workers (RoleAggregated,
// RolePrefill or RoleDecode) running at most seqs sequences and tokens
// tokens per step (0 keeps a limit): the settings plan searches and
// predict's overrides set. Their KV cache is resized too, since vLLM
// sizes it less its profiling run's peak, which these limits set.
func (d Deployment) WithBatchLimits(role string, seqs, tokens int) (Deployment, error) {
	var p *sim.PoolConfig
	var pl model.Pool
	switch role {
	case RoleAggregated:
		p, pl = &d.Config.Replicas, d.Topology.Replicas
	case RolePrefill:
		p, pl = &d.Config.Prefill, d.Topology.Prefill
	case RoleDecode:
		p, pl = &d.Config.Decode, d.Topology.Decode
	default:
		return d, fmt.Errorf("calibrate: unknown role %q", role)
	}
	if pl.IsZero() || (seqs <= 0 && tokens <= 0) {
		return d, nil
	}
	s := d.Settings
	s.MaxNumSeqs = cmp.Or(seqs, p.MaxNumSeqs*pl.Microbatches())
	s.MaxNumBatchedTokens = cmp.Or(tokens, p.MaxBatchedTokens)
	m, err := model.WorkerMemory(d.GPU, d.LLM, pl, memoryOptions(d.Engine, s))
	if err != nil {
		return d, fmt.Errorf("calibrate: %s workers at max-num-seqs %d, max-num-batched-tokens %d: %w", role, s.MaxNumSeqs, s.MaxNumBatchedTokens, err)
	}
	mb := pl.Microbatches()
	p.KVCapacity = m.KVTokens / mb
	p.MaxNumSeqs = (s.MaxNumSeqs + mb - 1) / mb
	p.MaxBatchedTokens = s.MaxNumBatchedTokens
	return d, nil
}

// pool is the simulator pool of one role and shape.
func (pr pricing) pool(role string, pl model.Pool) (sim.PoolConfig, error) {
	c, err := pr.coeffs(role, pl)
	if err != nil {
		return sim.PoolConfig{}, err
	}
	s := pr.settings
	m, err := pr.memory(role, pl)
	if err != nil {
		return sim.PoolConfig{}, fmt.Errorf("calibrate: %w", err)
	}
	// A pipeline of PP stages keeps PP microbatches in flight: it is
	// simulated as PP virtual workers per worker, each with the whole
	// pipeline's step latency and 1/PP of its KV cache and sequence cap
	// (see model.Pool.Microbatches).
	mb := pl.Microbatches()
	seqs := s.SeqCap()
	if mb > 1 {
		seqs = (seqs + mb - 1) / mb
	}
	return sim.PoolConfig{
		Workers:          workers(pl),
		Cost:             pr.stepCost(role, pl, c),
		KVCapacity:       m.KVTokens / mb,
		BlockSize:        s.Block(),
		MaxNumSeqs:       seqs,
		MaxBatchedTokens: s.Budget(),
		// A prefill worker streams nothing: its output is the KV transfer.
		DelayedOutput: s.DelayedOutput && role != RolePrefill,
		// A decode worker of a disaggregated deployment has no prompts to run first.
		PrefillFirst:  s.PrefillFirst && role == RoleAggregated,
		ReserveOutput: s.ReserveOutput && role == RoleAggregated,
		WindowTokens:  windowTokens(pr.llm, s),
		// A decode worker receives whole prompts' KV: only the workers that
		// compute prompts keep a prefix cache.
		PrefixCaching: s.PrefixCaching == engine.PrefixOn && role != RoleDecode,
	}, nil
}

// windowTokens is what a running request's sliding-window layers hold in
// the one block pool of an engine without a window pool of its own (vLLM
// V1's hybrid KV cache manager): the blocks over its last window, at most
// the window and a block (a window that starts mid-block spans one more),
// in tokens of the full-attention cache's per-token size. TensorRT-LLM
// keeps a pool per window size and splits the memory between them by a
// static rule its documentation does not give; it is priced as vLLM's
// one pool, an assumption.
func windowTokens(m model.LLM, s engine.Settings) int {
	share := m.WindowedKVShare()
	if share == 0 || s.WindowPool > 0 {
		return 0
	}
	block := s.Block()
	return int(math.Ceil(share * float64(m.SlidingWindow+block)))
}

// build is the one place a deployment becomes a simulator configuration:
// pools, routers, KV transfer and frontend latency. The workload is added
// by Deployment.WithWorkload.
func (pr pricing) build(topo model.Topology) (sim.Config, error) {
	s := pr.settings
	var cfg sim.Config
	var err error
	if topo.Disaggregated() {
		if cfg.Prefill, err = pr.pool(RolePrefill, topo.Prefill); err != nil {
			return sim.Config{}, err
		}
		if cfg.Decode, err = pr.pool(RoleDecode, topo.Decode); err != nil {
			return sim.Config{}, err
		}
		cfg.PrefillRouter = sim.Routing(orDefaultS(s.PrefillRouter, string(sim.SharedQueue)))
		cfg.Transfer = pr.transfer
		// The engine's frontend prior where nothing was fitted (a fitted
		// deployment's is inside its prefill and transfer: 0); its serial
		// work is not queued, as the front door's servers are not known.
		cfg.FrontendLatency = pr.frontend
	} else {
		if cfg.Replicas, err = pr.pool(RoleAggregated, topo.Replicas); err != nil {
			return sim.Config{}, err
		}
		cfg.FrontendLatency = pr.frontend
		// Each replica is a server with its own API server process.
		if pr.service > 0 {
			// The serial work is part of the latency: never more than it.
			cfg.FrontendService, cfg.FrontendServers = math.Min(pr.service, pr.frontend), topo.Replicas.Count
		}
	}
	cfg.Router = router(s, topo)
	if topo.Disaggregated() && sim.Routing(s.Router) == sim.PrefixAware {
		// A prefix-aware gateway picks the prefill worker by its cache too.
		cfg.PrefillRouter = sim.PrefixAware
	}
	return cfg, nil
}

// workers is how many simulator workers a pool of shape pl runs: PP
// virtual workers per worker, one per microbatch in flight (see pool).
func workers(pl model.Pool) int { return pl.Count * pl.Microbatches() }

// router is the balancer in front of topo's replicas or decode workers:
// the settings' (round-robin by default), and round-robin where there is
// one replica or decode worker: no balancer chooses among a pipeline's
// microbatches; the engine fills them in turn.
func router(s engine.Settings, topo model.Topology) sim.Routing {
	one := topo.Replicas.Count == 1
	if topo.Disaggregated() {
		one = topo.Decode.Count == 1
	}
	if one {
		return sim.RoundRobin
	}
	return sim.Routing(orDefaultS(s.Router, string(sim.RoundRobin)))
}

// Scaled is d with topo's worker counts (same roles and worker shapes as
// d.Topology): each pool's workers, the router they run behind and the
// pools its derivations name, as Configure would build them for topo. A
// search configures one worker of a shape and tries it at many counts.
func (d Deployment) Scaled(topo model.Topology) Deployment {
	pools := map[string]model.Pool{RoleAggregated: topo.Replicas}
	if topo.Disaggregated() {
		pools = map[string]model.Pool{RolePrefill: topo.Prefill, RoleDecode: topo.Decode}
		d.Config.Prefill.Workers = workers(topo.Prefill)
		d.Config.Decode.Workers = workers(topo.Decode)
		if d.pathBand > 0 {
			// Another count may cross another path (model.KVTransferPath).
			// Configure checked the link; plan keeps a link within a
			// server to one server's counts.
			path, _ := kvPath(d.GPU, d.kvLink, topo)
			tr := priorTransfer(path, d.LLM, topo)
			d.Config.Transfer = sim.Transfer{Latency: tr.LatencyS * d.pathBand, PerToken: tr.PerTokenS * d.pathBand}
			d.TransferFrom = transferNote(tr, sigmaPrior, path, d.LLM, topo, false)
		}
	} else {
		d.Config.Replicas.Workers = workers(topo.Replicas)
		if d.Config.FrontendService > 0 {
			d.Config.FrontendServers = topo.Replicas.Count
		}
	}
	d.Config.Router = router(d.Settings, topo)
	d.Topology = topo
	d.Derived = append([]Derivation(nil), d.Derived...)
	for i, dv := range d.Derived {
		if p, ok := pools[dv.Role]; ok {
			d.Derived[i].Pool = p.String()
		}
	}
	return d
}
