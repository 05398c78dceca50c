package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/progress"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plan"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/workload"
)

type planOptions struct {
	modelName, gpuCost, engine, router  string
	gpus                                []string
	tps                                 []int
	isl, osl                            int
	rate, concurrency                   string
	burstiness                          float64
	slo, mode                           string
	maxGPUs, top, numPrompts            int
	seed                                uint64
	profile, format, plot               string
	confidence, prefixHit               float64
	export, dataset                     string
	share                               sharingFlags
	noSettings, noMargin, noDPAttention bool
	quiet                               bool
	frontendMS                          float64 // --frontend-ms, when frontendGiven
	frontendGiven                       bool
	kvLink                              string // --kv-link
	stated                              func() (engine.Stated, error)
}

func runPlan(args []string, stdout, stderr io.Writer) error {
	var o planOptions
	fs := newFlagSet("plan", stderr)
	fs.StringVar(&o.modelName, "model", "", "model to serve: a catalog name or Hugging Face id, e.g. Qwen3-32B, or a config.json (or its directory) (required)")
	fs.IntVar(&o.isl, "isl", 0, "prompt tokens per request (required)")
	fs.IntVar(&o.osl, "osl", 0, "output tokens per request (required)")
	fs.StringVar(&o.rate, "rate", "", "target open-loop request rate in req/s")
	fs.StringVar(&o.concurrency, "concurrency", "", "target closed-loop concurrency (instead of --rate)")
	addBurstinessFlag(fs, &o.burstiness)
	fs.StringVar(&o.slo, "slo", "", "latency targets, e.g. ttft_p99=2000ms,tpot_p99=50ms (ttft|tpot|itl|e2el × mean|median|p90|p95|p99)")
	fs.StringSliceVar(&o.gpus, "gpu", nil, "GPU types to search, comma list (default: every GPU with fitted or derived costs for the model)")
	fs.IntVar(&o.maxGPUs, "max-gpus", plan.DefaultMaxGPUs, "most GPUs in one deployment")
	fs.StringVar(&o.gpuCost, "gpu-cost", "", "price per GPU-hour, e.g. H20=1.9,H200=3.5 (rank by cost; unpriced GPUs are left out)")
	fs.StringVar(&o.engine, "engine", "", "engine label prefix (default: dynamo for disaggregated, newest vLLM for aggregated)")
	fs.StringVar(&o.router, "router", "", routerHelp)
	addFrontendFlag(fs, &o.frontendMS)
	addKVLinkFlag(fs, &o.kvLink)
	fs.StringVar(&o.mode, "mode", "both", "deployments to search: aggregated, disaggregated or both")
	fs.IntSliceVar(&o.tps, "tp", plan.DefaultTPs(), "tensor-parallel degrees to try, comma list")
	fs.IntVar(&o.top, "top", plan.DefaultTopK, "recommendations to show (each gets a headroom search)")
	fs.IntVar(&o.numPrompts, "num-prompts", 0, fmt.Sprintf("measured requests of a verdict's first steady-state run, doubled until the verdict is clear\n(default: %g minutes of arrivals, at least %d)", predict.SteadySeconds/60, predict.SteadyMinPrompts))
	fs.Float64Var(&o.prefixHit, "prefix-hit-rate", 0, hitRateHelp)
	addSharingFlags(fs, &o.share)
	fs.StringVar(&o.dataset, "dataset", "", datasetHelp)
	fs.Float64Var(&o.confidence, "confidence", plan.DefaultConfidence, "probability, given the costs' uncertainty, that a recommendation meets every SLO:\nverdicts price each pool at this quantile of its cost band ("+strconv.FormatFloat(plan.DefaultConfidence, 'f', 3, 64)+" = +1σ; 0.5 = central costs)")
	fs.BoolVar(&o.noSettings, "no-settings-search", false, "keep every engine's default max-num-seqs and max-num-batched-tokens")
	o.stated = addEngineSettingsFlags(fs, "each candidate engine version's on its GPU; a stated max-num-seqs or max-num-batched-tokens is not searched")
	fs.BoolVar(&o.noDPAttention, "no-dp-attention-search", false, "run SGLang's attention as its calibrated deployment did instead of trying it both split by TP\nand data-parallel with one group per TP rank (--enable-dp-attention --dp TP)")
	fs.BoolVar(&o.noMargin, "no-margin", false, "skip the central-cost search that says what the confidence margin costs")
	fs.StringVar(&o.export, "export", "", "write deployable configs of the recommendations to this directory\n(vllm serve command lines, Dynamo config, Kubernetes manifests, README with the validate command)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed")
	addProfileFlag(fs, &o.profile)
	fs.StringVar(&o.plot, "plot", "", "also draw the Pareto frontier to this .png or .svg file")
	format := formatFlag(fs)
	addQuietFlag(fs, &o.quiet)
	if err := parseFlags(fs, args, format, ""); err != nil {
		return err
	}
	o.format = *format
	o.frontendGiven = fs.Changed("frontend-ms")
	opts, err := o.options()
	if err != nil {
		return err
	}
	prof, err := loadProfile(o.profile, stderr)
	if err != nil {
		return err
	}
	opts.Progress = planProgress(progressTo(stderr, o.quiet))
	ctx, stop := interruptContext()
	defer stop()
	res, err := plan.Run(ctx, prof, opts)
	if err != nil {
		return flagHint(err)
	}
	warn(stderr, "capsim", res.Notes...)
	if len(res.Recommendations) == 0 {
		warn(stderr, "capsim", plan.LimitLines(res)...)
		return fmt.Errorf("plan: %s", res.Why)
	}
	if o.plot != "" {
		if err := plotPareto(o.plot, res); err != nil {
			return err
		}
	}
	if o.export != "" {
		if err := writeExport(stderr, o.export, planSpecs(res, o.profile)); err != nil {
			return err
		}
	}
	if o.format == "json" {
		return writeJSON(stdout, res)
	}
	if o.format == "csv" {
		return plan.WriteCSV(stdout, res)
	}
	return plan.WriteTable(tableOutput(stdout, o.format), res)
}

// options turns the flags into plan.Options, which it validates.
func (o planOptions) options() (plan.Options, error) {
	var opts plan.Options
	sharing, implied, err := o.share.sharing(o.isl)
	if err != nil {
		return opts, fmt.Errorf("plan: %w", err)
	}
	if implied > 0 {
		o.isl = implied
	}
	var slos []plan.SLO
	if o.slo != "" {
		if slos, err = plan.ParseSLOs(o.slo); err != nil {
			return opts, err
		}
	}
	loads, err := parseLoads(o.concurrency, o.rate, o.burstiness)
	if err != nil {
		return opts, err
	}
	var load model.Load
	if len(loads) > 1 {
		return opts, fmt.Errorf("plan: give one target load, not a list")
	} else if len(loads) == 1 {
		load = loads[0]
	}
	opts = plan.Options{
		Model: o.modelName, Engine: o.engine, Router: o.router, SLOs: slos,
		Workload: workload.Workload{ISL: o.isl, OSL: o.osl, Load: load, NumPrompts: o.numPrompts, Seed: o.seed,
			PrefixHitRate: o.prefixHit, Sharing: sharing, Dataset: o.dataset},
		MaxGPUs: o.maxGPUs, TopK: o.top, Confidence: o.confidence, NoSettingsSearch: o.noSettings, NoDPAttentionSearch: o.noDPAttention,
		NoMargin: o.noMargin, GPUs: o.gpus, TPs: o.tps,
	}
	opts.KVLink = o.kvLink
	if opts.Frontend, err = statedFrontend(o.frontendMS, o.frontendGiven, model.Topology{}); err != nil {
		return opts, fmt.Errorf("plan: %w", err)
	}
	if opts.Stated, err = o.stated(); err != nil {
		return opts, fmt.Errorf("plan: %w", err)
	}
	if o.gpuCost != "" {
		if opts.GPUCost, err = plan.ParseGPUCosts(o.gpuCost); err != nil {
			return opts, optionFlags(err, "plan: ", planFlags)
		}
	}
	opts.Aggregated, opts.Disaggregated = o.mode == "aggregated", o.mode == "disaggregated"
	if o.mode != "both" && !opts.Aggregated && !opts.Disaggregated {
		return opts, fmt.Errorf("plan: --mode must be aggregated, disaggregated or both, got %q", o.mode)
	}
	return opts, optionFlags(opts.Validate(), "plan: ", planFlags)
}

// planFlags name the plan.Options fields a plan.Options.Validate error names.
var planFlags = map[string]string{"Model": "--model", "ISL": "--isl", "OSL": "--osl", "SLOs": "--slo", "Load": "--rate", "Rate": "--rate", "Concurrency": "--concurrency", "MaxGPUs": "--max-gpus",
	"TopK": "--top", "NumPrompts": "--num-prompts", "PrefixHitRate": "--prefix-hit-rate", "Confidence": "--confidence", "TPs": "--tp", "GPUCost": "--gpu-cost", "KVLink": "--kv-link"}

// planProgress reports each phase of the search with the time it has left.
func planProgress(w io.Writer) func(plan.Progress) {
	m := progress.New(w, false)
	m.Interval = 500 * time.Millisecond
	return func(p plan.Progress) { m.Update("plan: "+p.Stage(), p.Done, p.Total) }
}
