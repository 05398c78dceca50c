package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/capsim/capsim/deploy"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/textout"
	"github.com/capsim/capsim/model"
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
	fs.IntVar(&o.numPrompts, "num-prompts", 0, "steady state: measured requests of a point's first run, doubled until its means and p99s are stable\n(default: 5 minutes of arrivals or 20 × concurrency, at least 10000); replay: requests sent (default 20 s of arrivals or 20 × concurrency, at least 400)")
	fs.StringVar(&o.mode, "mode", "steady-state", "steady-state (warm-up and drain left out, run until stable) or benchmark-replay (the finite run a benchmark makes: ramp, drain and all)")
	fs.StringVar(&o.export, "export", "", "write this deployment's deployable configs to this directory\n(vllm serve command lines, Dynamo config, Kubernetes manifests, README with the validate command)")
	fs.Float64Var(&o.prefixHit, "prefix-hit-rate", 0, hitRateHelp)
	fs.StringVar(&o.dataset, "dataset", "", datasetHelp)
	addSharingFlags(fs, &o.sharingFlags)
	o.stated = addEngineSettingsFlags(fs, "the calibrated deployment's, else the engine version's on the GPU")
	fs.BoolVar(&o.exactOutput, "exact-output", false, "every output runs to exactly its shape's output length, as a benchmark that sends ignore_eos gets them\n(capsim bench, vllm bench serve --ignore-eos): closed loops then run in lock-step; by default outputs spread ±20% around it, as real traffic's do")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed")
	fs.BoolVar(&o.noBand, "no-band", false, "skip the uncertainty band (three times faster)")
	fs.StringVar(&o.plot, "plot", "", "also draw the predicted curves to this .png or .svg file")
	format := formatFlag(fs)
	if err := parseFlags(fs, args, format, ""); err != nil {
		return err
	}
	o.format = *format
	o.islGiven, o.oslGiven = fs.Changed("isl"), fs.Changed("osl")
	preds, err := o.predict(stderr)
	if err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotPrediction(o.plot, preds, o.profile, stderr); err != nil {
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
		return writePredictionsCSV(stdout, preds)
	}
	return printPredictions(tableOutput(stdout, o.format), preds)
}

// predictCSVMetrics are the metric columns of predict --format csv, named
// as vLLM's bench serve names them.
var predictCSVMetrics = []string{model.RequestThroughput, model.OutputThroughput, model.TotalTokenThroughput,
	model.MeanTTFT, model.MedianTTFT, model.P99TTFT, model.MeanTPOT, model.MedianTPOT, model.P99TPOT,
	model.MeanITL, model.MedianITL, model.P99ITL, model.MeanE2EL, model.MedianE2EL, model.P99E2EL}

// writePredictionsCSV writes one row per predicted point of every shape,
// under one header: the deployment and shape, the load, then every metric
// to six significant digits, so a spreadsheet gets numbers, not the
// table's text.
func writePredictionsCSV(w io.Writer, preds []predict.Prediction) error {
	cw := csv.NewWriter(w)
	head := []string{"gpu", "model", "engine", "topology", "gpus", "isl", "osl", "load", "max_concurrency", "request_rate", "mode", "num_prompts", "saturated"}
	head = append(append(head, predictCSVMetrics...), "output_throughput_per_gpu", "prefix_hit_rate", "router")
	if err := cw.Write(head); err != nil {
		return err
	}
	num := csvNumber
	for _, p := range preds {
		for _, pt := range p.Points {
			conc, rate := loadColumns(pt.Load)
			row := []string{p.GPU, p.Model, p.Engine, p.Topology, strconv.Itoa(p.GPUs), strconv.Itoa(p.ISL), strconv.Itoa(p.OSL),
				pt.Load.Label(), conc, rate, string(pt.Mode), strconv.Itoa(pt.NumPrompts), strconv.FormatBool(pt.Steady != nil && pt.Steady.Saturated)}
			for _, m := range predictCSVMetrics {
				v, ok := pt.Metrics[m]
				if !ok {
					row = append(row, "")
					continue
				}
				row = append(row, num(v))
			}
			if err := cw.Write(append(row, num(pt.OutputPerGPU), num(pt.PrefixHitRate), p.PrefixRouter)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func (o predictOptions) predict(stderr io.Writer) ([]predict.Prediction, error) {
	topo, err := o.topology()
	if err != nil {
		return nil, err
	}
	loads, err := parseLoads(o.concurrency, o.rate, o.burstiness)
	if err != nil {
		return nil, err
	}
	if o.isl < 0 || o.osl < 0 || (o.islGiven && o.isl == 0) || (o.oslGiven && o.osl == 0) {
		return nil, fmt.Errorf("--isl and --osl must be positive")
	}
	sharing, implied, err := o.sharing(o.isl)
	if err != nil {
		return nil, err
	}
	if implied > 0 {
		o.isl = implied
	}
	if (o.isl == 0) != (o.osl == 0) {
		return nil, fmt.Errorf("give both --isl and --osl, or neither")
	}
	if err := checkLengths(o.isl, o.osl); err != nil {
		return nil, err
	}
	if sharing.On() && o.isl == 0 {
		return nil, fmt.Errorf("a shared-prefix workload needs --isl and --osl")
	}
	if o.numPrompts < 0 {
		return nil, fmt.Errorf("--num-prompts must be positive")
	}
	if !sim.ValidPrefixHitRate(o.prefixHit) {
		return nil, fmt.Errorf("--prefix-hit-rate must be a fraction in [0, 1), got %v", o.prefixHit)
	}
	if o.exactOutput && o.dataset != "" {
		return nil, fmt.Errorf("--exact-output does not apply with --dataset %s: the dataset's own output lengths are simulated", o.dataset)
	}
	switch sim.Mode(o.mode) {
	case sim.SteadyState, sim.BenchmarkReplay:
	default:
		return nil, fmt.Errorf("--mode must be %s or %s, got %q", sim.SteadyState, sim.BenchmarkReplay, o.mode)
	}
	stated, err := o.stated()
	if err != nil {
		return nil, err
	}
	prof, err := loadProfile(o.profile, stderr)
	if err != nil {
		return nil, err
	}
	target, err := o.target(prof, o.modelName, topo)
	if err != nil {
		return nil, err
	}
	target.Stated = stated
	opts := predict.Options{Target: target, Loads: loads, NoBand: o.noBand, Mode: sim.Mode(o.mode), Workload: workload.Workload{NumPrompts: o.numPrompts, Seed: o.seed, PrefixHitRate: o.prefixHit, Dataset: o.dataset, ExactOutput: o.exactOutput, Sharing: sharing}}
	opts.Workload.ISL, opts.Workload.OSL = o.isl, o.osl
	ctx, stop := interruptContext()
	defer stop()
	preds, err := predict.Run(ctx, prof, opts)
	if err != nil {
		return nil, flagHint(err)
	}
	for _, p := range preds {
		warn(stderr, "capsim", p.Warnings...)
	}
	return preds, nil
}

func printPredictions(w io.Writer, preds []predict.Prediction) error {
	for i, p := range preds {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s on %d× %s, %s, %s — ISL %d, OSL %d — %s\n", model.ShortName(p.Model), p.GPUs, p.GPU, p.Engine, p.Topology, p.ISL, p.OSL, p.HowSimulated())
		tw := newTable(w)
		hitCol := ""
		if p.Sharing.On() {
			hitCol = "prefix hit\t"
		}
		fmt.Fprintln(tw, "load\treq/s\tout tok/s\ttok/s/GPU\tTTFT mean\tTTFT p99\tTPOT mean\tTPOT p99\tITL mean\tE2E mean\tE2E p99\t"+hitCol)
		for _, pt := range p.Points {
			m := pt.Metrics
			load := pt.Load.Label()
			if pt.Load.Kind == model.Burst {
				load = fmt.Sprintf("burst of %d", pt.NumPrompts) // its latencies grow with its size
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", load,
				textout.Metric(m, model.RequestThroughput), textout.Metric(m, model.OutputThroughput), pt.OutputPerGPU,
				textout.Metric(m, model.MeanTTFT), textout.Metric(m, model.P99TTFT), textout.Metric(m, model.MeanTPOT), textout.Metric(m, model.P99TPOT),
				textout.Metric(m, model.MeanITL), textout.Metric(m, model.MeanE2EL), textout.Metric(m, model.P99E2EL))
			if p.Sharing.On() {
				fmt.Fprintf(tw, "%.1f%%\t", 100*pt.PrefixHitRate)
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "(latencies in ms)")
		for _, pt := range p.Points {
			if st := pt.Steady; st != nil && st.Saturated {
				fmt.Fprintf(w, "saturated:   at %s requests complete at %.3g req/s of the %.3g offered: the queue grows, latencies depend on how long one looks\n",
					pt.Load.Label(), st.AchievedRate, st.OfferedRate)
			} else if st != nil && st.NearCritical {
				fmt.Fprintf(w, "near-critical: at %s a pool is busy ≥ 97%% with requests waiting: its p99s keep growing with the run's length\n", pt.Load.Label())
			}
		}
		fmt.Fprintf(w, "knee:        %.2f req/s (90%% of max %.2f req/s, %.0f output tok/s) at %s\n",
			p.Knee.RequestThroughput, p.Knee.MaxRequestThroughput, p.Knee.MaxOutputThroughput, p.Knee.Load)
		if p.Blowup.Found {
			fmt.Fprintf(w, "TTFT blow-up: mean TTFT %.0f ms (≥ 3× the %.0f ms at the lowest load) from %s\n", p.Blowup.MeanTTFTms, p.Blowup.BaseTTFTms, p.Blowup.Load)
		} else {
			fmt.Fprintf(w, "TTFT blow-up: none in range (mean TTFT stays below 3× the %.0f ms at the lowest load)\n", p.Blowup.BaseTTFTms)
		}
		fmt.Fprintf(w, "bottleneck:  %s — %s\n", p.Bottleneck.Resource, p.Bottleneck.Why)
		for _, d := range p.Derived {
			fmt.Fprintf(w, "costs:       %s\n", d)
			if d.Collectives != "" {
				fmt.Fprintf(w, "collectives: %s %s: %s\n", d.Role, d.Pool, d.Collectives)
			}
			if d.Kernels != "" {
				fmt.Fprintf(w, "kernels:     %s %s: %s\n", d.Role, d.Pool, d.Kernels)
			}
		}
		if p.Frontend != "" {
			fmt.Fprintf(w, "frontend:    %s\n", p.Frontend)
		}
		if p.Sharing.On() {
			how := "simulated per replica"
			if p.Disaggregated {
				how = "simulated per prefill worker"
			}
			switch {
			case p.PrefixHitRate > 0:
				how = "not simulated: --prefix-hit-rate overrides it"
			case !p.PrefixCaching:
				how = "prefix caching off"
			}
			if last := p.Points[len(p.Points)-1].Metrics; p.Sharing.Turns > 1 && last["completed"] > 0 {
				how = fmt.Sprintf("mean prompt %.0f tokens at %s; %s", last[model.TotalInputTokens]/last["completed"], p.Points[len(p.Points)-1].Load.Label(), how)
			}
			fmt.Fprintf(w, "prefix cache: %s; %s, routed %s\n", p.Sharing, how, p.PrefixRouter)
		}
		if p.Router != "" {
			fmt.Fprintf(w, "router:      %s, %s; it priced this prediction\n", p.Router, p.RouterFrom)
		}
		if len(p.EngineFlags) > 0 {
			fmt.Fprintf(w, "engine:      %s\n", engineFlagsLine(p.EngineFlags, p.Engine, p.GPU, p.EngineDefaults))
		}
		if len(p.Points) > 0 && p.Points[0].Lo != nil {
			lo, hi := p.Points[len(p.Points)-1].Lo, p.Points[len(p.Points)-1].Hi
			what := "costs"
			if p.Frontend != "" && p.FrontendStatedMS == nil {
				what = "costs and frontend"
			}
			fmt.Fprintf(w, "band:        at the highest load %.2f–%.2f req/s, mean TTFT %.0f–%.0f ms (%s ±1σ)\n",
				lo[model.RequestThroughput], hi[model.RequestThroughput], lo[model.MeanTTFT], hi[model.MeanTTFT], what)
		}
	}
	return nil
}

// loadColumns are a load's max_concurrency and request_rate cells, as
// vLLM's result JSON names them ("inf" for a burst); "" where none.
func loadColumns(l model.Load) (concurrency, rate string) {
	switch l.Kind {
	case model.ClosedLoop:
		return strconv.Itoa(l.Concurrency), ""
	case model.OpenLoop:
		return "", csvNumber(l.Rate)
	case model.Burst:
		return "", "inf"
	}
	return "", ""
}
