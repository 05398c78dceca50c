package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/loadgen"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
)

// validateMetrics are the metrics validate compares, in print order.
var validateMetrics = []string{
	model.RequestThroughput, model.OutputThroughput,
	model.MeanTTFT, model.MedianTTFT, model.P99TTFT,
	model.MeanTPOT, model.MedianTPOT, model.P99TPOT,
	model.MeanITL, model.MedianITL, model.P99ITL,
	model.MeanE2EL, model.MedianE2EL, model.P99E2EL,
}

// validateOptions are capsim validate's flags: bench's for the server and
// the workload, predict's for the deployment.
type validateOptions struct {
	results string // compare this bench result file instead of measuring

	serverFlags
	loadListFlags
	servedModel string

	deploymentFlags
	modelName, format string
}

// Comparison is one metric measured against predicted.
type Comparison struct {
	Metric    string  `json:"metric"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	// AbsPctError is |predicted − measured| / measured × 100.
	AbsPctError float64 `json:"abs_pct_error"`
}

// ValidatePoint is one load point of a validation.
type ValidatePoint struct {
	Load           string       `json:"load"`
	MaxConcurrency int          `json:"max_concurrency,omitempty"`
	RequestRate    string       `json:"request_rate,omitempty"`
	ISL            int          `json:"isl"`
	OSL            int          `json:"osl"`
	NumPrompts     int          `json:"num_prompts"`
	Completed      int          `json:"completed"`
	Failed         int          `json:"failed"`
	Record         string       `json:"record,omitempty"` // the record compared, in --results mode
	Metrics        []Comparison `json:"metrics"`
	// Missing lists metrics the measurement or the prediction lacks.
	Missing []string `json:"missing,omitempty"`

	load model.Load
}

// ValidateSummary is the median and maximum absolute % error of a metric over the points.
type ValidateSummary struct {
	Metric string  `json:"metric"`
	Median float64 `json:"median_abs_pct_error"`
	Max    float64 `json:"max_abs_pct_error"`
	Points int     `json:"points"`
}

// Validation is capsim validate's output.
type Validation struct {
	Source   string            `json:"source"` // the server URL or the result file
	GPU      string            `json:"gpu"`
	Model    string            `json:"model"`
	Engine   string            `json:"engine"`
	Topology string            `json:"topology"`
	Profile  string            `json:"profile"`
	Points   []ValidatePoint   `json:"points"`
	Summary  []ValidateSummary `json:"summary"`
	Derived  []string          `json:"derived"` // where the predicted costs came from
	Warnings []string          `json:"warnings,omitempty"`
}

func runValidate(args []string, stdout, stderr io.Writer) error {
	return runInterruptible(validateContext, args, stdout, stderr)
}

func validateContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o validateOptions
	fs := newFlagSet("validate", stderr)
	fs.StringVar(&o.results, "results", "", "compare this bench result file (vLLM result JSON; NAME.meta.json beside it may name GPU, model, engine, topology) instead of measuring a server")
	addServerFlags(fs, &o.serverFlags, "prompts, arrival times and the simulation")
	fs.StringVar(&o.modelName, "model", "", "model: the catalog model predicted and, unless --served-model is given, the name requested")
	fs.StringVar(&o.servedModel, "served-model", "", "model name sent to the server when it differs from --model")
	addLoadListFlags(fs, &o.loadListFlags, "e.g. 1,4,16")
	addDeploymentFlags(fs, &o.deploymentFlags, "default in --results mode: the file's metadata", "default: the file's metadata, else matches the topology")
	format := formatFlag(fs)
	if err := parseFlags(fs, args, format, ""); err != nil {
		return err
	}
	o.format = *format
	prof, err := loadProfile(o.profile)
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	var v *Validation
	if o.results != "" {
		v, err = o.fromFile(ctx, prof, fs.Changed)
	} else {
		v, err = o.live(ctx, prof, stderr)
	}
	if err != nil {
		return err
	}
	v.Profile = o.profile
	if v.Profile == "" {
		v.Profile = "embedded default"
	}
	v.Summary = summarise(v.Points)
	for _, w := range v.Warnings {
		fmt.Fprintf(stderr, "capsim: warning: %s\n", w)
	}
	if o.format == "json" {
		return writeJSON(stdout, v)
	}
	return writeValidation(stdout, v)
}

// live predicts, then benchmarks the server at the same loads.
func (o *validateOptions) live(ctx context.Context, prof *calibrate.Profile, stderr io.Writer) (*Validation, error) {
	if o.results == "" && o.url == "" {
		return nil, errors.New("validate: give --url to measure a server, or --results FILE to compare a bench result file")
	}
	switch {
	case o.isl <= 0 || o.osl <= 0:
		return nil, errors.New("validate: --isl and --osl must be positive numbers of tokens")
	case o.numPrompts <= 0:
		return nil, errors.New("validate: --num-prompts must be positive")
	case o.concurrency == "" && o.rate == "":
		return nil, errors.New("validate: give load points with --concurrency and/or --rate")
	case o.maxConcurrency < 0:
		return nil, errors.New("validate: --max-concurrency must not be negative")
	case o.timeout <= 0:
		return nil, errors.New("validate: --timeout must be positive")
	}
	served := o.servedModel
	if served == "" {
		served = o.modelName
	}
	if served == "" {
		return nil, errors.New("validate: --model is required with --url")
	}
	endpoint, err := o.endpointKind()
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	closed, err := parseLoads(o.concurrency, "", o.burstiness)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	open, err := parseLoads("", o.rate, o.burstiness)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	for i := range open {
		open[i] = o.openLoad(open[i])
	}
	loads := append(closed, open...)
	topo, err := o.topology()
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	target, err := resolveTarget(prof, o.gpu, o.modelName, o.engine, topo)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	apiKey, err := o.apiKey()
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}

	// Predict first: it takes moments and catches a bad deployment before any traffic.
	shape := predict.Shape{ISL: o.isl, OSL: o.osl}
	preds, err := predict.Run(ctx, prof, predict.Options{Target: target, Shapes: []predict.Shape{shape},
		Loads: loads, NumPrompts: o.numPrompts, Seed: o.seed, NoBand: true, Mode: sim.BenchmarkReplay})
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	pred := preds[0]
	v := newValidation(loadgen.RedactURL(o.url), pred)

	base := o.loadgenOptions(served, endpoint, apiKey)
	if !o.skipCheck {
		if err := loadgen.Check(ctx, base); err != nil {
			return nil, fmt.Errorf("validate: %w", err)
		}
	}
	if endpoint == loadgen.Chat {
		v.Warnings = append(v.Warnings, "chat prompts are text: measured input lengths are approximate")
	}
	var done []*loadgen.Result
	for i, load := range loads {
		opts := base
		opts.Load = load
		fmt.Fprintf(stderr, "validate: load point %d/%d: %s, %d prompts\n", i+1, len(loads), load, opts.NumPrompts)
		r, runErr := loadgen.Run(ctx, opts, benchProgressPrinter(stderr, load))
		if r != nil {
			done = append(done, r)
			if o.out != "" {
				if err := loadgen.WriteResults(o.out, done); err != nil {
					return nil, fmt.Errorf("validate: %w", err)
				}
			}
		}
		if runErr != nil {
			return nil, fmt.Errorf("validate: during %s: %w", load, runErr)
		}
		if r.Completed == 0 {
			return nil, fmt.Errorf("validate: %s: every request failed%s", load, benchFailureNote(r))
		}
		if r.Failed > 0 {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s: %d of %d requests failed%s; latencies are over the completed ones",
				load, r.Failed, r.NumPrompts, benchFailureNote(r)))
		}
		pt := compare(load, shape, pred.Points[i], r.Metrics())
		pt.NumPrompts, pt.Completed, pt.Failed = r.NumPrompts, r.Completed, r.Failed
		v.Points = append(v.Points, pt)
	}
	return v, nil
}

// fromFile predicts every record of a bench result file and compares.
// Flags given explicitly (changed) override what the file and its metadata say.
func (o *validateOptions) fromFile(ctx context.Context, prof *calibrate.Profile, changed func(string) bool) (*Validation, error) {
	if o.url != "" {
		return nil, errors.New("validate: give --url or --results, not both")
	}
	for _, f := range []string{"isl", "osl", "concurrency", "rate", "num-prompts", "max-concurrency", "burstiness"} {
		if changed(f) {
			return nil, fmt.Errorf("validate: --%s does not apply with --results (loads and shape come from the file)", f)
		}
	}
	for _, f := range []string{"served-model", "endpoint", "timeout", "api-key-env", "skip-check", "out"} {
		if changed(f) {
			return nil, fmt.Errorf("validate: --%s applies to a live server (--url), not to --results", f)
		}
	}
	recs, err := dataOptions{files: []string{o.results}}.load()
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	var flagTopo model.Topology
	if o.topologyGiven() {
		if flagTopo, err = o.topology(); err != nil {
			return nil, fmt.Errorf("validate: %w", err)
		}
	}
	var v *Validation
	var notes []string
	for i := range recs {
		r := &recs[i]
		where := fmt.Sprintf("%s line %d", o.results, r.Source.Line)
		gpu, modelName, engine, topo := firstNonEmpty(o.gpu, r.System.GPU), firstNonEmpty(o.modelName, r.System.Model), firstNonEmpty(o.engine, r.System.Engine), r.System.Topology
		if flagTopo.GPUs() > 0 {
			topo = flagTopo
		}
		if topo.GPUs() == 0 {
			return nil, fmt.Errorf("validate: %s: no topology: give --replicas or --prefill/--decode, or a topology in %s", where, results.MetaPath(o.results))
		}
		if gpu == "" {
			return nil, fmt.Errorf("validate: %s: no GPU: give --gpu, or a gpu in %s", where, results.MetaPath(o.results))
		}
		if err := r.Workload.Load.Validate(); err != nil || r.Workload.Load.Kind == "" {
			return nil, fmt.Errorf("validate: %s: the record states no usable load (concurrency or request rate)", where)
		}
		shape := recordShape(r)
		if shape.ISL <= 0 || shape.OSL <= 0 {
			return nil, fmt.Errorf("validate: %s: prompt and output lengths unknown", where)
		}
		engine, note := engineForProfile(prof, gpu, modelName, engine, topo)
		if note != "" && !slices.Contains(notes, note) {
			notes = append(notes, note)
		}
		target, err := resolveTarget(prof, gpu, modelName, engine, topo)
		if err != nil {
			return nil, fmt.Errorf("validate: %s: %w", where, err)
		}
		n := r.Workload.NumPrompts
		if n <= 0 {
			n = r.Completed + r.Errors
		}
		preds, err := predict.Run(ctx, prof, predict.Options{Target: target, Shapes: []predict.Shape{shape},
			Loads: []model.Load{r.Workload.Load}, NumPrompts: n, Seed: o.seed, NoBand: true, Mode: sim.BenchmarkReplay})
		if err != nil {
			return nil, fmt.Errorf("validate: %s: %w", where, err)
		}
		pred := preds[0]
		if v == nil {
			v = newValidation(o.results, pred)
		} else if pred.GPU != v.GPU || pred.Model != v.Model || pred.Engine != v.Engine || pred.Topology != v.Topology {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s: predicted as %s / %s / %s / %s, unlike the first record",
				where, pred.GPU, model.ShortName(pred.Model), pred.Engine, pred.Topology))
		}
		if r.Errors > 0 {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s (%s): %d requests failed; latencies are over the completed ones", where, r.Workload.Load, r.Errors))
		}
		pt := compare(r.Workload.Load, shape, pred.Points[0], r.Metrics)
		pt.Record = r.ID
		pt.NumPrompts, pt.Completed, pt.Failed = pred.Points[0].NumPrompts, r.Completed, r.Errors
		v.Points = append(v.Points, pt)
	}
	if v == nil {
		return nil, fmt.Errorf("validate: %s holds no results", o.results)
	}
	v.Warnings = append(v.Warnings, notes...)
	return v, nil
}

// engineForProfile keeps a record's engine label when the profile knows it
// (a profile fitted on the same server) and otherwise lets the profile pick
// its default for the topology, saying so, since a result file's engine
// label rarely matches the embedded profile's.
func engineForProfile(prof *calibrate.Profile, gpu, modelName, engine string, topo model.Topology) (string, string) {
	if engine == "" {
		return "", ""
	}
	g, err1 := model.LookupGPU(gpu)
	m, err2 := model.LookupLLM(modelName)
	if err1 != nil || err2 != nil {
		return engine, "" // resolveTarget reports the bad name
	}
	if _, err := prof.ResolveEngine(g.Name, m.Name, engine, topo.Disaggregated()); err != nil {
		return "", fmt.Sprintf("the profile has no engine %q for %s / %s; predicting with its default engine (give --engine, or a profile from capsim fit --from on this server)",
			engine, g.Name, model.ShortName(m.Name))
	}
	return engine, ""
}

// recordShape is the requested prompt and output length of a record:
// capsim bench's own fields, else the stated maxima, else the means.
func recordShape(r *results.Record) predict.Shape {
	isl, osl := r.Workload.ISL, r.Workload.OSL
	if r.Workload.ISLMax > 0 {
		isl = float64(r.Workload.ISLMax)
	}
	if r.Workload.OSLMax > 0 {
		osl = float64(r.Workload.OSLMax)
	}
	if v, ok := r.Metrics["capsim_isl"]; ok && v > 0 {
		isl = v
	}
	if v, ok := r.Metrics["capsim_osl"]; ok && v > 0 {
		osl = v
	}
	return predict.Shape{ISL: int(math.Round(isl)), OSL: int(math.Round(osl))}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func newValidation(source string, p predict.Prediction) *Validation {
	v := &Validation{Source: source, GPU: p.GPU, Model: p.Model, Engine: p.Engine, Topology: p.Topology, Warnings: p.Warnings}
	for _, d := range p.Derived {
		v.Derived = append(v.Derived, fmt.Sprintf("%s %s: %s%s (±%.0f%%)", d.Role, d.Pool, d.Source, fromText(d.From), 100*d.RelSigma))
	}
	return v
}

// compare pairs measured and predicted metrics of one load point.
func compare(load model.Load, shape predict.Shape, pred predict.Point, measured map[string]float64) ValidatePoint {
	pt := ValidatePoint{Load: load.String(), ISL: shape.ISL, OSL: shape.OSL, Metrics: []Comparison{}, load: load}
	if load.Kind == model.ClosedLoop {
		pt.MaxConcurrency = load.Concurrency
	} else {
		pt.RequestRate, pt.MaxConcurrency = load.RateString(), load.Concurrency
	}
	for _, name := range validateMetrics {
		m, okM := measured[name]
		p, okP := pred.Metrics[name]
		if !okM || !okP || math.IsNaN(m) || math.IsNaN(p) || m <= 0 {
			pt.Missing = append(pt.Missing, name)
			continue
		}
		pt.Metrics = append(pt.Metrics, Comparison{Metric: name, Measured: m, Predicted: p, AbsPctError: absPctError(m, p)})
	}
	return pt
}

// absPctError is |predicted − measured| / measured in percent.
func absPctError(measured, predicted float64) float64 {
	return 100 * math.Abs(predicted-measured) / measured
}

func summarise(pts []ValidatePoint) []ValidateSummary {
	var out []ValidateSummary
	for _, name := range validateMetrics {
		var errs []float64
		for _, p := range pts {
			for _, c := range p.Metrics {
				if c.Metric == name {
					errs = append(errs, c.AbsPctError)
				}
			}
		}
		if len(errs) == 0 {
			continue
		}
		sort.Float64s(errs)
		out = append(out, ValidateSummary{Metric: name, Median: stats.Median(errs), Max: errs[len(errs)-1], Points: len(errs)})
	}
	return out
}

func writeValidation(w io.Writer, v *Validation) error {
	fmt.Fprintf(w, "%s on %s, %s, %s — measured %s, predicted with the %s profile\n",
		model.ShortName(v.Model), v.GPU, v.Engine, v.Topology, v.Source, v.Profile)
	for _, d := range v.Derived {
		fmt.Fprintf(w, "costs: %s\n", d)
	}
	for _, p := range v.Points {
		fmt.Fprintf(w, "\n%s, ISL %d, OSL %d: %d prompts, %d completed, %d failed\n", p.Load, p.ISL, p.OSL, p.NumPrompts, p.Completed, p.Failed)
		t := newTable(w)
		fmt.Fprintln(t, "metric\tmeasured\tpredicted\tabs % error\t")
		for _, c := range p.Metrics {
			fmt.Fprintf(t, "%s\t%s\t%s\t%.1f\t\n", c.Metric, fmtValue(c.Measured), fmtValue(c.Predicted), c.AbsPctError)
		}
		if err := t.Flush(); err != nil {
			return err
		}
		if len(p.Missing) > 0 {
			fmt.Fprintf(w, "not compared (absent or zero): %s\n", strings.Join(p.Missing, ", "))
		}
	}
	if len(v.Points) > 1 {
		fmt.Fprintf(w, "\nAbsolute %% error over %d load points:\n", len(v.Points))
		t := newTable(w)
		fmt.Fprintln(t, "metric\tmedian\tmax\t")
		for _, s := range v.Summary {
			fmt.Fprintf(t, "%s\t%.1f\t%.1f\t\n", s.Metric, s.Median, s.Max)
		}
		return t.Flush()
	}
	return nil
}

// fmtValue prints a metric value as fmtMetric does.
func fmtValue(x float64) string {
	return fmtMetric(map[string]float64{"v": x}, "v")
}
