package figures

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/internal/atomicfile"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plots"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
)

// Options choose how WriteDir simulates and writes.
type Options struct {
	// Format is the image format: "png" or "svg".
	Format string
	// NumPrompts, when positive, replaces the prompts of every simulated
	// point (a burst always sends its measured number).
	NumPrompts int
	// Seed of the simulations.
	Seed uint64
	// Done, if set, is called after each series' figure is written.
	Done func(i, n int, f Figure)
}

// Figure is one series' figure as written.
type Figure struct {
	File, Title string
	// GPU, Model and Engine are as the series states them, for the index's groups.
	GPU, Model, Engine string
	Points             int
	Simulated          bool
	// Median is the median absolute % error; NaN when not simulated.
	Median float64
	// Errors are the median absolute % errors by metric.
	Errors map[string]float64
	// Warning says what was left out or why the series was not simulated.
	Warning string
}

// Dir is what WriteDir wrote, file names relative to the directory.
type Dir struct {
	Figures []Figure
	Summary string // the summary figure
	Index   string // index.html
}

// WriteDir simulates every series of recs with prof and writes one figure
// per series, the summary figure and index.html into dir (created if
// missing); all are every record loaded, the siblings predict.Series uses.
func WriteDir(ctx context.Context, prof *calibrate.Profile, dir string, recs, all []results.Record, opts Options) (*Dir, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("figures: no records to plot")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("figures: %w", err)
	}
	groups := series.Group(recs)
	flags := prof.Flags()
	names := map[string]int{}
	out := &Dir{Summary: "summary." + opts.Format, Index: "index.html"}
	var pairs []plots.Pair
	simulated := 0
	for i, s := range groups {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fig, f, sp := seriesFigure(ctx, prof, s, flags, all, opts)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f.File = UniqueName(names, FileName(s)) + "." + opts.Format
		if err := fig.Save(filepath.Join(dir, f.File)); err != nil {
			return nil, err
		}
		if f.Simulated {
			simulated++
		}
		if opts.Done != nil {
			opts.Done(i, len(groups), f)
		}
		out.Figures = append(out.Figures, f)
		pairs = append(pairs, sp...)
	}
	summary, sumErrs := summaryFigure(pairs, simulated)
	if err := summary.Save(filepath.Join(dir, out.Summary)); err != nil {
		return nil, err
	}
	entries := []plots.IndexEntry{{File: out.Summary, Title: fmt.Sprintf("Summary: predicted against measured, %d points of %d series", len(pairs), len(groups)), Errors: sumErrs}}
	for _, f := range out.Figures {
		entries = append(entries, plots.IndexEntry{File: f.File, Title: f.Title, GPU: f.GPU, Model: f.Model, Engine: f.Engine, Errors: f.Errors})
	}
	var index bytes.Buffer
	if err := plots.WriteIndex(&index, "capsim: calibrated simulation against measurements", entries); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(dir, out.Index), index.Bytes()); err != nil {
		return nil, fmt.Errorf("figures: %w", err)
	}
	return out, nil
}

// UniqueName returns name, or name-2, name-3, … when it was used before.
func UniqueName(used map[string]int, name string) string {
	used[name]++
	if n := used[name]; n > 1 {
		return fmt.Sprintf("%s-%d", name, n)
	}
	return name
}

// shortReason is the part of an anomaly or flag before its colon
// ("ttft-tail", "not explained by the cost model"): the footer has one line.
func shortReason(s string) string {
	s, _, _ = strings.Cut(s, ":")
	return strings.TrimSpace(s)
}

// panels are the default panels, with output throughput standing in for
// request throughput when the source gives only the former.
func panels(s *series.Series) []string {
	has := func(m string) bool {
		return slices.ContainsFunc(s.Records, func(r *results.Record) bool { _, ok := r.Metrics[m]; return ok })
	}
	ms := append([]string(nil), plots.DefaultPanels...)
	if !has(model.RequestThroughput) && has(model.OutputThroughput) {
		ms[0] = model.OutputThroughput
	}
	return ms
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// seriesFigure simulates a series (predict.Series) and draws it. It returns
// the figure, what the index needs (File left empty) and the predicted and
// measured pairs for the summary; when the series could not be simulated
// the figure shows the measurements only and the Figure's Warning says why.
func seriesFigure(ctx context.Context, prof *calibrate.Profile, s *series.Series, flags map[string]string, all []results.Record, opts Options) (*plots.Figure, Figure, []plots.Pair) {
	metrics := panels(s)
	var pts []plots.Point
	var warn []string
	for _, rec := range s.Records {
		x := series.X(rec)
		if !(x > 0) || math.IsInf(x, 0) {
			warn = append(warn, fmt.Sprintf("record %s has no place on the load axis (%s with no prompt count); left out", rec.ID, rec.Workload.Load))
			continue
		}
		var reasons []string
		for _, a := range rec.Anomalies {
			reasons = append(reasons, shortReason(a))
		}
		if f := flags[rec.ID]; f != "" {
			reasons = append(reasons, shortReason(f))
		}
		pts = append(pts, plots.Point{X: x, Measured: rec.Metrics, Flagged: len(reasons) > 0, FlagReason: strings.Join(reasons, ", ")})
	}
	p := Figure{Points: len(pts), Median: math.NaN()}
	var pairs []plots.Pair
	sp, err := predict.Series(ctx, prof, s, all, predict.SeriesOptions{Metrics: metrics, NumPrompts: opts.NumPrompts, Seed: opts.Seed})
	sub := s.Where()
	shape, errText, assumedGPU, assumedModel := "shape unknown", "not simulated", "", ""
	if err != nil {
		warn = append(warn, "not simulated: "+firstLine(err.Error()))
	} else {
		p.Simulated = true
		for _, c := range sp.Curve {
			pts = append(pts, plots.Point{X: c.X, Fitted: c.Metrics})
		}
		for _, c := range sp.Comparisons {
			pairs = append(pairs, plots.Pair{Metric: c.Metric, Measured: c.Measured, Predicted: c.Predicted})
		}
		p.Errors, p.Median = predict.MedianErrors(sp.Comparisons), predict.MedianError(sp.Comparisons)
		shape = fmt.Sprintf("ISL %d / OSL %d", sp.ISL, sp.OSL)
		if m := s.First().Workload.OSLMax; m > 0 && m != sp.OSL {
			shape = fmt.Sprintf("ISL %d / OSL %d (max %d)", sp.ISL, sp.OSL, m)
		}
		errText = "no measured metric to compare"
		if !math.IsNaN(p.Median) {
			errText = fmt.Sprintf("median error %.1f%%", p.Median)
			if line := plots.ErrorLine(p.Errors); line != "" {
				errText = line // per metric: a miss on one is not averaged away
			}
		}
		if sp.Target.Assumed {
			assumedGPU, assumedModel = sp.Target.GPU.Name, sp.Target.LLM.Name
		}
		if sp.Costs != "" {
			sub = append(sub, "simulated with "+sp.Costs+" costs")
		}
		sub = append(sub, sp.Notes...)
	}
	p.Title = fmt.Sprintf("%s — %s — %s", s.Label(assumedGPU, assumedModel), shape, errText)
	first := s.First()
	p.GPU, p.Model, p.Engine = first.System.GPU, first.System.Model, first.System.Engine
	if err != nil {
		sub = append(sub, "not simulated: "+firstLine(err.Error()))
	}
	p.Warning = strings.Join(warn, "; ")
	fig := plots.SeriesFigure(plots.Series{
		Title:    p.Title,
		Subtitle: strings.Join(sub, " · "),
		XLabel:   xLabel(s.Kind),
		Metrics:  metrics,
		Points:   pts,
	})
	return fig, p, pairs
}

func xLabel(kind model.LoadKind) string {
	if kind == model.Burst {
		return "burst size (prompts sent at once)"
	}
	return plots.XLabelFor(kind)
}

// summaryFigure draws every predicted value against its measurement and
// returns the per-metric median absolute % errors for the index.
func summaryFigure(pairs []plots.Pair, nSeries int) (*plots.Figure, map[string]float64) {
	var cs []predict.Comparison
	for _, p := range pairs {
		if e, ok := model.AbsPctError(p.Measured, p.Predicted); ok {
			cs = append(cs, predict.Comparison{Metric: p.Metric, Measured: p.Measured, Predicted: p.Predicted, AbsPctError: e})
		}
	}
	fig := plots.SummaryFigure(plots.Summary{
		Title:    "Calibrated simulation against measurements",
		Subtitle: fmt.Sprintf("every measured point of the %d simulated series, simulated at its own load", nSeries),
		Pairs:    pairs,
	})
	return fig, predict.MedianErrors(cs)
}
