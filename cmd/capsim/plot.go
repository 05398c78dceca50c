package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/internal/atomicfile"
	"github.com/capsim/capsim/internal/progress"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plots"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
)

// plotOptions are the flags of capsim plot.
type plotOptions struct {
	out string
	// sel picks the records: --from files (default the embedded fixtures)
	// and the --gpu, --model, --engine and --source filters of capsim data.
	sel        dataOptions
	format     string // image format: png or svg (not table/json: plot writes files)
	profile    string
	numPrompts int
	seed       uint64
	quiet      bool
}

func runPlot(args []string, stdout, stderr io.Writer) error {
	var o plotOptions
	fs := newFlagSet("plot", stderr)
	fs.StringVar(&o.out, "out", "", "directory to write the figures and index.html into (required; created if missing)")
	fs.StringVar(&o.sel.gpu, "gpu", "", "only series whose GPU contains this, e.g. H20 (case-insensitive)")
	fs.StringVar(&o.sel.model, "model", "", "only series whose model contains this, e.g. qwen3")
	fs.StringVar(&o.sel.engine, "engine", "", "only series whose engine contains this, e.g. dynamo, vllm-0.9")
	fs.StringVar(&o.sel.source, "source", "", "only series whose record ID or file name starts with this, e.g. 004")
	fs.StringVar(&o.format, "format", "png", "image format: png or svg")
	addProfileFlag(fs, &o.profile)
	fs.StringSliceVar(&o.sel.files, "from", nil, "benchmark result files to plot (comma list or repeated; NAME.meta.json next to a file adds\nwhat it does not say); default: the embedded fixtures")
	fs.IntVar(&o.numPrompts, "num-prompts", 0, "requests per simulated load point (default: enough for steady state;\na burst always sends its measured number of prompts)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed of the simulations")
	addQuietFlag(fs, &o.quiet)
	if err := parseFlags(fs, args, nil, " (files go after --from)"); err != nil {
		return err
	}
	if o.out == "" {
		return fmt.Errorf("plot: --out DIR is required")
	}
	if o.format != "png" && o.format != "svg" {
		return fmt.Errorf("plot: --format must be png or svg (the image format), got %q", o.format)
	}
	if o.numPrompts < 0 {
		return fmt.Errorf("plot: --num-prompts must be positive")
	}
	ctx, stop := interruptContext()
	defer stop()
	return o.run(ctx, stdout, stderr)
}

// plotted is one figure written, for the index and the listing.
type plotted struct {
	file, title string
	gpu, model  string // as the series states them, for the index's groups
	engine      string
	points      int
	simulated   bool
	median      float64            // median absolute % error; NaN when the series was not simulated
	errors      map[string]float64 // median absolute % error by metric
}

func (o plotOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	recs, err := o.sel.load()
	if err != nil {
		return err
	}
	loaded := recs
	recs = o.sel.filter(recs)
	if len(recs) == 0 {
		return fmt.Errorf("plot: no records match the filters")
	}
	prof, err := calibrate.LoadProfile(o.profile, fixtures.DefaultProfile())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	groups := series.Group(recs)
	prog := progressTo(stderr, o.quiet)
	meter := progress.New(prog, false)
	flags := prof.Flags()
	names := map[string]int{}
	var done []plotted
	var pairs []plots.Pair
	for i, s := range groups {
		if err := ctx.Err(); err != nil {
			return err
		}
		fig, p, sp, warn := o.seriesFigure(ctx, prof, s, flags, loaded)
		if err := ctx.Err(); err != nil {
			return err
		}
		p.file = plotUniqueName(names, s.Slug()) + "." + o.format
		if err := fig.Save(filepath.Join(o.out, p.file)); err != nil {
			return err
		}
		if warn != "" {
			fmt.Fprintf(stderr, "plot: warning: %s: %s\n", p.file, warn)
		}
		errText := "not simulated"
		if !math.IsNaN(p.median) {
			errText = fmt.Sprintf("median error %.1f%%", p.median)
		}
		fmt.Fprintf(prog, "plot: [%d/%d] %s (%d points, %s)\n", i+1, len(groups), p.file, p.points, errText)
		meter.Update("plot: series", i+1, len(groups))
		done = append(done, p)
		pairs = append(pairs, sp...)
	}

	simulated := 0
	for _, p := range done {
		if p.simulated {
			simulated++
		}
	}
	summary, sumErrs := plotSummaryFigure(pairs, simulated)
	summaryFile := "summary." + o.format
	if err := summary.Save(filepath.Join(o.out, summaryFile)); err != nil {
		return err
	}
	entries := []plots.IndexEntry{{File: summaryFile, Title: fmt.Sprintf("Summary: predicted against measured, %d points of %d series", len(pairs), len(groups)), Errors: sumErrs}}
	for _, p := range done {
		entries = append(entries, plots.IndexEntry{File: p.file, Title: p.title, GPU: p.gpu, Model: p.model, Engine: p.engine, Errors: p.errors})
	}
	var index bytes.Buffer
	if err := plots.WriteIndex(&index, "capsim: calibrated simulation against measurements", entries); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(o.out, "index.html"), index.Bytes()); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Fprintf(stderr, "plot: wrote %d figures, %s and index.html to %s\n", len(done), summaryFile, o.out)
	return writePlotListing(stdout, o.out, summaryFile, done)
}

// writePlotListing prints one line per figure: file, points, median error, title.
func writePlotListing(w io.Writer, dir, summaryFile string, done []plotted) error {
	tw := newTableLeft(w)
	fmt.Fprintln(tw, "figure\tpoints\tmedian error\tseries")
	for _, p := range done {
		e := "-"
		if !math.IsNaN(p.median) {
			e = fmt.Sprintf("%.1f%%", p.median)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", p.file, p.points, e, p.title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "summary: %s\nindex:   %s\n", filepath.Join(dir, summaryFile), filepath.Join(dir, "index.html"))
	return err
}

// plotUniqueName returns name, or name-2, name-3, … when it was used before.
func plotUniqueName(used map[string]int, name string) string {
	used[name]++
	if n := used[name]; n > 1 {
		return fmt.Sprintf("%s-%d", name, n)
	}
	return name
}

// plotShortReason is the part of an anomaly or flag before its colon
// ("ttft-tail", "not explained by the cost model"): the footer has one line.
func plotShortReason(s string) string {
	s, _, _ = strings.Cut(s, ":")
	return strings.TrimSpace(s)
}

// plotPanels are the default panels, with output throughput standing in
// for request throughput when the source gives only the former.
func plotPanels(s *series.Series) []string {
	has := func(m string) bool {
		return slices.ContainsFunc(s.Records, func(r *results.Record) bool { _, ok := r.Metrics[m]; return ok })
	}
	ms := append([]string(nil), plots.DefaultPanels...)
	if !has(model.RequestThroughput) && has(model.OutputThroughput) {
		ms[0] = model.OutputThroughput
	}
	return ms
}

// seriesFigure simulates a series (predict.Series) and draws it; all are
// every record loaded. It returns the figure, what the index needs (file
// left empty), the predicted and measured pairs for the summary, and a
// warning when the series could not be simulated (the figure then shows
// the measurements only).
func (o plotOptions) seriesFigure(ctx context.Context, prof *calibrate.Profile, s *series.Series, flags map[string]string, all []results.Record) (*plots.Figure, plotted, []plots.Pair, string) {
	metrics := plotPanels(s)
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
			reasons = append(reasons, plotShortReason(a))
		}
		if f := flags[rec.ID]; f != "" {
			reasons = append(reasons, plotShortReason(f))
		}
		pts = append(pts, plots.Point{X: x, Measured: rec.Metrics, Flagged: len(reasons) > 0, FlagReason: strings.Join(reasons, ", ")})
	}
	p := plotted{points: len(pts), median: math.NaN()}
	var pairs []plots.Pair
	sp, err := predict.Series(ctx, prof, s, all, predict.SeriesOptions{Metrics: metrics, NumPrompts: o.numPrompts, Seed: o.seed})
	sub := s.Where()
	shape, errText, assumedGPU, assumedModel := "shape unknown", "not simulated", "", ""
	if err != nil {
		warn = append(warn, "not simulated: "+firstLine(err.Error()))
	} else {
		p.simulated = true
		for _, c := range sp.Curve {
			pts = append(pts, plots.Point{X: c.X, Fitted: c.Metrics})
		}
		for _, c := range sp.Comparisons {
			pairs = append(pairs, plots.Pair{Metric: c.Metric, Measured: c.Measured, Predicted: c.Predicted})
		}
		p.errors, p.median = predict.MedianErrors(sp.Comparisons), predict.MedianError(sp.Comparisons)
		shape = fmt.Sprintf("ISL %d / OSL %d", sp.ISL, sp.OSL)
		if m := s.First().Workload.OSLMax; m > 0 && m != sp.OSL {
			shape = fmt.Sprintf("ISL %d / OSL %d (max %d)", sp.ISL, sp.OSL, m)
		}
		errText = "no measured metric to compare"
		if !math.IsNaN(p.median) {
			errText = fmt.Sprintf("median error %.1f%%", p.median)
			if line := plots.ErrorLine(p.errors); line != "" {
				errText = line // per metric: a miss on one is not averaged away
			}
		}
		if sp.Target.Assumed {
			assumedGPU, assumedModel = sp.Target.GPU, sp.Target.Model
		}
		if sp.Costs != "" {
			sub = append(sub, "simulated with "+sp.Costs+" costs")
		}
		sub = append(sub, sp.Notes...)
	}
	p.title = fmt.Sprintf("%s — %s — %s", s.Label(assumedGPU, assumedModel), shape, errText)
	first := s.First()
	p.gpu, p.model, p.engine = first.System.GPU, first.System.Model, first.System.Engine
	if err != nil {
		sub = append(sub, "not simulated: "+firstLine(err.Error()))
	}
	fig := plots.SeriesFigure(plots.Series{
		Title:    p.title,
		Subtitle: strings.Join(sub, " · "),
		XLabel:   plotXLabel(s.Kind),
		Metrics:  metrics,
		Points:   pts,
	})
	return fig, p, pairs, strings.Join(warn, "; ")
}

func plotXLabel(kind model.LoadKind) string {
	if kind == model.Burst {
		return "burst size (prompts sent at once)"
	}
	return plots.XLabelFor(kind)
}

// plotSummaryFigure draws every predicted value against its measurement and
// returns the per-metric median absolute % errors for the index.
func plotSummaryFigure(pairs []plots.Pair, nSeries int) (*plots.Figure, map[string]float64) {
	var cs []predict.Comparison
	for _, p := range pairs {
		if e, ok := model.AbsPctError(p.Measured, p.Predicted); ok {
			cs = append(cs, predict.Comparison{Metric: p.Metric, Measured: p.Measured, Predicted: p.Predicted, AbsPctError: e})
		}
	}
	med := predict.MedianErrors(cs)
	fig := plots.SummaryFigure(plots.Summary{
		Title:    "Calibrated simulation against measurements",
		Subtitle: fmt.Sprintf("every measured point of the %d simulated series, simulated at its own load", nSeries),
		Pairs:    pairs,
	})
	return fig, med
}
