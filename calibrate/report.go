package calibrate

import (
	"context"
	"fmt"
	"math"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/parallel"
	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/series"
)

// seriesInfos lists the series of a fitted group, in first-seen order.
func seriesInfos(g Group, pts []*point) []SeriesInfo {
	var out []SeriesInfo
	idx := map[string]int{}
	for _, p := range pts {
		i, ok := idx[p.series]
		if !ok {
			r := p.rec
			i = len(out)
			idx[p.series] = i
			out = append(out, SeriesInfo{Key: p.series, Source: r.Source.File, GPU: g.GPU, Model: g.Model, Engine: g.Engine,
				Topology: p.topo, TopologyLabel: p.config, ISL: r.Workload.ISL, OSL: r.Workload.OSL,
				ISLMax: r.Workload.ISLMax, OSLMax: r.Workload.OSLMax, LoadKind: p.w.Load.Kind})
		}
		x := p.w.Load.X()
		if p.w.Load.Kind == model.Burst {
			x = float64(p.w.NumPrompts)
		}
		out[i].Loads = append(out[i].Loads, x)
		out[i].Records = append(out[i].Records, p.rec.ID)
	}
	return out
}

// seriesReports summarises residuals per series.
func seriesReports(g Group, pts []*point, res []Residual, holdout string) []SeriesReport {
	var out []SeriesReport
	idx := map[string]int{}
	errs := map[string]map[string][]float64{}
	for i, p := range pts {
		j, ok := idx[p.series]
		if !ok {
			j = len(out)
			idx[p.series] = j
			isl, osl := series.Requested(p.rec)
			if p.rec.Workload.OSLMax == 0 {
				osl = meanOSL(pts, p.series)
			}
			out = append(out, SeriesReport{Source: p.rec.Source.File, GPU: g.GPU, Model: g.Model, Engine: g.Engine,
				Topology: p.config, ISL: isl, OSL: osl, APE: map[string]APE{},
				Flagged: []Flag{}, Holdout: holdout})
			errs[p.series] = map[string][]float64{}
		}
		out[j].Points++
		r := res[i]
		metrics := ReportMetrics
		if _, ok := r.Measured[model.RequestThroughput]; !ok {
			// Sources giving only token throughput (seed 003) are judged on it.
			metrics = append([]string{model.OutputThroughput}, ReportMetrics...)
		}
		for _, m := range metrics {
			if lr, ok := r.LogRatio[m]; ok {
				// The fit's own log ratio (rounded as the profile stores it),
				// as the error of fitted/measured against 1.
				e, _ := model.AbsPctError(1, math.Exp(lr))
				errs[p.series][m] = append(errs[p.series][m], e)
			} else if _, ok := r.Measured[m]; ok {
				errs[p.series][m] = append(errs[p.series][m], 100)
			}
		}
		if r.Flag != "" {
			out[j].Flagged = append(out[j].Flagged, Flag{Record: r.Record, Load: r.Load, Reason: r.Flag})
		}
	}
	for key, j := range idx {
		for m, e := range errs[key] {
			out[j].APE[m] = APE{Median: round2(median(e)), Max: round2(maxOf(e))}
		}
	}
	return out
}

func meanOSL(pts []*point, series string) float64 {
	s, n := 0.0, 0
	for _, p := range pts {
		if p.series == series {
			s += float64(p.w.OSL)
			n++
		}
	}
	return math.Round(s / float64(max(n, 1)))
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// median is numpy's np.median of v; 0 when empty.
func median(v []float64) float64 { return stats.Median(v) }

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// crossValidate refits a group without each configuration (and without
// each workload shape) and predicts the held-out points.
func crossValidate(ctx context.Context, key groupKey, pts []*point, opts Options, progress func(Progress)) ([]SeriesReport, error) {
	var out []SeriesReport
	for _, kind := range []string{"configuration", "shape"} {
		keyOf := func(p *point) string {
			if kind == "configuration" {
				return p.config
			}
			return p.shape
		}
		var folds []string
		seen := map[string]bool{}
		for _, p := range pts {
			if k := keyOf(p); !seen[k] {
				seen[k] = true
				folds = append(folds, k)
			}
		}
		if len(folds) < 2 {
			continue
		}
		// Folds are independent refits: run at once, taken in order.
		reps := make([][]SeriesReport, len(folds))
		errs := make([]error, len(folds))
		err := parallel.ForEach(ctx, len(folds), opts.workers(), func(fi int) {
			reps[fi], errs[fi] = crossValidateFold(ctx, key, pts, kind, folds[fi], keyOf, opts, func(p Progress) {
				p.Done, p.Total = fi, len(folds)
				progress(p)
			})
		})
		if err != nil {
			return nil, err
		}
		for fi := range folds {
			if errs[fi] != nil {
				return nil, errs[fi]
			}
			out = append(out, reps[fi]...)
		}
	}
	return out, nil
}

// crossValidateFold refits a group without the points of one fold and predicts them.
func crossValidateFold(ctx context.Context, key groupKey, pts []*point, kind, fold string, keyOf func(*point) string, opts Options, progress func(Progress)) ([]SeriesReport, error) {
	var train, test []*point
	for _, p := range pts {
		if keyOf(p) == fold {
			test = append(test, p)
		} else {
			train = append(train, p)
		}
	}
	name := fmt.Sprintf("%s without %s %s", key, kind, fold)
	progress(Progress{Stage: "cv", Group: name})
	gf, err := fitGroup(ctx, key, train, pts, opts, func(Progress) {})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return []SeriesReport{failedFold(key, test, kind, err)}, nil
	}
	// A held-out role the training data lack keeps the prior (as Configure would derive it).
	prm := gf.params.clone()
	full := layoutOf(pts)
	for _, r := range full.roles {
		if _, ok := prm.coeffs[r]; !ok {
			prm.coeffs[r] = derivedRole(prm, r, gf.env.settings)
		}
	}
	if full.transfer && !gf.layout.transfer {
		prm.transfer = priorTransfer(gf.env.gpu.KVTransferPath(test[0].topo.GPUs()), gf.env.forPoint(test[0]).llm, test[0].topo)
	}
	res, err := residuals(ctx, gf.env, full, prm, test, opts, func(Progress) {}, name)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return []SeriesReport{failedFold(key, test, kind, err)}, nil
	}
	g := Group{GPU: gf.env.gpu.Name, Model: gf.env.llm.Name, Engine: key.engine}
	return seriesReports(g, test, res, kind), nil
}

// failedFold reports held-out points that could not be predicted at all.
func failedFold(key groupKey, test []*point, kind string, err error) SeriesReport {
	p := test[0]
	isl, osl := series.Requested(p.rec)
	r := SeriesReport{Source: p.rec.Source.File, GPU: key.gpu, Model: key.model, Engine: key.engine, Topology: p.config,
		ISL: isl, OSL: osl, Points: len(test), APE: map[string]APE{}, Holdout: kind}
	for _, q := range test {
		r.Flagged = append(r.Flagged, Flag{Record: q.rec.ID, Load: q.w.Load.String(), Reason: "cannot be predicted without its own rows: " + err.Error()})
	}
	return r
}

// derivedRole gives a role without data the coefficients of the closest
// fitted role, as Configure's nearestEntry does.
func derivedRole(p params, role string, s engine.Settings) model.Coeffs {
	for _, r := range map[string][]string{
		RolePrefill:    {RoleAggregated},
		RoleDecode:     {RoleAggregated},
		RoleAggregated: {RoleDecode},
	}[role] {
		if c, ok := p.coeffs[r]; ok {
			return c
		}
	}
	return model.PriorCoeffs(role == RolePrefill && s.PrefillEager)
}
