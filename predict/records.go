package predict

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/parallel"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
	"github.com/capsim/capsim/workload"
)

// RecordOptions choose how measured records are re-simulated.
type RecordOptions struct {
	// Override replaces what the records state about their deployment.
	Override calibrate.Override
	// NumPrompts, when positive, replaces every record's prompt count
	// (series.Prompts otherwise, as the fit simulates it).
	NumPrompts int
	// Seed of the simulations; 0 means calibrate.FitSeed, the fit's.
	Seed uint64
}

// RecordPrediction is one measured record simulated as it ran.
type RecordPrediction struct {
	Record   *results.Record
	Target   calibrate.Target // the deployment priced, engine resolved
	Workload workload.Workload
	Metrics  map[string]float64
	// PrefixHitRate is the share of prompt tokens the simulated prefix
	// cache served (sim.Result.PrefixHitRate).
	PrefixHitRate float64
	Derived       []calibrate.Derivation
	// Frontend is calibrate.Deployment.FrontendFrom: the frontend latency
	// when it was carried from another deployment or stated, "" otherwise.
	Frontend string
	// Flags and DefaultsRule are calibrate.Deployment's: the engine
	// settings the record was simulated with and where each came from.
	Flags        []engine.Flag `json:"-"`
	DefaultsRule string        `json:"-"`
	// Notes say what was assumed (GPU, topology, engine, output length).
	Notes []string
	// Err says why the record could not be simulated; the others still are.
	Err error
}

// Records simulates each record in recs as the benchmark ran it: the
// workload series.Workloads gives it (the same the fit simulates) on the
// deployment Profile.RecordTarget resolves. siblings are every record of
// the records' sources (nil means recs), from which a record that does not
// state its output length borrows an estimate. A record that cannot be
// simulated gets Err; the returned error is only ctx's.
func Records(ctx context.Context, prof *calibrate.Profile, recs, siblings []results.Record, opts RecordOptions) ([]RecordPrediction, error) {
	if siblings == nil {
		siblings = recs
	}
	works, werrs := series.Workloads(siblings, 0)
	byID := make(map[string]int, len(siblings))
	for i := range siblings {
		byID[siblings[i].ID] = i
	}
	seed := opts.Seed
	if seed == 0 {
		seed = calibrate.FitSeed
	}
	out := make([]RecordPrediction, len(recs))
	err := parallel.ForEach(ctx, len(recs), runtime.GOMAXPROCS(0), func(i int) {
		r := &recs[i]
		p := &out[i]
		p.Record = r
		j, ok := byID[r.ID]
		if !ok {
			p.Err = fmt.Errorf("predict: record %s is not among its siblings", r.ID)
			return
		}
		if werrs[j] != nil {
			p.Err = werrs[j]
			return
		}
		p.Workload = works[j]
		if opts.NumPrompts > 0 {
			p.Workload.NumPrompts = opts.NumPrompts
		}
		t, notes, err := prof.RecordTarget(r, opts.Override)
		p.Target, p.Notes = t, append(notes, p.Workload.Notes...)
		if err != nil {
			p.Err = err
			return
		}
		d, err := prof.Configure(t)
		if err != nil {
			p.Err = err
			return
		}
		p.Target.Engine, p.Derived, p.Frontend = d.Engine, d.Derived, d.FrontendFrom
		p.Flags, p.DefaultsRule = d.Flags, d.DefaultsRule
		w := p.Workload
		w.Seed = seed
		res, err := d.Simulate(ctx, w)
		if err != nil {
			p.Err = fmt.Errorf("predict: record %s: %w", r.ID, err)
			return
		}
		p.Metrics, p.PrefixHitRate = res.Metrics, res.PrefixHitRate
	})
	return out, err
}

// Matching returns the records that measured a prediction's deployment
// and shape under the same kind of load: the same GPU, model, engine and
// topology, the prompt length within 5% and the output length equal to its
// max_tokens or its mean output within 10%.
func Matching(p Prediction, recs []results.Record) []*results.Record {
	kind := model.ClosedLoop
	if len(p.Points) > 0 {
		kind = p.Points[0].Load.Kind
	}
	near := func(a float64, b int, tol float64) bool { return b > 0 && math.Abs(a-float64(b)) <= tol*float64(b) }
	var out []*results.Record
	for i := range recs {
		r := &recs[i]
		if r.Workload.Load.Kind != kind || model.CanonicalGPU(r.System.GPU) != p.GPU || model.CanonicalModel(r.System.Model) != p.Model ||
			!strings.EqualFold(r.System.Engine, p.Engine) || r.System.Topology.String() != p.Topology {
			continue
		}
		isl := r.Workload.ISL
		if r.Workload.ISLMax > 0 {
			isl = float64(r.Workload.ISLMax)
		}
		if near(isl, p.ISL, 0.05) && (r.Workload.OSLMax == p.OSL || near(r.Workload.OSL, p.OSL, 0.10)) {
			out = append(out, r)
		}
	}
	return out
}
