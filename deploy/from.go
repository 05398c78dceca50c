package deploy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plan"
	"github.com/capsim/capsim/predict"
)

// FromPlan turns a plan's recommendations into specs, in rank order;
// profile is the calibration file behind the plan ("" the embedded one).
func FromPlan(r *plan.Result, profile string) []Spec {
	var specs []Spec
	for _, rec := range r.Recommendations {
		s := Spec{
			Rank: rec.Rank, Model: r.Model, GPU: rec.GPU, Engine: rec.Engine, Topology: rec.Topology, Pools: rec.Settings,
			MaxModelLen: rec.MaxModelLen, GPUMemoryUtilization: rec.GPUMemoryUtilization, KVFit: rec.KVFitTokens, Router: rec.Router,
			FrontendMS: r.FrontendMS, KVLink: r.KVLink,
			ISL: r.ISL, OSL: r.OSL, Load: r.Load, PrefixHitRate: r.PrefixHitRate, Dataset: r.Dataset, Mode: string(r.Mode), Confidence: r.Confidence,
			Metrics: rec.Metrics, Headroom: headroomLine(rec), Costs: costsLine(rec.Derived), Profile: profile,
		}
		for i, v := range rec.SLOValues {
			vd := Verdict{SLO: v.SLO, LimitMs: v.Limit, ValueMs: v.Value, Met: v.Met}
			if i < len(rec.Central) {
				vd.Central = rec.Central[i].Value
			}
			s.Verdicts = append(s.Verdicts, vd)
		}
		specs = append(specs, s)
	}
	return specs
}

// FromPrediction turns one deployment's predictions into a spec: the first
// shape's points (a prediction over several shapes is one deployment, so
// its settings are the same for all).
func FromPrediction(preds []predict.Prediction, topo model.Topology, profile string) (Spec, error) {
	if len(preds) == 0 {
		return Spec{}, errors.New("deploy: no prediction to export")
	}
	p := preds[0]
	s := Spec{
		Model: p.Model, GPU: p.GPU, Engine: p.Engine, Topology: topo, Pools: p.Settings,
		MaxModelLen: p.MaxModelLen, GPUMemoryUtilization: p.GPUMemoryUtilization, KVFit: p.KVFitTokens, Router: p.Router, FrontendMS: p.FrontendStatedMS, KVLink: p.KVLink,
		ISL: p.ISL, OSL: p.OSL, PrefixHitRate: p.PrefixHitRate, Dataset: p.Dataset, ExactOutput: p.ExactOutput, Mode: string(p.Mode), Costs: costsLine(p.Derived), Profile: profile,
	}
	for _, pt := range p.Points {
		s.Points = append(s.Points, Point{Load: pt.Load, Metrics: pt.Metrics})
	}
	for _, q := range preds[1:] {
		s.OtherShapes = append(s.OtherShapes, fmt.Sprintf("%d:%d", q.ISL, q.OSL))
	}
	return s, nil
}

// headroomLine says how far past the target load a recommendation holds.
func headroomLine(rec plan.Recommendation) string {
	h := rec.Headroom
	at := fmt.Sprintf("%g req/s", h.RequestRate)
	if h.MaxConcurrency > 0 {
		at = fmt.Sprintf("concurrency %d", h.MaxConcurrency)
	}
	if h.AtLeast {
		return fmt.Sprintf("at least %s (%.2f× the target)", at, h.Ratio)
	}
	if h.Binding == plan.BindingSaturated {
		return fmt.Sprintf("%s (%.2f× the target), then the deployment saturates", at, h.Ratio)
	}
	return fmt.Sprintf("%s (%.2f× the target), then %s is missed", at, h.Ratio, h.Binding)
}

// costsLine says where each pool's costs came from.
func costsLine(ds []calibrate.Derivation) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}

// Skipped is a spec Export left out, and why.
type Skipped struct {
	Spec Spec
	Err  error
}

// Export writes the specs that Files can build into dir (as Write does)
// and returns the paths written and the specs left out (an engine without
// a known version, say); none exportable is an error, the first reason.
func Export(dir string, specs []Spec) ([]string, []Skipped, error) {
	var ok []Spec
	var skipped []Skipped
	for _, s := range specs {
		if _, err := Files(s); err != nil {
			skipped = append(skipped, Skipped{s, err})
			continue
		}
		ok = append(ok, s)
	}
	if len(ok) == 0 && len(skipped) > 0 {
		return nil, skipped, skipped[0].Err
	}
	paths, err := Write(dir, ok)
	return paths, skipped, err
}
