package calibrate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

var (
	// ErrNoGPU is returned by Resolve when no GPU is named, and by
	// Configure for a Target without one.
	ErrNoGPU = errors.New("calibrate: no GPU named")
	// ErrNoModel is Configure's error for a Target without a model.
	ErrNoModel = errors.New("calibrate: no model named")
)

// Resolve turns user-given names into a Target: the GPU's catalog name
// (required), the model's (defaulting to the only one calibrated for the
// GPU) and the engine label ResolveEngine picks for the topology. Names are
// resolved here, once; everything downstream compares catalog names.
func (p *Profile) Resolve(gpuName, modelName, engine string, topo model.Topology) (Target, error) {
	if gpuName == "" {
		return Target{}, fmt.Errorf("%w (known: %s)", ErrNoGPU, GPUList())
	}
	g, err := model.LookupGPU(gpuName)
	if err != nil {
		return Target{}, fmt.Errorf("calibrate: %w", err)
	}
	if modelName == "" {
		models := p.Models(g.Name)
		switch len(models) {
		case 1:
			modelName = models[0]
		case 0:
			return Target{}, fmt.Errorf("calibrate: no model is calibrated for %s: name one (known: %s)", g.Name, LLMList())
		default:
			return Target{}, fmt.Errorf("calibrate: several models are calibrated for %s: name one of %s", g.Name, strings.Join(models, ", "))
		}
	}
	m, err := model.LookupLLM(modelName)
	if err != nil {
		return Target{}, fmt.Errorf("calibrate: %w", err)
	}
	eng, err := p.ResolveEngine(g.Name, m.Name, engine, topo.Disaggregated())
	if err != nil {
		return Target{}, err
	}
	return Target{GPU: g, LLM: m, Engine: eng, Topology: topo}, nil
}

// GPUList names the catalog's GPUs, for messages.
func GPUList() string {
	var names []string
	for _, g := range model.GPUs() {
		names = append(names, g.Name)
	}
	return strings.Join(names, ", ")
}

// LLMList names the catalog's models (short names), for messages.
func LLMList() string {
	var names []string
	for _, m := range model.LLMs() {
		names = append(names, model.ShortName(m.Name))
	}
	return strings.Join(names, ", ")
}

// Override replaces what a record states about its deployment; empty
// fields keep the record's.
type Override struct {
	GPU, Model, Engine string
	Topology           model.Topology
	Router             string        // Target.Router: the load balancer, over what the records state
	DPAttention        int           // Target.DPAttention: SGLang's attention groups per worker, over what the records state
	Frontend           *float64      // Target.Frontend: the frontend latency, stated over the calibrated or carried one
	KVLink             string        // Target.KVLink: the link KV transfers cross, over the one the deployment's size implies
	Stated             engine.Stated // Target.Stated: engine settings stated over the record's
}

// RecordTarget is the deployment a measured record ran on, as the profile
// can price it, with notes on what was assumed:
//   - GPU and model as the record (or o) states them; a source naming
//     neither is priced as the pair the calibration assumed for it;
//   - its topology, one GPU (1xTP1) when unstated;
//   - its engine label when the profile calibrated it for this GPU and
//     model, else the newest calibrated version of its family, else the
//     profile's default engine for the topology (the notes say which);
//   - where its workers ran (placement), how it sized their KV cache and
//     its batch limits (applyRecord), unless o asks for another
//     topology (or, for those settings, another GPU or model).
func (p *Profile) RecordTarget(r *results.Record, o Override) (Target, []string, error) {
	var notes []string
	gpu, llm := first(o.GPU, r.System.GPU), first(o.Model, r.System.Model)
	assumed := false
	if gpu == "" || llm == "" {
		a := p.assumedFor(r)
		if a == nil {
			return Target{}, nil, fmt.Errorf("calibrate: record %s: no GPU or no model stated, and the profile assumes none for its source", r.ID)
		}
		gpu, llm, assumed = a.GPU, a.Model, true
		notes = append(notes, fmt.Sprintf("GPU and model not stated: simulated as %s / %s, the pair the calibration assumed", gpu, model.ShortName(llm)))
	}
	topo := r.System.Topology
	if o.Topology.GPUs() > 0 {
		topo = o.Topology
	}
	topo, note := defaultTopology(topo)
	if note != "" {
		notes = append(notes, note)
	}
	label := first(o.Engine, r.System.Engine)
	g, err1 := model.LookupGPU(gpu)
	m, err2 := model.LookupLLM(llm)
	if err1 == nil && err2 == nil && label != "" {
		if _, err := p.ResolveEngine(g.Name, m.Name, label, topo.Disaggregated()); err != nil {
			fam := engine.Family(label)
			resolved, err := p.ResolveEngine(g.Name, m.Name, fam, topo.Disaggregated())
			if err != nil || resolved.Family != fam {
				resolved, err = p.ResolveEngine(g.Name, m.Name, "", topo.Disaggregated())
			}
			if err != nil {
				return Target{}, notes, err
			}
			notes = append(notes, fmt.Sprintf("engine %s not calibrated for %s / %s: simulated with %s", label, g.Name, model.ShortName(m.Name), resolved.Label))
			label = resolved.Label
		}
	}
	t, err := p.Resolve(gpu, llm, label, topo)
	if err != nil {
		return Target{}, notes, err
	}
	t.Assumed, t.Router, t.DPAttention, t.Frontend, t.Stated, t.KVLink = assumed, o.Router, o.DPAttention, o.Frontend, o.Stated, o.KVLink
	if o.Topology.GPUs() == 0 {
		t.Nodes = recordNodes(r) // where the record's workers ran, unless another topology is asked for
		if o.GPU == "" && o.Model == "" {
			rs := recordSettings(label, r, topo) // the KV cache and batch limits the record's workers had, over the simulated engine's defaults
			t.Record = &rs
		}
	}
	return t, notes, nil
}

// assumedFor finds the GPU and model a profile assumed for a record whose
// source does not say: the group fitted on the record, else a group fitted
// on other records of the same source document.
func (p *Profile) assumedFor(r *results.Record) *Assumption {
	doc := docOf(r.ID)
	var sameDoc *Assumption
	for i := range p.Groups {
		g := &p.Groups[i]
		if g.Assumed == nil {
			continue
		}
		if slices.Contains(g.Records, r.ID) {
			return g.Assumed
		}
		if sameDoc == nil && slices.ContainsFunc(g.Records, func(id string) bool { return docOf(id) == doc }) {
			sameDoc = g.Assumed
		}
	}
	return sameDoc
}

// docOf is the document part of a record ID ("002" of "002:426").
func docOf(id string) string {
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		return id[:i]
	}
	return id
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
