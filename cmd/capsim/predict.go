package main

import (
	"fmt"
	"github.com/capsim/capsim/calibrate"
	"io"

	"github.com/capsim/capsim/deploy"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

type predictOptions struct {
	deploymentFlags
	loadListFlags
	modelName             string
	isl, osl              int
	islGiven, oslGiven    bool // --isl 0 is a bad value, not an absent flag
	numPrompts            int
	seed                  uint64
	format, plot          string
	noBand, exactOutput   bool
	prefixHit             float64
	mode, export, dataset string
	sharingFlags
	stated func() (engine.Stated, error)
}

func runPredict(args []string, stdout, stderr io.Writer) error {
	var o predictOptions
	fs := newFlagSet("predict", stderr)
	fs.StringVar(&o.modelName, "model", "", "model: a catalog name or Hugging Face id, e.g. Qwen3-32B, or a config.json (or its directory)\n(default: the only calibrated model for the GPU)")
	addDeploymentFlags(fs, &o.deploymentFlags, "required", "default: matches the topology")
	fs.IntVar(&o.isl, "isl", 0, "prompt tokens per request (default: every calibrated shape)")
	fs.IntVar(&o.osl, "osl", 0, "output tokens per request")
	addLoadListFlags(fs, &o.loadListFlags, "default 1,2,4,…,256")
	fs.IntVar(&o.numPrompts, "num-prompts", 0, fmt.Sprintf("steady state: measured requests of a point's first run, doubled until its means and p99s are stable\n(default: %g minutes of arrivals or %d × concurrency, at least %d); replay: requests sent (default %g s of arrivals or %d × concurrency, at least %d)",
		predict.SteadySeconds/60, predict.PromptsPerClient, predict.SteadyMinPrompts, predict.ReplaySeconds, predict.PromptsPerClient, predict.ReplayMinPrompts))
	fs.StringVar(&o.mode, "mode", string(sim.SteadyState), "steady-state (warm-up and drain left out, run until stable) or benchmark-replay (the finite run a benchmark makes: ramp, drain and all)")
	fs.StringVar(&o.export, "export", "", "write this deployment's deployable configs to this directory\n(vllm serve command lines, Dynamo config, Kubernetes manifests, README with the validate command)")
	fs.Float64Var(&o.prefixHit, "prefix-hit-rate", 0, hitRateHelp)
	fs.StringVar(&o.dataset, "dataset", "", datasetHelp)
	addSharingFlags(fs, &o.sharingFlags)
	o.stated = addEngineSettingsFlags(fs, "the calibrated deployment's, else the engine version's on the GPU")
	fs.BoolVar(&o.exactOutput, "exact-output", false, "every output runs to exactly its shape's output length, as a benchmark that sends ignore_eos gets them\n(capsim bench, vllm bench serve --ignore-eos): closed loops then run in lock-step; by default outputs spread ±"+workload.OutputSpreadText+" around it, as real traffic's do")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed")
	fs.BoolVar(&o.noBand, "no-band", false, "skip the uncertainty band (three times faster)")
	fs.StringVar(&o.plot, "plot", "", "also draw the predicted curves to this .png or .svg file")
	format := formatFlag(fs)
	if err := parseFlags(fs, args, format, ""); err != nil {
		return err
	}
	o.format = *format
	o.islGiven, o.oslGiven = fs.Changed("isl"), fs.Changed("osl")
	preds, prof, err := o.predict(stderr)
	if err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotPrediction(o.plot, preds, prof, o.profile, stderr); err != nil {
			return err
		}
	}
	if o.export != "" {
		topo, _ := o.topology()
		spec, err := predictSpec(preds, topo, o.profile)
		if err != nil {
			return err
		}
		if err := writeExport(stderr, o.export, []deploy.Spec{spec}); err != nil {
			return err
		}
		if len(spec.OtherShapes) > 0 {
			warn(stderr, "capsim", fmt.Sprintf("--export tabulates and validates ISL %d / OSL %d only; give --isl and --osl to export another of the %d shapes", spec.ISL, spec.OSL, len(preds)))
		}
	}
	if o.format == "json" {
		if len(preds) == 1 {
			return writeJSON(stdout, preds[0])
		}
		return writeJSON(stdout, map[string]any{"predictions": preds})
	}
	if o.format == "csv" {
		return predict.WriteCSV(stdout, preds)
	}
	return predict.WriteTable(tableOutput(stdout, o.format), preds)
}

// predictFlags name the predict.Options fields a predict.Options.Validate error names.
var predictFlags = map[string]string{"ISL": "--isl", "OSL": "--osl", "NumPrompts": "--num-prompts", "PrefixHitRate": "--prefix-hit-rate",
	"ExactOutput": "--exact-output", "Dataset": "--dataset", "Mode": "--mode"}

func (o predictOptions) predict(stderr io.Writer) ([]predict.Prediction, *calibrate.Profile, error) {
	topo, err := o.topology()
	if err != nil {
		return nil, nil, err
	}
	loads, err := parseLoads(o.concurrency, o.rate, o.burstiness)
	if err != nil {
		return nil, nil, err
	}
	// 0 is the library's "every calibrated shape": given, it is a bad value.
	if (o.islGiven && o.isl == 0) || (o.oslGiven && o.osl == 0) {
		return nil, nil, fmt.Errorf("--isl and --osl must be positive")
	}
	sharing, implied, err := o.sharing(o.isl)
	if err != nil {
		return nil, nil, err
	}
	if implied > 0 {
		o.isl = implied
	}
	opts := predict.Options{Loads: loads, NoBand: o.noBand, Mode: sim.Mode(o.mode), Workload: workload.Workload{ISL: o.isl, OSL: o.osl,
		NumPrompts: o.numPrompts, Seed: o.seed, PrefixHitRate: o.prefixHit, Dataset: o.dataset, ExactOutput: o.exactOutput, Sharing: sharing}}
	if err := optionFlags(opts.Validate(), "", predictFlags); err != nil {
		return nil, nil, err
	}
	stated, err := o.stated()
	if err != nil {
		return nil, nil, err
	}
	prof, err := loadProfile(o.profile, stderr)
	if err != nil {
		return nil, nil, err
	}
	target, err := o.target(prof, o.modelName, topo)
	if err != nil {
		return nil, nil, err
	}
	target.Stated = stated
	opts.Target = target
	ctx, stop := interruptContext()
	defer stop()
	preds, err := predict.Run(ctx, prof, opts)
	if err != nil {
		return nil, nil, flagHint(err)
	}
	for _, p := range preds {
		warn(stderr, "capsim", p.Warnings...)
	}
	return preds, prof, nil
}
