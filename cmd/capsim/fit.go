package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/internal/atomicfile"
	"github.com/capsim/capsim/internal/progress"
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
	return writeOutput(stdout, o.format, rep, func(w io.Writer) error { return calibrate.WriteReportTable(w, rep) })
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
