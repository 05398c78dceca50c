package predict

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// SeriesOptions choose how a measured series is re-simulated.
type SeriesOptions struct {
	// Metrics are compared with the measurements, in order.
	Metrics []string
	// NumPrompts, when positive, replaces the prompts of every simulated point.
	NumPrompts int
	// Seed of the simulations; 0 means calibrate.FitSeed.
	Seed uint64
}

// SeriesPrediction is a measured series simulated over its loads: each
// measured record exactly as it ran (as Records does, so the same numbers
// as the fit's residuals), and loads between them with the series' median
// workload and prefix-cache hit rate, so a curve shows its shape between
// measurements.
type SeriesPrediction struct {
	Target calibrate.Target
	// ISL and OSL are the median workload of the series' records.
	ISL, OSL int
	// PrefixHitRate is the median prefix-cache hit rate the records state
	// (workload.Workload.PrefixHitRate), which the loads between them assume.
	PrefixHitRate float64 `json:"prefix_hit_rate,omitempty"`
	// Dataset is the dataset whose lengths the records drew
	// (workload.Workload.Dataset), which the loads between them draw too.
	Dataset string `json:"dataset,omitempty"`
	// Curve is every simulated load, sorted by X (series.X's axis).
	Curve []CurvePoint
	// Records are the measured records' simulations, in series order.
	Records []RecordPrediction
	// Comparisons pair every measured value with its simulation.
	Comparisons []Comparison
	// Costs says where the simulated costs came from: "fitted", "derived",
	// "prior" or a mix ("derived prefill, fitted decode").
	Costs string
	Notes []string
}

// CurvePoint is one simulated load of a series.
type CurvePoint struct {
	X       float64
	Metrics map[string]float64
}

// Series simulates a measured series; siblings are every record of its
// sources (see Records). An error means the series could not be simulated.
func Series(ctx context.Context, prof *calibrate.Profile, s *series.Series, siblings []results.Record, opts SeriesOptions) (*SeriesPrediction, error) {
	recs := make([]results.Record, len(s.Records))
	for i, r := range s.Records {
		recs[i] = *r
	}
	rps, err := Records(ctx, prof, recs, siblings, RecordOptions{NumPrompts: opts.NumPrompts, Seed: opts.Seed})
	if err != nil {
		return nil, err
	}
	sp := &SeriesPrediction{}
	var isls, osls, hits, xs []float64
	var share model.Sharing                 // the records' prefix sharing, for the loads between them
	oslMaxes, exact := map[int]bool{}, true // the records' output spreads, for the loads between them
	curve := map[float64]map[string]float64{}
	var firstErr error
	for i := range rps {
		rp := &rps[i]
		rp.Record = s.Records[i]
		for _, n := range rp.Notes {
			if !slices.Contains(sp.Notes, n) && !strings.HasPrefix(n, "outputs stop early") {
				sp.Notes = append(sp.Notes, n)
			}
		}
		if rp.Err != nil {
			firstErr = cmpOr(firstErr, rp.Err)
			continue
		}
		if sp.Costs == "" {
			sp.Target, sp.Costs = rp.Target, costSources(rp.Derived)
		}
		x := series.X(rp.Record)
		isls, osls = append(isls, float64(rp.Workload.ISL)), append(osls, float64(rp.Workload.OSL))
		hits = append(hits, rp.Workload.PrefixHitRate)
		oslMaxes[rp.Workload.OSLMax] = true
		exact = exact && rp.Workload.ExactOutput
		if sp.Dataset == "" {
			sp.Dataset = rp.Workload.Dataset
		}
		if !share.On() {
			share = rp.Workload.Sharing
		}
		if x > 0 && !math.IsInf(x, 0) {
			xs = append(xs, x)
			curve[x] = rp.Metrics
		}
		cs, _ := Compare(rp.Record.Metrics, rp.Metrics, opts.Metrics)
		sp.Comparisons = append(sp.Comparisons, cs...)
	}
	sp.Records = rps
	if len(xs) == 0 {
		if firstErr != nil {
			return nil, firstErr
		}
		return nil, fmt.Errorf("predict: no measured load to simulate")
	}
	sp.ISL = max(1, int(math.Round(stats.Median(isls))))
	sp.OSL = max(2, int(math.Round(stats.Median(osls))))
	sp.PrefixHitRate = stats.Median(hits)

	// Loads between the measurements, with the median workload (and hit
	// rate), outputs spread as the records' were when they all agree.
	base := Options{Target: sp.Target, NoBand: true, Mode: sim.BenchmarkReplay, // fitted against measured: the benchmark as it ran
		Workload: workload.Workload{ISL: sp.ISL, OSL: sp.OSL, Seed: cmpOr(opts.Seed, calibrate.FitSeed),
			PrefixHitRate: sp.PrefixHitRate, Dataset: sp.Dataset, ExactOutput: exact, Sharing: share}}
	if len(oslMaxes) == 1 {
		for m := range oslMaxes {
			base.Workload.OSLMax = m
		}
	}
	for _, x := range loadGrid(xs, s.Kind != model.OpenLoop) {
		if _, ok := curve[x]; ok {
			continue
		}
		o := base
		var rec results.Record
		rec.Workload = s.First().Workload
		switch s.Kind {
		case model.Burst:
			o.Loads = []model.Load{model.Open(math.Inf(1), 1)}
			o.Workload.NumPrompts = int(x)
		case model.ClosedLoop:
			rec.Workload.Load = model.Closed(int(x))
			o.Loads = []model.Load{rec.Workload.Load}
		case model.OpenLoop:
			rec.Workload.Load = model.Open(x, s.First().Workload.Load.Burstiness)
			o.Loads = []model.Load{rec.Workload.Load}
		default:
			return nil, fmt.Errorf("predict: unknown load kind %q", s.Kind)
		}
		if o.Workload.NumPrompts == 0 {
			o.Workload.NumPrompts = cmpOr(opts.NumPrompts, series.Prompts(&rec, 0))
		}
		preds, err := Run(ctx, prof, o)
		if err != nil {
			return nil, err
		}
		curve[x] = preds[0].Points[0].Metrics
	}
	for x, m := range curve {
		sp.Curve = append(sp.Curve, CurvePoint{X: x, Metrics: m})
	}
	sort.Slice(sp.Curve, func(i, j int) bool { return sp.Curve[i].X < sp.Curve[j].X })
	return sp, nil
}

func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// loadGrid is the measured loads plus the geometric midpoints between
// neighbours (whole numbers for concurrencies and burst sizes); a single
// load gets half and double itself.
func loadGrid(xs []float64, whole bool) []float64 {
	set := map[float64]bool{}
	add := func(x float64) {
		if whole {
			x = math.Round(x)
		}
		if x > 0 && !math.IsInf(x, 0) {
			set[x] = true
		}
	}
	for _, x := range xs {
		add(x)
	}
	sorted := func() []float64 {
		out := make([]float64, 0, len(set))
		for x := range set {
			out = append(out, x)
		}
		sort.Float64s(out)
		return out
	}
	base := sorted()
	switch len(base) {
	case 0:
		return nil
	case 1:
		add(base[0] / 2)
		add(base[0] * 2)
	default:
		for i := 1; i < len(base); i++ {
			add(math.Sqrt(base[i-1] * base[i]))
		}
	}
	return sorted()
}

// costSources says where simulated costs came from: one source for every
// pool ("fitted"), else each pool's ("derived prefill, fitted decode").
func costSources(ds []calibrate.Derivation) string {
	if len(ds) == 0 {
		return ""
	}
	same := true
	for _, d := range ds {
		same = same && d.Source == ds[0].Source
	}
	if same {
		return ds[0].Source
	}
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.Source+" "+d.Role)
	}
	return strings.Join(parts, ", ")
}
