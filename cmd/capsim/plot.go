package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/figures"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/internal/progress"
	"github.com/capsim/capsim/internal/textout"
	"github.com/capsim/capsim/predict"
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
	fs.StringVar(&o.sel.gpu, "gpu", "", "with --from: the GPU the files measured, e.g. H100 (states or overrides theirs);\nwithout: only series whose GPU contains this, e.g. H20 (case-insensitive)")
	fs.StringVar(&o.sel.model, "model", "", "with --from: the model the files measured; without: only series whose model contains this, e.g. qwen3")
	fs.StringVar(&o.sel.engine, "engine", "", "with --from: the engine and version the files measured, e.g. vllm-0.10.1;\nwithout: only series whose engine contains this, e.g. dynamo, vllm-0.9")
	fs.StringVar(&o.sel.topology, "topology", "", "with --from: the deployment the files measured: NxTPk or \"prefill NxTPk + decode MxTPk\"")
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
	all, err := loadRecords(o.sel.files)
	if err != nil {
		return err
	}
	// As for data, fit and validate: --from files get their system stated.
	if err := o.sel.stateSystem(all, "plot", "--from files"); err != nil {
		return err
	}
	recs := o.sel.filter(all)
	if len(recs) == 0 {
		return fmt.Errorf("plot: no records match the filters")
	}
	prof, err := loadProfile(o.profile, stderr)
	if err != nil {
		return err
	}
	prog := progressTo(stderr, o.quiet)
	meter := progress.New(prog, false)
	ctx, stop := interruptContext()
	defer stop()
	dir, err := figures.WriteDir(ctx, prof, o.out, recs, all, figures.Options{Format: o.format, NumPrompts: o.numPrompts, Seed: o.seed,
		Done: func(i, n int, f figures.Figure) {
			if f.Warning != "" {
				fmt.Fprintf(stderr, "plot: warning: %s: %s\n", f.File, f.Warning)
			}
			fmt.Fprintf(prog, "plot: [%d/%d] %s (%d points, %s)\n", i+1, n, f.File, f.Points, orText(f.Median, "median error %.1f%%", "not simulated"))
			meter.Update("plot: series", i+1, n)
		}})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Fprintf(stderr, "plot: wrote %d %s, %s and index.html to %s\n", len(dir.Figures), textout.Plural(len(dir.Figures), "figure", "figures"), dir.Summary, o.out)
	tw := newTableLeft(stdout)
	fmt.Fprintln(tw, "figure\tpoints\tmedian error\tseries")
	for _, f := range dir.Figures {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", f.File, f.Points, orText(f.Median, "%.1f%%", "-"), f.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "summary: %s\nindex:   %s\n", filepath.Join(o.out, dir.Summary), filepath.Join(o.out, dir.Index))
	return err
}

// orText formats v, or is absent when v is NaN.
func orText(v float64, format, absent string) string {
	if math.IsNaN(v) {
		return absent
	}
	return fmt.Sprintf(format, v)
}

// plotPareto draws a plan's simulated deployments and Pareto frontier (capsim plan --plot FILE).
var plotPareto = figures.WritePareto

// plotPrediction draws predicted curves (capsim predict --plot FILE), the
// fixture measurements of the same configuration overlaid, and those of
// prof, the user's profile read from the file profile ("": the embedded one).
func plotPrediction(path string, preds []predict.Prediction, prof *calibrate.Profile, profile string, stderr io.Writer) error {
	recs, err := fixtures.Records()
	if err != nil {
		return fmt.Errorf("predict --plot: reading the fixtures for the overlay: %w", err)
	}
	from := "the fixtures"
	if profile != "" {
		// A user's profile: overlay the records it was fitted from too.
		own, missing, err := figures.ProfileRecords(prof, profile)
		if err != nil {
			return fmt.Errorf("predict --plot: reading %s's sources for the overlay: %w", profile, err)
		}
		for _, m := range missing {
			warn(stderr, "capsim", fmt.Sprintf("predict --plot: %s, a source of %s, is not found: its points are not overlaid", m, profile))
		}
		seen := map[string]bool{}
		for _, r := range recs {
			seen[r.ID] = true
		}
		for _, r := range own {
			if !seen[r.ID] {
				recs = append(recs, r)
			}
		}
		from = "the fixtures or " + profile + "'s sources"
	}
	if err := figures.WritePrediction(path, preds, recs, from); err != nil {
		return fmt.Errorf("predict --plot: %w", err)
	}
	return nil
}
