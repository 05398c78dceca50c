package predict

import (
	"context"
	"fmt"
	"slices"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
	"github.com/capsim/capsim/workload"
)

// ValidationMetrics are the metrics a validation compares, in print order.
var ValidationMetrics = []string{
	model.RequestThroughput, model.OutputThroughput,
	model.MeanTTFT, model.MedianTTFT, model.P99TTFT,
	model.MeanTPOT, model.MedianTPOT, model.P99TPOT,
	model.MeanITL, model.MedianITL, model.P99ITL,
	model.MeanE2EL, model.MedianE2EL, model.P99E2EL,
}

// ValidationPoint is one load point measured against its prediction.
type ValidationPoint struct {
	Load       model.Load `json:"load"`
	ISL        int        `json:"isl"`
	OSL        int        `json:"osl"`
	NumPrompts int        `json:"num_prompts"`
	Completed  int        `json:"completed"`
	Failed     int        `json:"failed"`
	Record     string     `json:"record,omitempty"` // the record compared, when validating records
	// ExactOutput: every output was simulated at exactly OSL tokens, as
	// the measurement ran them (ignore_eos), not spread ±20%.
	ExactOutput bool         `json:"exact_output,omitempty"`
	Metrics     []Comparison `json:"metrics"`
	// Missing lists metrics the measurement or the prediction lacks.
	Missing []string `json:"missing,omitempty"`
}

// Validation is measurements of one deployment against its predictions.
type Validation struct {
	Source   string `json:"source"` // the server URL or the result file
	GPU      string `json:"gpu"`
	Model    string `json:"model"`
	Engine   string `json:"engine"`
	Topology string `json:"topology"`
	Profile  string `json:"profile"`
	// Dataset is the dataset whose lengths the requests took, measured and
	// simulated alike (Options.Workload.Dataset; workload.Workload.Dataset when every
	// record states the same); "" when none or they differ.
	Dataset string `json:"dataset,omitempty"`
	// ExactOutput: every point's outputs were simulated at exactly OSL
	// tokens (ValidationPoint.ExactOutput).
	ExactOutput bool              `json:"exact_output,omitempty"`
	Points      []ValidationPoint `json:"points"`
	Summary     []ErrorSummary    `json:"summary"`
	Derived     []string          `json:"derived"` // where the predicted costs came from
	// Frontend is the frontend latency when it was carried from another
	// deployment or stated (calibrate.Deployment.FrontendFrom), as the
	// first record was priced.
	Frontend string   `json:"frontend,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// EngineFlags and EngineDefaults are Prediction's: the engine settings
	// simulated (for a result file, the first record's) and their sources.
	EngineFlags    []engine.Flag `json:"engine_flags,omitempty"`
	EngineDefaults string        `json:"engine_defaults,omitempty"`
}

// NewValidation starts a validation of a prediction's deployment.
func NewValidation(source string, p Prediction) *Validation {
	return &Validation{Source: source, GPU: p.GPU, Model: p.Model, Engine: p.Engine, Topology: p.Topology, Dataset: p.Dataset,
		ExactOutput: p.ExactOutput, Warnings: p.Warnings, Derived: derivedText(p.Derived), Frontend: p.Frontend,
		EngineFlags: p.EngineFlags, EngineDefaults: p.EngineDefaults}
}

func derivedText(ds []calibrate.Derivation) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return out
}

// ComparePoint pairs the measured and predicted metrics of one load point.
func ComparePoint(load model.Load, shape workload.Workload, predicted, measured map[string]float64) ValidationPoint {
	pt := ValidationPoint{Load: load, ISL: shape.ISL, OSL: shape.OSL}
	pt.Metrics, pt.Missing = Compare(measured, predicted, ValidationMetrics)
	return pt
}

// Summarise fills Summary from the points' comparisons.
func (v *Validation) Summarise() {
	var all []Comparison
	for _, p := range v.Points {
		all = append(all, p.Metrics...)
	}
	v.Summary = Summarise(all, ValidationMetrics)
}

// ValidateRecords re-simulates each measured record as it ran (Records)
// and compares; source names the records' file in the output and in the
// "FILE line N" of each error and warning. Records whose deployment
// differs from the first record's are compared too, with a warning.
func ValidateRecords(ctx context.Context, prof *calibrate.Profile, source string, recs []results.Record, opts RecordOptions) (*Validation, error) {
	rps, err := Records(ctx, prof, recs, nil, opts)
	if err != nil {
		return nil, err
	}
	var v *Validation
	var notes []string
	for i := range rps {
		rp, r := &rps[i], &recs[i]
		where := fmt.Sprintf("%s line %d", source, r.Source.Line)
		if rp.Err != nil {
			return nil, fmt.Errorf("predict: %s: %w", where, rp.Err)
		}
		for _, n := range rp.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
		t := rp.Target
		if v == nil {
			v = &Validation{Source: source, GPU: t.GPU.Name, Model: t.LLM.Name, Engine: t.Engine.Label, Topology: t.Topology.String(), Dataset: rp.Workload.Dataset, Derived: derivedText(rp.Derived), Frontend: rp.Frontend,
				EngineFlags: rp.Flags, EngineDefaults: rp.DefaultsRule}
		} else if t.GPU.Name != v.GPU || t.LLM.Name != v.Model || t.Engine.Label != v.Engine || t.Topology.String() != v.Topology {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s: predicted as %s / %s / %s / %s, unlike the first record",
				where, t.GPU.Name, model.ShortName(t.LLM.Name), t.Engine.Label, t.Topology))
		}
		if rp.Workload.Dataset != v.Dataset {
			v.Dataset = ""
		}
		if r.Errors > 0 {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s (%s): %d requests failed; latencies are over the completed ones", where, r.Workload.Load, r.Errors))
		}
		w := rp.Workload
		pt := ComparePoint(r.Workload.Load, w, rp.Metrics, r.Metrics)
		pt.Record, pt.ExactOutput = r.ID, w.ExactOutput
		pt.NumPrompts, pt.Completed, pt.Failed = w.NumPrompts, r.Completed, r.Errors
		v.Points = append(v.Points, pt)
	}
	if v == nil {
		return nil, fmt.Errorf("predict: %s holds no results", source)
	}
	v.ExactOutput = !slices.ContainsFunc(v.Points, func(p ValidationPoint) bool { return !p.ExactOutput })
	if v.ExactOutput {
		// The header says it once for every point: no note per length.
		notes = slices.DeleteFunc(notes, func(n string) bool {
			return slices.ContainsFunc(v.Points, func(p ValidationPoint) bool { return n == series.ExactOutputNote(p.OSL) })
		})
	}
	v.Warnings = append(v.Warnings, notes...)
	v.Summarise()
	return v, nil
}
