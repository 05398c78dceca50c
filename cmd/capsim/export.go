package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/deploy"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plan"
	"github.com/capsim/capsim/predict"
)

// planSpecs turns a plan's recommendations into deployable specs.
func planSpecs(r *plan.Result, profilePath string) []deploy.Spec {
	var specs []deploy.Spec
	for _, rec := range r.Recommendations {
		s := deploy.Spec{
			Rank: rec.Rank, Model: r.Model, GPU: rec.GPU, Engine: rec.Engine, Topology: rec.Topology, Pools: rec.Settings,
			MaxModelLen: rec.MaxModelLen, GPUMemoryUtilization: rec.GPUMemoryUtilization,
			ISL: r.ISL, OSL: r.OSL, Load: r.Load, Mode: string(r.Mode), Confidence: r.Confidence,
			Metrics: rec.Metrics, Headroom: planHeadroomLine(rec), Costs: derivedLine(rec.Derived), Profile: profilePath,
		}
		for i, v := range rec.SLOValues {
			vd := deploy.Verdict{SLO: v.SLO, LimitMs: v.Limit, ValueMs: v.Value, Met: v.Met}
			if i < len(rec.Central) {
				vd.Central = rec.Central[i].Value
			}
			s.Verdicts = append(s.Verdicts, vd)
		}
		specs = append(specs, s)
	}
	return specs
}

// predictSpec turns one deployment's predictions into a deployable spec
// (the first shape's points; a prediction over several shapes is one
// deployment, so its settings are the same for all).
func predictSpec(preds []predict.Prediction, tgt model.Topology, profilePath string) (deploy.Spec, error) {
	if len(preds) == 0 {
		return deploy.Spec{}, fmt.Errorf("export: no prediction")
	}
	p := preds[0]
	s := deploy.Spec{
		Model: p.Model, GPU: p.GPU, Engine: p.Engine, Topology: tgt, Pools: p.Settings,
		MaxModelLen: p.MaxModelLen, GPUMemoryUtilization: p.GPUMemoryUtilization,
		ISL: p.ISL, OSL: p.OSL, Mode: string(p.Mode), Costs: derivedLine(p.Derived), Profile: profilePath,
	}
	for _, pt := range p.Points {
		s.Points = append(s.Points, deploy.Point{Load: pt.Load, Metrics: pt.Metrics})
	}
	return s, nil
}

func planHeadroomLine(rec plan.Recommendation) string {
	h := rec.Headroom
	at := fmt.Sprintf("%g req/s", h.RequestRate)
	if h.MaxConcurrency > 0 {
		at = fmt.Sprintf("concurrency %d", h.MaxConcurrency)
	}
	if h.AtLeast {
		return fmt.Sprintf("at least %s (%.2f× the target)", at, h.Ratio)
	}
	return fmt.Sprintf("%s (%.2f× the target), then %s is missed", at, h.Ratio, h.Binding)
}

func derivedLine(ds []calibrate.Derivation) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s %s: %s from %s (±%.0f%%)", d.Role, d.Pool, d.Source, d.From, 100*d.RelSigma))
	}
	return strings.Join(parts, "; ")
}

// writeExport writes specs under dir and says what it wrote on w; a spec
// that cannot be exported (an engine without a known version, say) is
// left out with a warning, and none exportable is an error.
func writeExport(w io.Writer, dir string, specs []deploy.Spec) error {
	var ok []deploy.Spec
	var firstErr error
	for _, s := range specs {
		if _, err := deploy.Files(s); err != nil {
			fmt.Fprintf(w, "capsim: warning: not exported: %s on %s: %v\n", s.Topology.Notation(), s.GPU, err)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		ok = append(ok, s)
	}
	if len(ok) == 0 {
		return firstErr
	}
	specs = ok
	paths, err := deploy.Write(dir, specs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "exported %d deployment(s) to %s (%d files: serve.sh, k8s.yaml, README.md%s)\n", len(specs), dir, len(paths), dynamoNote(specs))
	return nil
}

func dynamoNote(specs []deploy.Spec) string {
	for _, s := range specs {
		if s.Topology.Disaggregated() {
			return ", dynamo.yaml"
		}
	}
	return ""
}
