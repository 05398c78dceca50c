package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/loadgen"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// validateOptions are capsim validate's flags: bench's for the server and
// the workload, predict's for the deployment.
type validateOptions struct {
	results string // compare this bench result file instead of measuring

	serverFlags
	loadListFlags
	servedModel string

	deploymentFlags
	modelName, format string
	stated            func() (engine.Stated, error)
}

// validateContext validates under a context Ctrl-C cancels.
func validateContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o validateOptions
	fs := newFlagSet("validate", stderr)
	fs.StringVar(&o.results, "results", "", "compare this bench result file (vLLM result JSON; NAME.meta.json beside it may name GPU, model, engine, topology) instead of measuring a server")
	addServerFlags(fs, &o.serverFlags, "prompts, arrival times and the simulation (default: the fit's, so a record validates as the fit simulated it)", calibrate.FitSeed)
	fs.StringVar(&o.modelName, "model", "", "model: the catalog model (or config.json) predicted and, unless --served-model is given, the name requested")
	fs.StringVar(&o.servedModel, "served-model", "", "model name sent to the server when it differs from --model")
	addLoadListFlags(fs, &o.loadListFlags, "e.g. 1,4,16")
	addDeploymentFlags(fs, &o.deploymentFlags, "default in --results mode: the file's metadata", "default: the file's metadata, else matches the topology")
	o.stated = addEngineSettingsFlags(fs, "the file's metadata, else the calibrated deployment's or the engine version's")
	format := formatFlag(fs)
	if err := parseFlags(fs, args, format, ""); err != nil {
		return err
	}
	o.format = *format
	prof, err := loadProfile(o.profile, stderr)
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	var v *predict.Validation
	if o.results != "" {
		v, err = o.fromFile(ctx, prof, fs.Changed)
	} else {
		v, err = o.live(ctx, prof, stderr)
	}
	if err != nil {
		return err
	}
	v.Profile = cmp.Or(o.profile, "embedded default")
	v.Summarise()
	warn(stderr, "capsim", v.Warnings...)
	if o.format == "csv" {
		return predict.WriteValidationCSV(stdout, v)
	}
	return writeOutput(stdout, o.format, v, func(w io.Writer) error { return predict.WriteValidationTable(w, v) })
}

// live predicts, then benchmarks the server at the same loads.
func (o *validateOptions) live(ctx context.Context, prof *calibrate.Profile, stderr io.Writer) (*predict.Validation, error) {
	if o.results == "" && o.url == "" {
		return nil, errors.New("validate: give --url to measure a server, or --results FILE to compare a bench result file")
	}
	served := cmp.Or(o.servedModel, model.ServedName(o.modelName))
	if served == "" {
		return nil, errors.New("validate: --model is required with --url")
	}
	closed, err := parseLoads(o.concurrency, "", o.burstiness)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	base, loads, err := o.options("validate", served, closed, o.rate, o.burstiness)
	if err != nil {
		return nil, err
	}
	topo, err := o.topology()
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	target, err := o.target(prof, o.modelName, topo)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	if target.Stated, err = o.stated(); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	// Predict first: it takes moments and catches a bad deployment before any traffic.
	// Without a dataset every request asks for max_tokens OSL with
	// ignore_eos: simulated so, every output exactly OSL long.
	shape := workload.Workload{ISL: o.isl, OSL: o.osl, ExactOutput: o.dataset == "", NumPrompts: o.numPrompts, Seed: o.seed, Dataset: o.dataset}
	preds, err := predict.Run(ctx, prof, predict.Options{Target: target, Workload: shape, Loads: loads, NoBand: true, Mode: sim.BenchmarkReplay})
	if err != nil {
		return nil, fmt.Errorf("validate: %w", flagHint(err))
	}
	pred := preds[0]
	v := predict.NewValidation(loadgen.RedactURL(o.url), pred)

	if base.Endpoint == loadgen.Chat {
		v.Warnings = append(v.Warnings, "chat prompts are text: measured input lengths are approximate")
	}
	done, err := o.measure(ctx, "validate", base, loads, stderr, func(r *loadgen.Result) error {
		if r.Completed == 0 && !r.Partial {
			return fmt.Errorf("%s: every request failed%s", r.Load, r.FailureNote())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	ms := make([]predict.Measured, len(done))
	for i, r := range done {
		if r.OutputTokenMismatches > 0 && o.dataset == "" {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s: %d of %d completed requests returned another number of output tokens than the %d they asked for with ignore_eos, which the prediction assumed", r.Load, r.OutputTokenMismatches, r.Completed, o.osl))
		}
		ms[i] = predict.Measured{Load: r.Load, Metrics: r.Metrics(), NumPrompts: r.NumPrompts, Completed: r.Completed, Failed: r.Failed, FailureNote: r.FailureNote()}
	}
	v.AddMeasured(shape, pred, ms)
	return v, nil
}

// fromFile predicts every record of a bench result file and compares.
// Flags given explicitly (changed) override what the file and its metadata say.
func (o *validateOptions) fromFile(ctx context.Context, prof *calibrate.Profile, changed func(string) bool) (*predict.Validation, error) {
	if o.url != "" {
		return nil, errors.New("validate: give --url or --results, not both")
	}
	for _, f := range []string{"isl", "osl", "dataset", "concurrency", "rate", "num-prompts", "max-concurrency", "burstiness"} {
		if changed(f) {
			return nil, fmt.Errorf("validate: --%s does not apply with --results (loads, shape and dataset come from the file)", f)
		}
	}
	for _, f := range []string{"served-model", "endpoint", "timeout", "api-key-env", "skip-check", "out"} {
		if changed(f) {
			return nil, fmt.Errorf("validate: --%s applies to a live server (--url), not to --results", f)
		}
	}
	recs, err := results.LoadPatterns([]string{o.results})
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	if err := o.checkDPAttention(); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	over := calibrate.Override{GPU: o.gpu, Model: o.modelName, Engine: o.engine, Router: o.router, DPAttention: o.dpAttention, KVLink: o.kvLink}
	if over.Stated, err = o.stated(); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	// A disaggregated record refuses it when priced (calibrate.StatedFrontend).
	if over.Frontend, err = statedFrontend(o.frontendMS, changed("frontend-ms"), model.Topology{}); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	if o.topologyGiven() {
		if over.Topology, err = o.topology(); err != nil {
			return nil, fmt.Errorf("validate: %w", err)
		}
	}
	for _, r := range recs {
		where := fmt.Sprintf("%s line %d", o.results, r.Source.Line)
		switch {
		case r.System.Topology.GPUs() == 0 && over.Topology.GPUs() == 0:
			return nil, fmt.Errorf("validate: %s: no topology: give --replicas or --prefill/--decode, or a topology in %s", where, results.MetaPath(o.results))
		case r.System.GPU == "" && o.gpu == "":
			return nil, fmt.Errorf("validate: %s: no GPU: give --gpu, or a gpu in %s", where, results.MetaPath(o.results))
		}
	}
	v, err := predict.ValidateRecords(ctx, prof, o.results, recs, predict.RecordOptions{Override: over, Seed: o.seed})
	if err != nil {
		return nil, fmt.Errorf("validate: %w", flagHint(err))
	}
	return v, nil
}
