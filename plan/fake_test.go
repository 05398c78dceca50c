package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// fakeProfile configures any GPU and model from the roofline prior with
// Dynamo-like settings (disaggregated) or vLLM defaults (aggregated), so the
// search can be tested without a fitted profile. Engines lists the engines
// it knows; empty means "vllm-fake" and "dynamo-fake".
type fakeProfile struct {
	engines  []string
	fitted   map[string]bool // GPUs whose costs count as fitted
	failGPUs map[string]bool // GPUs Configure refuses
}

func (f *fakeProfile) ResolveEngine(gpu, llm, prefix string, disagg bool) (engine.ID, error) {
	have := f.engines
	if len(have) == 0 {
		have = []string{"dynamo-fake", "vllm-fake"}
	}
	want := strings.ToLower(prefix)
	if want == "" {
		want = "vllm"
		if disagg {
			want = "dynamo"
		}
	}
	for _, e := range have {
		if strings.HasPrefix(e, want) {
			return engine.Parse(e), nil
		}
	}
	return engine.ID{}, fmt.Errorf("calibrate: no engine matching %q for %s", prefix, gpu)
}

func (f *fakeProfile) Configure(t calibrate.Target) (calibrate.Deployment, error) {
	if err := t.Topology.Validate(); err != nil {
		return calibrate.Deployment{}, err
	}
	g, m := t.GPU, t.LLM
	if f.failGPUs[g.Name] {
		return calibrate.Deployment{}, fmt.Errorf("calibrate: cannot configure %s", g.Name)
	}
	source := calibrate.SourcePrior
	if f.fitted[g.Name] {
		source = calibrate.SourceFitted
	}
	d := calibrate.Deployment{GPU: g, LLM: m, Engine: t.Engine, MaxModelLen: 4096}
	build := func(role string, p model.Pool, eager bool, budget, graphMax int) (sim.PoolConfig, error) {
		mem, err := model.WorkerMemory(g, m, p, model.MemoryOptions{})
		if err != nil {
			return sim.PoolConfig{}, err
		}
		var graphs []int
		if !eager {
			graphs = engine.GraphSizes(graphMax)
		}
		d.Derived = append(d.Derived, calibrate.Derivation{Role: role, Pool: p.String(), Source: source, From: "fake", RelSigma: 0.1})
		var cost sim.CostModel = model.NewStepCost(g, m, p, model.PriorCoeffs(eager), graphs)
		if t.Band != 0 {
			cost = scaledCost{cost, math.Exp(0.1 * t.Band)}
		}
		return sim.PoolConfig{Workers: p.Count, Cost: cost,
			KVCapacity: mem.KVTokens, BlockSize: 16, MaxBatchedTokens: budget,
			MaxNumSeqs: 256}, nil
	}
	var err error
	if t.Topology.Disaggregated() {
		if d.Config.Prefill, err = build("prefill", t.Topology.Prefill, true, 4096, 0); err != nil {
			return d, err
		}
		if d.Config.Decode, err = build("decode", t.Topology.Decode, false, 4096, 128); err != nil {
			return d, err
		}
		d.Config.Transfer = sim.Transfer{Latency: 0.002, PerToken: m.KVBytesPerToken(t.Topology.Prefill.TP, 2) / 25e9}
		d.Config.PrefillRouter = sim.SharedQueue
	} else if d.Config.Replicas, err = build("aggregated", t.Topology.Replicas, false, 8192, 512); err != nil {
		return d, err
	}
	d.Config.Router = sim.RoundRobin
	return d, nil
}

// scaledCost is a cost model with every step f times slower, as a cost
// band moves a profile's costs.
type scaledCost struct {
	c sim.CostModel
	f float64
}

func (s scaledCost) StepTime(st model.Step) float64 { return s.f * s.c.StepTime(st) }

func (s scaledCost) DecodeAffine(n int) (float64, float64) {
	b, k := s.c.DecodeAffine(n)
	return s.f * b, s.f * k
}
