package calibrate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/parallel"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// Hold-out kinds of the cross-group validation: every record of one GPU,
// one engine version or one source is left out of the fit and predicted
// from the rest, as a user predicting an unmeasured deployment would.
const (
	HoldoutGPU    = "gpu"
	HoldoutEngine = "engine"
	HoldoutSource = "source"
	// HoldoutNone is no hold-out: every record predicted from the full
	// profile, each priced by its own group's fit. It is the floor the
	// folds are read against: how much of the corpus the cost model
	// explains at all, before anything is carried to another GPU.
	HoldoutNone = "in-sample"
)

// HoldoutReport is the error of predicting one held-out fold (or, with
// Fold "all", every fold of a kind pooled) from a fit without it.
type HoldoutReport struct {
	Kind   string `json:"kind"` // gpu, engine, source, or in-sample (HoldoutNone)
	Fold   string `json:"fold"` // the held-out GPU, engine label or source file; "all" pools the kind
	Points int    `json:"points"`
	// APE is the median and maximum absolute percentage error per metric
	// (only metrics the held-out records give).
	APE map[string]APE `json:"ape"`
	// Coverage is the share of held-out measurements inside the ±1σ band
	// (the simulations at Band −1 and +1, as predict draws it), per metric
	// and pooled over metrics under "all".
	Coverage map[string]float64 `json:"coverage"`
	// CoverageByClass is Coverage["all"] per GPU class (model.GPU.Class),
	// with the measurements it counts: a band that covers on one kind of
	// hardware may not on another.
	CoverageByClass map[string]ClassCoverage `json:"coverage_by_class,omitempty"`
	// PricedFrom says how the fold's pools were priced (the derivations).
	PricedFrom []string `json:"priced_from,omitempty"`
	// Failed counts held-out records that could not be predicted at all, with why.
	Failed  int      `json:"failed,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// Predictions are the fold's records one by one (not kept in the pooled "all" rows).
	Predictions []HeldOutPrediction `json:"predictions,omitempty"`
}

// ClassCoverage is the share of one GPU class's held-out measurements
// inside their ±1σ band, of N.
type ClassCoverage struct {
	Share float64 `json:"share"`
	N     int     `json:"n"`
}

// HeldOutPrediction is one held-out record as its fold predicted it, on
// the metrics a hold-out is judged by.
type HeldOutPrediction struct {
	Record string `json:"record"`
	Source string `json:"source"`
	GPU    string `json:"gpu"`
	Model  string `json:"model"`
	Engine string `json:"engine"`
	Load   string `json:"load"`
	// Measured, Predicted and the ±1σ band edges Low and High, per metric.
	Measured  map[string]float64 `json:"measured"`
	Predicted map[string]float64 `json:"predicted,omitempty"`
	Low       map[string]float64 `json:"low,omitempty"`
	High      map[string]float64 `json:"high,omitempty"`
	// PricedFrom says what priced each pool, with its ±1σ; Failure why
	// nothing could.
	PricedFrom string `json:"priced_from,omitempty"`
	Failure    string `json:"failure,omitempty"`
}

// holdoutKinds are the cross-group validations Fit runs with Options.CV, in order.
var holdoutKinds = []string{HoldoutGPU, HoldoutEngine, HoldoutSource}

// holdoutMetrics are judged on held-out points; output throughput only when
// a record gives no request throughput (as in the series reports).
var holdoutMetrics = []string{model.RequestThroughput, model.OutputThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL}

// crossGroups runs the leave-one-GPU-, engine-version- and source-out folds.
// Groups are fitted independently of each other and a group holds one GPU
// and one engine label, so a GPU or engine fold is the full profile full
// less that GPU's or engine's groups, exactly what a refit without them
// gives; a source can share a group with others, so its folds are refitted.
func crossGroups(ctx context.Context, recs []results.Record, full *Profile, opts Options, progress func(Progress)) ([]HoldoutReport, error) {
	groups, order, _ := preparePoints(recs, opts.MaxPrompts)
	var pts []*point
	for _, k := range order {
		pts = append(pts, groups[k]...)
	}
	keyOf := map[string]func(p *point) string{
		HoldoutGPU: func(p *point) string { return model.CanonicalGPU(p.rec.System.GPU) },
		HoldoutEngine: func(p *point) string {
			return p.rec.System.Engine
		},
		HoldoutSource: func(p *point) string { return p.rec.Source.File },
	}
	// The fold a whole group belongs to, for the kinds whose folds never split a group.
	foldOfGroup := map[string]func(g *Group) string{
		HoldoutGPU:    func(g *Group) string { return g.GPU },
		HoldoutEngine: func(g *Group) string { return g.Engine },
	}
	inner := opts
	inner.CV = false
	var out []HoldoutReport
	var named []*point // a record that names no GPU or model cannot be predicted as itself
	for _, p := range pts {
		if p.rec.System.GPU != "" && p.rec.System.Model != "" {
			named = append(named, p)
		}
	}
	progress(Progress{Stage: "cv", Group: "every record from the full profile", Done: 0, Total: 1})
	floor, err := predictHeldOut(ctx, full, named, opts)
	if err != nil {
		return nil, err
	}
	progress(Progress{Stage: "cv", Group: "every record from the full profile", Done: 1, Total: 1})
	out = append(out, summarise(HoldoutNone, "all", floor))
	for _, kind := range holdoutKinds {
		var folds []string
		seen := map[string]bool{}
		for _, p := range pts {
			if k := keyOf[kind](p); k != "" && !seen[k] && p.rec.System.GPU != "" && p.rec.System.Model != "" {
				seen[k] = true
				folds = append(folds, k)
			}
		}
		sort.Strings(folds)
		if len(folds) < 2 {
			continue
		}
		// Folds are independent fits and predictions: run at once, taken in order.
		reps := make([]HoldoutReport, len(folds))
		helds := make([][]heldOut, len(folds))
		errs := make([]error, len(folds))
		err := parallel.ForEach(ctx, len(folds), opts.workers(), func(fi int) {
			fold := folds[fi]
			progress(Progress{Stage: "cv", Group: fmt.Sprintf("without %s %s", kind, fold), Done: fi, Total: len(folds)})
			var train []results.Record
			var test []*point
			for i := range recs {
				if keyOf[kind](&point{rec: &recs[i]}) != fold {
					train = append(train, recs[i])
				}
			}
			for _, p := range named {
				if keyOf[kind](p) == fold {
					test = append(test, p)
				}
			}
			var prof *Profile
			var err error
			if groupKeyOf := foldOfGroup[kind]; groupKeyOf != nil {
				prof = full.without(func(g *Group) bool { return groupKeyOf(g) == fold })
			} else {
				prof, _, err = Fit(ctx, train, inner, func(Progress) {})
			}
			if err != nil {
				if ctx.Err() != nil {
					errs[fi] = ctx.Err()
					return
				}
				reps[fi] = HoldoutReport{Kind: kind, Fold: fold, Failed: len(test), Reasons: []string{err.Error()}}
				return
			}
			held, err := predictHeldOut(ctx, prof, test, opts)
			if err != nil {
				errs[fi] = err
				return
			}
			helds[fi], reps[fi] = held, summarise(kind, fold, held)
		})
		if err != nil {
			return nil, err
		}
		var pooled []heldOut
		for fi := range folds {
			if errs[fi] != nil {
				return nil, errs[fi]
			}
			pooled = append(pooled, helds[fi]...)
			out = append(out, reps[fi])
		}
		out = append(out, summarise(kind, "all", pooled))
	}
	return out, nil
}

// heldOut is one predicted held-out point.
type heldOut struct {
	p        *point
	central  map[string]float64
	lo, hi   map[string]float64
	derived  string
	failure  string
	measured map[string]float64
}

// predictHeldOut prices each held-out point from prof as predict would
// (Configure with the record's GPU, model, engine label, topology and
// stated settings) and simulates it at the centre and both band edges.
func predictHeldOut(ctx context.Context, prof *Profile, test []*point, opts Options) ([]heldOut, error) {
	out := make([]heldOut, len(test))
	run := opts.simulate()
	err := parallel.ForEach(ctx, len(test), opts.workers(), func(i int) {
		p := test[i]
		h := heldOut{p: p, measured: p.meas}
		t, err := p.heldOutTarget()
		if err != nil {
			h.failure = err.Error()
			out[i] = h
			return
		}
		sims := make([]map[string]float64, 3)
		for j, band := range []float64{0, -1, 1} {
			t.Band = band
			d, err := prof.Configure(t)
			if err != nil {
				h.failure = err.Error()
				break
			}
			if j == 0 {
				h.derived = pricedFrom(d.Derived)
			}
			res, err := d.SimulateWith(ctx, p.workload(), run)
			if err != nil {
				h.failure = err.Error()
				break
			}
			sims[j] = res.Metrics
		}
		if h.failure == "" {
			h.central, h.lo, h.hi = sims[0], sims[1], sims[2]
		}
		out[i] = h
	})
	return out, err
}

// pricedFrom says what priced each pool of a held-out deployment, as
// predict prints it: with the pool's ±1σ, so that a fold's band can be
// read against its errors without refitting the fold.
func pricedFrom(ders []Derivation) string {
	parts := make([]string, len(ders))
	for i, der := range ders {
		parts[i] = der.String()
	}
	return strings.Join(parts, "; ")
}

// heldOutTarget is the deployment a held-out point is predicted as:
// predict's target for the record's GPU, model, engine label, topology and
// stated settings, at the central band.
func (p *point) heldOutTarget() (Target, error) {
	gpu, err := model.LookupGPU(p.rec.System.GPU)
	if err != nil {
		return Target{}, fmt.Errorf("calibrate: %w", err)
	}
	llm, err := model.LookupLLM(recordModel(p.rec))
	if err != nil {
		return Target{}, fmt.Errorf("calibrate: %w", err)
	}
	s := settingsFrom(p.rec.System.Engine, []*point{p})
	if routerOpen(p.rec.System.Engine, []*point{p}) {
		s.Router = "" // unstated: the calibrated group's choice, if any (Target.Settings)
	}
	return Target{GPU: gpu, LLM: llm, Engine: engine.Parse(p.rec.System.Engine), Topology: p.topo, Settings: &s}, nil
}

// summarise turns held-out predictions into a report.
func summarise(kind, fold string, held []heldOut) HoldoutReport {
	rep := HoldoutReport{Kind: kind, Fold: fold, APE: map[string]APE{}, Coverage: map[string]float64{}}
	errs := map[string][]float64{}
	in, n := map[string]int{}, map[string]int{}
	classIn, classN := map[string]int{}, map[string]int{}
	from := map[string]bool{}
	for _, h := range held {
		if fold != "all" {
			rep.Predictions = append(rep.Predictions, h.prediction())
		}
		if h.failure != "" {
			rep.Failed++
			if len(rep.Reasons) < 3 {
				rep.Reasons = append(rep.Reasons, h.p.rec.ID+": "+h.failure)
			}
			continue
		}
		rep.Points++
		if fold != "all" && !from[h.derived] {
			from[h.derived] = true
			rep.PricedFrom = append(rep.PricedFrom, h.derived)
		}
		class := gpuClass(h.p.rec.System.GPU)
		for _, m := range holdoutMetrics {
			want, ok := h.measured[m]
			if !ok {
				continue
			}
			got := h.central[m]
			if !(got > 0) {
				errs[m] = append(errs[m], 100)
				n[m]++
				continue
			}
			e, _ := model.AbsPctError(want, got) // a point keeps only positive, finite measurements
			errs[m] = append(errs[m], e)
			lo, hi := math.Min(h.lo[m], h.hi[m]), math.Max(h.lo[m], h.hi[m])
			lo, hi = math.Min(lo, got), math.Max(hi, got)
			n[m]++
			classN[class]++
			if want >= lo && want <= hi {
				in[m]++
				classIn[class]++
			}
		}
	}
	allIn, allN := 0, 0
	for m, e := range errs {
		rep.APE[m] = APE{Median: round2(median(e)), Max: round2(maxOf(e))}
		if n[m] > 0 {
			rep.Coverage[m] = round2(float64(in[m]) / float64(n[m]))
		}
		allIn += in[m]
		allN += n[m]
	}
	if allN > 0 {
		rep.Coverage["all"] = round2(float64(allIn) / float64(allN))
	}
	for c, k := range classN {
		if rep.CoverageByClass == nil {
			rep.CoverageByClass = map[string]ClassCoverage{}
		}
		rep.CoverageByClass[c] = ClassCoverage{Share: round2(float64(classIn[c]) / float64(k)), N: k}
	}
	sort.Strings(rep.PricedFrom)
	return rep
}

// gpuClass is the class of a record's GPU (model.GPU.Class), "unknown"
// when the catalog does not know it.
func gpuClass(name string) string {
	g, err := model.LookupGPU(name)
	if err != nil {
		return "unknown"
	}
	return g.Class()
}

// prediction is h as a report row, rounded to 4 significant digits.
func (h heldOut) prediction() HeldOutPrediction {
	pick := func(m map[string]float64) map[string]float64 {
		if m == nil {
			return nil
		}
		out := map[string]float64{}
		for _, k := range holdoutMetrics {
			if v, ok := m[k]; ok {
				out[k] = roundSignificant(v, 4)
			}
		}
		return out
	}
	r := h.p.rec
	return HeldOutPrediction{Record: r.ID, Source: r.Source.File, GPU: model.CanonicalGPU(r.System.GPU), Model: recordModel(r),
		Engine: r.System.Engine, Load: h.p.w.Load.String(), Measured: pick(h.measured), Predicted: pick(h.central),
		Low: pick(h.lo), High: pick(h.hi), PricedFrom: h.derived, Failure: h.failure}
}

// without is p with the groups drop picks left out (a fold whose groups
// were fitted apart from the others: every GPU or engine version held out
// in turn); its transfer pool is not kept.
func (p *Profile) without(drop func(*Group) bool) *Profile {
	out := &Profile{Schema: p.Schema, CostModel: p.CostModel}
	for i := range p.Groups {
		if !drop(&p.Groups[i]) {
			out.Groups = append(out.Groups, p.Groups[i])
		}
	}
	return out
}
