package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/internal/atomicfile"
	"github.com/capsim/capsim/internal/progress"
	"github.com/capsim/capsim/model"
)

// fitOptions are the flags of capsim fit.
type fitOptions struct {
	from     []string // result files; empty means the embedded fixtures
	out      string   // where to write the profile; "" writes none
	format   string
	cv       bool
	maxEvals int
	quick    bool
	system   systemFlags
	assume   bool // search the catalog for an unstated GPU or model
	quiet    bool
}

// fitContext fits under a context Ctrl-C cancels: the fit stops between
// simulations and writes nothing.
func fitContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fit", stderr)
	var o fitOptions
	fs.StringSliceVar(&o.from, "from", nil, "result files to fit, in any format capsim data reads (comma list, repeated, or a pattern such as 'vllm-*.json'); default: the embedded seeds, with the public corpus as the transfer pool (with --cv: seeds and corpus fitted and held out together)")
	fs.StringVar(&o.out, "out", "", "write the fitted profile (JSON, schema "+calibrate.SchemaV1+") to this file")
	f := formatFlag(fs)
	fs.BoolVar(&o.cv, "cv", false, "add leave-one-configuration-out and leave-one-shape-out errors, and leave-one-GPU-, engine-version- and source-out errors with band coverage")
	fs.IntVar(&o.maxEvals, "max-evals", 0, fmt.Sprintf("Nelder–Mead evaluations per group in stage 2 (0: default %d)", calibrate.DefaultMaxEvals))
	fs.BoolVar(&o.quick, "quick", false, "stage-1 least squares only (no simulation in the loop)")
	addSystemFlags(fs, &o.system, "--from files")
	addQuietFlag(fs, &o.quiet)
	fs.BoolVar(&o.assume, "assume-gpu", false, "when the --from files name no GPU (or model), fit the catalog pair that explains them best instead of asking for --gpu")
	if err := parseFlags(fs, args, f, " (files go after --from)"); err != nil {
		return err
	}
	o.format = *f
	if o.maxEvals < 0 {
		return fmt.Errorf("fit: --max-evals must be 0 (the default, %d) or more, got %d", calibrate.DefaultMaxEvals, o.maxEvals)
	}
	if len(o.from) == 0 && (o.system.given() || o.assume) {
		return fmt.Errorf("fit: --gpu, --model, --engine, --topology and --assume-gpu apply to --from files")
	}
	recs, pool, err := fixtures.ProfileRecords(o.cv)
	if len(o.from) > 0 {
		recs, pool, err = nil, nil, nil
		recs, err = loadRecords(o.from)
	}
	if err != nil {
		return err
	}
	if err := o.system.apply(recs); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	// The user's own data never get a GPU silently: ask, unless --assume-gpu.
	opts := calibrate.Options{CV: o.cv, MaxEvals: o.maxEvals, SkipRefine: o.quick, RequireStated: len(o.from) > 0 && !o.assume, Pool: pool}
	prof, rep, err := calibrate.Fit(ctx, recs, opts, fitProgress(progressTo(stderr, o.quiet)))
	var unstated *calibrate.UnstatedError
	if errors.As(err, &unstated) {
		var missing []string
		if unstated.GPU {
			missing = append(missing, "GPU (--gpu, e.g. --gpu H100)")
		}
		if unstated.Model {
			missing = append(missing, "model (--model, e.g. --model Qwen/Qwen3-8B)")
		}
		files := "the records of " + strings.Join(unstated.Sources, ", ")
		return fmt.Errorf("fit: %s do not name the %s; say which, or give --assume-gpu to fit the catalog pair that explains them best",
			files, strings.Join(missing, " or the "))
	}
	if errors.Is(err, context.Canceled) {
		return errors.New("fit: interrupted; no profile written")
	} else if err != nil {
		return err
	}
	if o.out != "" {
		b, err := prof.Marshal()
		if err != nil {
			return err
		}
		if err := atomicfile.Write(o.out, b); err != nil {
			return fmt.Errorf("fit: %w", err)
		}
		fmt.Fprintf(stderr, "fit: wrote %s (%s)\n", o.out, prof.Size())
	}
	warn(stderr, "fit", rep.Warnings...)
	return writeOutput(stdout, o.format, rep, func(w io.Writer) error { return writeFitTable(w, rep) })
}

// fitProgress prints each stage of each group as it goes, with the time
// left in the stage (refinement's step count is an upper bound, so its
// estimate is too).
func fitProgress(w io.Writer) func(calibrate.Progress) {
	m := progress.New(w, false)
	return func(p calibrate.Progress) {
		m.Update(fmt.Sprintf("fit: %s: %s", p.Group, p.Stage), p.Done, p.Total)
	}
}

// apeCell is "median/max"; "tok" marks a series judged on token throughput.
func apeCell(s calibrate.SeriesReport, m string) string {
	a, judged, ok := s.Judged(m)
	switch {
	case !ok:
		return "-"
	case judged != m:
		return "tok " + apeText(a)
	}
	return apeText(a)
}

func apeText(a calibrate.APE) string { return fmt.Sprintf("%.1f/%.0f", a.Median, a.Max) }

func writeSeriesTable(w io.Writer, rows []calibrate.SeriesReport, cv bool) error {
	t := newTable(w)
	head := "source\tgpu\tmodel\tengine\ttopology\tISL:OSL\tpoints\treq/s %\tTTFT %\tTPOT %\tE2E %\tflagged\t"
	if cv {
		head = "held out\t" + head
	}
	fmt.Fprintln(t, head)
	for _, s := range rows {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%g:%g\t%d\t%s\t%s\t%s\t%s\t%d\t", path.Base(s.Source), cmp.Or(s.GPU, "-"), cmp.Or(model.ShortName(s.Model), "-"), s.Engine,
			s.Topology, s.ISL, s.OSL, s.Points, apeCell(s, model.RequestThroughput), apeCell(s, model.MeanTTFT),
			apeCell(s, model.MeanTPOT), apeCell(s, model.MeanE2EL), len(s.Flagged))
		if cv {
			line = s.Holdout + "\t" + line
		}
		fmt.Fprintln(t, line)
	}
	return t.Flush()
}

func errCell(apes map[string]calibrate.APE, m string) string {
	if a, ok := apes[m]; ok {
		return apeText(a)
	}
	return "-"
}

func writeHoldoutTable(w io.Writer, rows []calibrate.HoldoutReport) error {
	t := newTable(w)
	fmt.Fprintln(t, "held out	fold	points	req/s %	out tok/s %	TTFT %	TPOT %	E2E %	coverage	failed	")
	for _, h := range rows {
		cov := "-"
		if c, ok := h.Coverage["all"]; ok {
			cov = fmt.Sprintf("%.2f", c)
		}
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", h.Kind, path.Base(h.Fold), h.Points,
			errCell(h.APE, model.RequestThroughput), errCell(h.APE, model.OutputThroughput), errCell(h.APE, model.MeanTTFT),
			errCell(h.APE, model.MeanTPOT), errCell(h.APE, model.MeanE2EL), cov, h.Failed)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, h := range rows {
		if h.Fold != "all" || len(h.CoverageByClass) == 0 {
			continue
		}
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(h.CoverageByClass)) {
			cc := h.CoverageByClass[c]
			parts = append(parts, fmt.Sprintf("%s %.2f (%d)", c, cc.Share, cc.N))
		}
		if _, err := fmt.Fprintf(w, "coverage by GPU class, %s: %s\n", h.Kind, strings.Join(parts, ", ")); err != nil {
			return err
		}
	}
	return nil
}

func writeFitTable(w io.Writer, rep *calibrate.Report) error {
	fmt.Fprintln(w, "In-sample absolute % error, median/max per series:")
	if err := writeSeriesTable(w, rep.Series, false); err != nil {
		return err
	}
	if len(rep.CV) > 0 {
		fmt.Fprintln(w, "\nHeld-out absolute % error (each configuration or shape fitted without its own rows), median/max:")
		if err := writeSeriesTable(w, rep.CV, true); err != nil {
			return err
		}
	}
	if len(rep.Holdout) > 0 {
		fmt.Fprintln(w, "\nLeave-one-GPU-, engine-version- and source-out: every record of the fold refitted without it and predicted as")
		fmt.Fprintln(w, "predict would (its GPU, model, engine label, topology and stated settings); absolute % error median/max, and the")
		fmt.Fprintln(w, "share of measurements inside the ±1σ band (coverage, target 0.55–0.80). The in-sample row predicts the same")
		fmt.Fprintln(w, "records the same way from the full profile, each priced by its own group: the floor the folds are read against.")
		if err := writeHoldoutTable(w, rep.Holdout); err != nil {
			return err
		}
	}
	var flagged []string
	for _, s := range rep.Series {
		for _, f := range s.Flagged {
			flagged = append(flagged, fmt.Sprintf("  %s (%s %s, %s): %s", f.Record, s.Engine, s.Topology, f.Load, f.Reason))
		}
	}
	if len(flagged) > 0 {
		fmt.Fprintln(w, "\nFlagged points (kept in the fit, down-weighted by the robust loss):")
		fmt.Fprintln(w, strings.Join(flagged, "\n"))
	}
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w, "\nWhat the data determine:")
		for _, n := range rep.Notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	return nil
}
