package main

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/progress"
	"github.com/capsim/capsim/internal/textout"
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
	fs.IntVar(&o.maxGPUs, "max-gpus", 64, "most GPUs in one deployment")
	fs.StringVar(&o.gpuCost, "gpu-cost", "", "price per GPU-hour, e.g. H20=1.9,H200=3.5 (rank by cost; unpriced GPUs are left out)")
	fs.StringVar(&o.engine, "engine", "", "engine label prefix (default: dynamo for disaggregated, newest vLLM for aggregated)")
	fs.StringVar(&o.router, "router", "", routerHelp)
	addFrontendFlag(fs, &o.frontendMS)
	fs.StringVar(&o.mode, "mode", "both", "deployments to search: aggregated, disaggregated or both")
	fs.IntSliceVar(&o.tps, "tp", []int{1, 2, 4, 8}, "tensor-parallel degrees to try, comma list")
	fs.IntVar(&o.top, "top", 5, "recommendations to show (each gets a headroom search)")
	fs.IntVar(&o.numPrompts, "num-prompts", 0, "measured requests of a verdict's first steady-state run, doubled until the verdict is clear\n(default: 5 minutes of arrivals, at least 10000)")
	fs.Float64Var(&o.prefixHit, "prefix-hit-rate", 0, hitRateHelp)
	addSharingFlags(fs, &o.share)
	fs.StringVar(&o.dataset, "dataset", "", datasetHelp)
	fs.Float64Var(&o.confidence, "confidence", plan.DefaultConfidence, "probability, given the costs' uncertainty, that a recommendation meets every SLO:\nverdicts price each pool at this quantile of its cost band (0.841 = +1σ; 0.5 = central costs)")
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
		warn(stderr, "capsim", limitLines(res)...)
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
		return writePlanCSV(stdout, res)
	}
	return printPlan(tableOutput(stdout, o.format), res)
}

// options turns the flags into plan.Options, rejecting bad input.
func (o planOptions) options() (plan.Options, error) {
	var opts plan.Options
	if o.modelName == "" {
		return opts, fmt.Errorf("plan: --model is required (known: %s)", calibrate.LLMList())
	}
	sharing, implied, err := o.share.sharing(o.isl)
	if err != nil {
		return opts, fmt.Errorf("plan: %w", err)
	}
	if implied > 0 {
		o.isl = implied
	}
	if o.isl <= 0 || o.osl <= 0 {
		return opts, fmt.Errorf("plan: --isl and --osl are required and must be positive")
	}
	if err := checkLengths(o.isl, o.osl); err != nil {
		return opts, fmt.Errorf("plan: %w", err)
	}
	if o.slo == "" {
		return opts, fmt.Errorf("plan: --slo is required, e.g. --slo ttft_p99=2000ms,tpot_p99=50ms")
	}
	slos, err := plan.ParseSLOs(o.slo)
	if err != nil {
		return opts, err
	}
	if o.rate == "" && o.concurrency == "" {
		return opts, fmt.Errorf("plan: give the target load: --rate R (req/s) or --concurrency N")
	}
	loads, err := parseLoads(o.concurrency, o.rate, o.burstiness)
	if err != nil {
		return opts, err
	}
	if len(loads) != 1 {
		return opts, fmt.Errorf("plan: give one target load, not a list")
	}
	if loads[0].Kind == model.Burst {
		return opts, fmt.Errorf("plan: --rate inf is not a load to size for: give a finite rate")
	}
	if o.maxGPUs <= 0 {
		return opts, fmt.Errorf("plan: --max-gpus must be positive, got %d", o.maxGPUs)
	}
	if o.top <= 0 || o.top > plan.MaxTopK {
		return opts, fmt.Errorf("plan: --top must be from 1 to %d, got %d", plan.MaxTopK, o.top)
	}
	if o.numPrompts < 0 {
		return opts, fmt.Errorf("plan: --num-prompts must be positive, got %d", o.numPrompts)
	}
	if !(o.prefixHit >= 0 && o.prefixHit < 1) {
		return opts, fmt.Errorf("plan: --prefix-hit-rate must be a fraction in [0, 1), got %v", o.prefixHit)
	}
	if !(o.confidence > 0 && o.confidence < 1) {
		return opts, fmt.Errorf("plan: --confidence must be between 0 and 1 (exclusive), got %v", o.confidence)
	}
	opts = plan.Options{
		Model: o.modelName, Engine: o.engine, Router: o.router, SLOs: slos,
		Workload: workload.Workload{ISL: o.isl, OSL: o.osl, Load: loads[0], NumPrompts: o.numPrompts, Seed: o.seed,
			PrefixHitRate: o.prefixHit, Sharing: sharing, Dataset: o.dataset},
		MaxGPUs: o.maxGPUs, TopK: o.top, Confidence: o.confidence, NoSettingsSearch: o.noSettings, NoDPAttentionSearch: o.noDPAttention,
		NoMargin: o.noMargin, GPUs: o.gpus, TPs: o.tps,
	}
	if opts.Frontend, err = statedFrontend(o.frontendMS, o.frontendGiven, model.Topology{}); err != nil {
		return opts, fmt.Errorf("plan: %w", err)
	}
	if opts.Stated, err = o.stated(); err != nil {
		return opts, fmt.Errorf("plan: %w", err)
	}
	if o.gpuCost != "" {
		var err error
		if opts.GPUCost, err = plan.ParseGPUCosts(o.gpuCost); err != nil {
			if msg, ok := strings.CutPrefix(err.Error(), "plan: GPU cost "); ok {
				return opts, errors.New("plan: --gpu-cost " + msg)
			}
			return opts, err
		}
	}
	for _, tp := range o.tps {
		if tp <= 0 {
			return opts, fmt.Errorf("plan: --tp: %d is not a positive integer", tp)
		}
	}
	opts.Aggregated, opts.Disaggregated = o.mode == "aggregated", o.mode == "disaggregated"
	if o.mode != "both" && !opts.Aggregated && !opts.Disaggregated {
		return opts, fmt.Errorf("plan: --mode must be aggregated, disaggregated or both, got %q", o.mode)
	}
	return opts, nil
}

// planProgress reports each phase of the search with the time it has left.
func planProgress(w io.Writer) func(plan.Progress) {
	m := progress.New(w, false)
	m.Interval = 500 * time.Millisecond
	return func(p plan.Progress) { m.Update("plan: "+p.Stage(), p.Done, p.Total) }
}

func printPlan(w io.Writer, r *plan.Result) error {
	var slos []string
	for _, s := range r.SLOs {
		slos = append(slos, s.String())
	}
	fmt.Fprintf(w, "%s, ISL %d / OSL %d at %s; SLOs %s%s\n", model.ShortName(r.Model), r.ISL, r.OSL, r.Load, strings.Join(slos, ", "), predict.WorkloadClause(r.PrefixHitRate, r.Dataset))
	fmt.Fprintf(w, "verdicts: %s simulation, every SLO met with %.0f%% confidence (each pool's costs at %+.2fσ of their band)\n",
		r.Mode, 100*r.Confidence, r.BandSigmas)
	if r.FrontendMS != nil {
		fmt.Fprintf(w, "frontend: %.1f ms a request outside the engine, stated, for aggregated deployments (a disaggregated deployment's is inside its fitted costs)\n", *r.FrontendMS)
	}
	s := r.Search
	fmt.Fprintf(w, "searched %d deployments on %s (up to %d GPUs): %d below the rate by capacity bound, %d too slow for an SLO alone, "+
		"%d costlier than the top %d, %d missed a screening run, %d simulated in steady state, %d meet every SLO "+
		"(%d near %s tried other engine settings, %d then met them; %d simulations)\n",
		s.Candidates, strings.Join(r.GPUTypes, ", "), r.MaxGPUs, s.Overloaded, s.TooSlow, s.Costlier, len(r.Recommendations), s.ShortMissed,
		s.Simulated, s.Feasible, s.SettingsTried, plural(s.SettingsTried, "miss", "misses"), s.SettingsFound, s.Simulations)
	for _, l := range limitLines(r) {
		fmt.Fprintf(w, "limit: %s\n", l)
	}
	if r.CostUnit == plan.CostGPUs && len(r.GPUTypes) > 1 {
		// A count ranks a B200 level with an L4.
		fmt.Fprintf(w, "cost: GPUs counted alike across %d GPU types; --gpu-cost (e.g. H100-SXM=2.5,B200=5) ranks them by price\n", len(r.GPUTypes))
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	head := "rank\tGPU\ttopology\tGPUs\t" + planCostHeader(r.CostUnit) + "\t"
	for _, s := range r.SLOs {
		head += s.Label() + "\t"
	}
	head += "tok/s/GPU\ttok/s/user\theadroom\tlimit\tbottleneck\tcosts\t"
	fmt.Fprintln(tw, head)
	for _, rec := range r.Recommendations {
		row := fmt.Sprintf("%d\t%s\t%s\t%d\t%s\t", rec.Rank, rec.GPU, rec.Shape(), rec.GPUs, planCost(rec.Cost, r.CostUnit))
		for _, v := range rec.SLOValues {
			row += textout.Value(v.Value) + "\t"
		}
		row += fmt.Sprintf("%.1f\t%.1f\t%s\t%s\t%s\t%s ±%.0f%%\t", rec.OutputPerGPU, rec.PerUser, planHeadroom(rec.Headroom),
			cmp.Or(rec.Headroom.Binding, "-"), rec.Bottleneck.Resource, rec.Costs, 100*rec.Uncertainty)
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "(latencies in ms at the verdicts' confidence; headroom: the highest load still meeting every SLO; limit: the SLO missed first above it)")
	for _, rec := range r.Recommendations {
		fmt.Fprintf(w, "%d. %s, %s: %s — %s\n", rec.Rank, rec.Engine, rec.Layout, rec.Bottleneck.Resource, rec.Bottleneck.Why)
		fmt.Fprintf(w, "   engine: %s", planSettings(rec.Settings))
		if rec.Router != "" {
			fmt.Fprintf(w, "; router %s", rec.Router)
		}
		if len(rec.Central) > 0 {
			var cs []string
			for _, c := range rec.Central {
				cs = append(cs, fmt.Sprintf("%s %s", c.SLO, textout.Value(c.Value)))
			}
			fmt.Fprintf(w, "; central costs: %s ms", strings.Join(cs, ", "))
		}
		fmt.Fprintln(w)
	}
	if m := r.Margin; m != nil {
		if m.CentralBest == "" {
			fmt.Fprintf(w, "margin: even with central costs no cheaper deployment meets every SLO\n")
		} else {
			fmt.Fprintf(w, "margin: with central costs the cheapest deployment meeting every SLO is %s on %d× %s (cost %s); the %.0f%% confidence costs %s more\n",
				m.CentralBest, m.CentralGPUs, m.CentralGPU, planCost(m.CentralCost, r.CostUnit), 100*r.Confidence, planCost(m.Extra, r.CostUnit))
		}
	}
	fmt.Fprintf(w, "\nPareto frontier of output tokens/s per GPU against per user, over the %s (%d simulated in all):\n", r.FrontierOf, len(r.Cloud))
	tw = newTable(w)
	fmt.Fprintln(tw, "GPU\ttopology\tGPUs\ttok/s/GPU\ttok/s/user\tmeets SLOs\t")
	for _, p := range r.Frontier {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%s\t\n", p.GPU, p.Shape(), p.GPUs, p.OutputPerGPU, p.PerUser, map[bool]string{true: "yes", false: "no"}[p.MeetsSLOs])
	}
	return tw.Flush()
}

// planSettings is one line of engine settings per pool, "*" marking values the search chose.
func planSettings(ps []predict.EngineSettings) string {
	var parts []string
	for _, p := range ps {
		mark := ""
		if p.Searched {
			mark = " (searched)"
		}
		dp := ""
		if p.DPAttention > 1 {
			dp = fmt.Sprintf(", --enable-dp-attention --dp %d", p.DPAttention)
		}
		parts = append(parts, fmt.Sprintf("%s max-num-seqs %d, max-num-batched-tokens %d%s%s", p.Role, p.MaxNumSeqs, p.MaxNumBatchedTokens, dp, mark))
	}
	return strings.Join(parts, "; ")
}

func planCostHeader(unit string) string {
	if unit == "GPUs" {
		return "cost"
	}
	return "cost " + unit
}

func planCost(c float64, unit string) string {
	if unit == "GPUs" {
		return strconv.FormatFloat(c, 'f', -1, 64)
	}
	return fmt.Sprintf("%.2f", c)
}

func planHeadroom(h plan.Headroom) string {
	at := ""
	if h.AtLeast {
		at = "≥"
	}
	if h.MaxConcurrency > 0 {
		return fmt.Sprintf("%sc=%d (%.2f×)", at, h.MaxConcurrency, h.Ratio)
	}
	return fmt.Sprintf("%s%.3g req/s (%.2f×)", at, h.RequestRate, h.Ratio)
}

// plural is one or many, by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writePlanCSV writes one row per recommendation under one header: the
// deployment, its cost, each SLO's simulated value and limit at the
// verdicts' confidence, throughputs, headroom and what binds it. The
// Pareto frontier and the margin are in --format json.
func writePlanCSV(w io.Writer, r *plan.Result) error {
	cw := csv.NewWriter(w)
	head := []string{"rank", "gpu", "engine", "topology", "notation", "gpus", "cost", "cost_unit"}
	for _, s := range r.SLOs {
		head = append(head, s.Label()+"_ms", s.Label()+"_limit_ms")
	}
	head = append(head, "output_throughput_per_gpu", "output_tokens_per_user", "headroom_request_rate", "headroom_max_concurrency",
		"headroom_ratio", "headroom_at_least", "binding_slo", "bottleneck", "costs", "uncertainty", "search_limit_bound")
	limits := strings.Join(limitLines(r), "; ")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, rec := range r.Recommendations {
		row := []string{strconv.Itoa(rec.Rank), rec.GPU, rec.Engine, rec.Layout, rec.Notation, strconv.Itoa(rec.GPUs), csvNumber(rec.Cost), r.CostUnit}
		for _, v := range rec.SLOValues {
			row = append(row, csvNumber(v.Value), csvNumber(v.Limit))
		}
		h := rec.Headroom
		rate, conc := "", ""
		if h.RequestRate > 0 {
			rate = csvNumber(h.RequestRate)
		}
		if h.MaxConcurrency > 0 {
			conc = strconv.Itoa(h.MaxConcurrency)
		}
		row = append(row, csvNumber(rec.OutputPerGPU), csvNumber(rec.PerUser), rate, conc, csvNumber(h.Ratio), strconv.FormatBool(h.AtLeast),
			h.Binding, rec.Bottleneck.Resource, rec.Costs, csvNumber(rec.Uncertainty), limits)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// limitLines say which search limits bound the search (plan.LimitBound)
// and what lies past each, naming the flag that moves it.
func limitLines(r *plan.Result) []string {
	var out []string
	for _, l := range r.Limits {
		than := "cost less than rank 1 (" + planCost(l.Against, r.CostUnit) + ")"
		if l.Against == 0 {
			than = "might meet the SLOs where nothing searched did"
		}
		limit := fmt.Sprintf("the %d-GPU limit (--max-gpus)", l.Value)
		where, rerun := fmt.Sprintf("past it, up to %d GPUs,", l.UpTo), fmt.Sprintf("--max-gpus %d", l.CheapestGPUs)
		if l.Limit == plan.LimitTP {
			var tps []string
			for _, tp := range l.Excluded {
				tps = append(tps, strconv.Itoa(tp))
			}
			limit = "--tp"
			where, rerun = fmt.Sprintf("at TP %s, which it left out,", strings.Join(tps, ", ")), "--tp naming them, or without --tp"
		}
		past := fmt.Sprintf("the cheapest of the %d simulated, %s on %d GPUs (cost %s), meets every SLO in one steady-state run: rerun with %s",
			l.Simulated, l.Cheapest, l.CheapestGPUs, planCost(l.CheapestCost, r.CostUnit), rerun)
		if !l.Meets {
			past = fmt.Sprintf("the %d simulated, from %s on %d GPUs (cost %s), miss them", l.Simulated, l.Cheapest, l.CheapestGPUs, planCost(l.CheapestCost, r.CostUnit))
		}
		out = append(out, fmt.Sprintf("%s bound the search: %d %s %s pass the capacity and latency bounds and %s; %s",
			limit, l.Untried, plural(l.Untried, "deployment", "deployments"), where, than, past))
	}
	return out
}
