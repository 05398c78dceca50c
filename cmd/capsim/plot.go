package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/internal/atomicfile"
	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plots"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: capsim plot --out DIR [--gpu G] [--model M] [--engine E] [--source S] [--format png|svg] [--profile FILE] [--from FILES]\n\n"+
			"Draw every measured series (one configuration × workload shape) against the calibrated\n"+
			"simulation, a summary of predicted against measured, and DIR/index.html to browse them.\n\nflags:")
		fs.PrintDefaults()
	}
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return o.run(ctx, stdout, stderr)
}

// plotted is one figure written, for the index and the listing.
type plotted struct {
	file, title string
	points      int
	simulated   bool
	median      float64            // NaN when the series was not simulated
	errors      map[string]float64 // median APE by metric, fractions
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
	prof, err := loadProfile(o.profile)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	series := plotGroupSeries(recs)
	flags := plotCalibrationFlags(prof)
	names := map[string]int{}
	var done []plotted
	var pairs []plots.Pair
	for i, s := range series {
		if err := ctx.Err(); err != nil {
			return err
		}
		fig, p, sp, warn := o.seriesFigure(ctx, prof, s, flags, loaded)
		if err := ctx.Err(); err != nil {
			return err
		}
		p.file = plotUniqueName(names, s.slug()) + "." + o.format
		if err := fig.Save(filepath.Join(o.out, p.file)); err != nil {
			return err
		}
		if warn != "" {
			fmt.Fprintf(stderr, "plot: warning: %s: %s\n", p.file, warn)
		}
		errText := "not simulated"
		if !math.IsNaN(p.median) {
			errText = fmt.Sprintf("median error %.1f%%", 100*p.median)
		}
		fmt.Fprintf(stderr, "plot: [%d/%d] %s (%d points, %s)\n", i+1, len(series), p.file, p.points, errText)
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
	entries := []plots.IndexEntry{{File: summaryFile, Title: fmt.Sprintf("Summary: predicted against measured, %d points of %d series", len(pairs), len(series)), Errors: sumErrs}}
	for _, p := range done {
		entries = append(entries, plots.IndexEntry{File: p.file, Title: p.title, Errors: p.errors})
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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tpoints\tmedian error\tseries")
	for _, p := range done {
		e := "-"
		if !math.IsNaN(p.median) {
			e = fmt.Sprintf("%.1f%%", 100*p.median)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", p.file, p.points, e, p.title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "summary: %s\nindex:   %s\n", filepath.Join(dir, summaryFile), filepath.Join(dir, "index.html"))
	return err
}

// plotSeries is one configuration × workload shape: records of one source
// file, system (GPU, model, engine, topology, settings), nominal shape and
// kind of load.
type plotSeries struct {
	recs []*results.Record
	kind model.LoadKind
}

func (s *plotSeries) first() *results.Record { return s.recs[0] }

// plotGroupSeries groups records into series in first-seen order. The nominal
// shape is the requested lengths (isl_max, osl_max) when the source gives
// them; a measured mean output length varies from point to point, so it
// does not split a series.
func plotGroupSeries(recs []results.Record) []*plotSeries {
	var out []*plotSeries
	idx := map[string]*plotSeries{}
	for i := range recs {
		r := &recs[i]
		key := strings.Join([]string{r.Source.File, plotCanonicalGPU(r.System.GPU), r.System.Model, r.System.Engine,
			r.System.Topology.String(), plotSettingsKey(r.System.Settings), plotNominalISL(r.Workload), plotNominalOSL(r.Workload),
			string(r.Workload.Load.Kind)}, "|")
		s, ok := idx[key]
		if !ok {
			s = &plotSeries{kind: r.Workload.Load.Kind}
			idx[key] = s
			out = append(out, s)
		}
		s.recs = append(s.recs, r)
	}
	return out
}

func plotCanonicalGPU(s string) string {
	if g, err := model.LookupGPU(s); err == nil {
		return g.Name
	}
	return s
}

func plotSettingsKey(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s;", k, m[k])
	}
	return b.String()
}

func plotNominalISL(w results.Workload) string {
	if w.ISLMax > 0 {
		return strconv.Itoa(w.ISLMax)
	}
	return strconv.FormatFloat(math.Round(w.ISL), 'f', 0, 64)
}

func plotNominalOSL(w results.Workload) string {
	if w.OSLMax > 0 {
		return strconv.Itoa(w.OSLMax)
	}
	return ""
}

// x is a record's position on the x axis: concurrency, rate, or for a
// burst the number of prompts sent at once (0 when unknown).
func (s *plotSeries) x(r *results.Record) float64 {
	if s.kind == model.Burst {
		return float64(r.Workload.NumPrompts)
	}
	x, _ := plots.LoadX(r.Workload.Load)
	return x
}

func (s *plotSeries) xLabel() string {
	if s.kind == model.Burst {
		return "burst size (prompts sent at once)"
	}
	return plots.XLabelFor(s.kind)
}

// shape is the workload to simulate: the median measured lengths. For an
// output length the source does not state, it is the median mean output of
// the file's rows of the same model and max_tokens, else their median ratio
// of mean output to max_tokens times this max_tokens, else max_tokens.
func (s *plotSeries) shape(all []results.Record) (isl, osl int, note string) {
	var is, os []float64
	for _, r := range s.recs {
		if r.Workload.ISL > 0 {
			is = append(is, r.Workload.ISL)
		}
		if r.Workload.OSL > 0 {
			os = append(os, r.Workload.OSL)
		}
	}
	if len(is) > 0 {
		isl = max(1, int(math.Round(stats.Median(is))))
	} else if m := s.first().Workload.ISLMax; m > 0 {
		isl = m
	}
	if len(os) > 0 {
		return isl, max(2, int(math.Round(stats.Median(os)))), ""
	}
	oslMax := s.first().Workload.OSLMax
	if oslMax <= 0 {
		return isl, 0, ""
	}
	var same, ratios []float64
	for i := range all {
		q := &all[i]
		if q.Source.File == s.first().Source.File && q.System.Model == s.first().System.Model && q.Workload.OSL > 0 && q.Workload.OSLMax > 0 {
			ratios = append(ratios, q.Workload.OSL/float64(q.Workload.OSLMax))
			if q.Workload.OSLMax == oslMax {
				same = append(same, q.Workload.OSL)
			}
		}
	}
	switch {
	case len(same) > 0:
		osl = max(2, int(math.Round(stats.Median(same))))
	case len(ratios) > 0:
		osl = max(2, int(math.Round(stats.Median(ratios)*float64(oslMax))))
	default:
		osl = oslMax
	}
	return isl, osl, fmt.Sprintf("output length not stated: %d tokens assumed", osl)
}

// slug is the series' file name without extension: readable and stable.
func (s *plotSeries) slug() string {
	r := s.first()
	doc := results.DocID(r.Source.File)
	if i := strings.IndexByte(doc, '_'); i > 0 {
		doc = doc[:i] // seed documents: "004_40ae…" → "004"
	}
	t := r.System.Topology
	topo := t.Replicas.String()
	if t.Disaggregated() {
		topo = fmt.Sprintf("%dp-tp%d-%dd-tp%d", t.Prefill.Count, t.Prefill.TP, t.Decode.Count, t.Decode.TP)
	} else if t.GPUs() == 0 {
		topo = ""
	}
	parts := []string{doc, r.System.GPU, model.ShortName(r.System.Model), r.System.Engine, topo, r.DeploymentLabel(),
		"isl" + plotNominalISL(r.Workload)}
	if o := plotNominalOSL(r.Workload); o != "" {
		parts = append(parts, "osl"+o)
	} else if r.Workload.OSL > 0 {
		parts = append(parts, fmt.Sprintf("osl%.0f", r.Workload.OSL))
	}
	parts = append(parts, string(s.kind))
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(strings.Join(parts, "-")) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-.")
}

// plotUniqueName returns name, or name-2, name-3, … when it was used before.
func plotUniqueName(used map[string]int, name string) string {
	used[name]++
	if n := used[name]; n > 1 {
		return fmt.Sprintf("%s-%d", name, n)
	}
	return name
}

// plotCalibrationFlags maps record IDs to the reason the calibration flagged them.
func plotCalibrationFlags(p *calibrate.Profile) map[string]string {
	flags := map[string]string{}
	for _, g := range p.Groups {
		for _, r := range g.Residuals {
			if r.Flag != "" {
				flags[r.Record] = r.Flag
			}
		}
	}
	return flags
}

// plotShortReason is the part of an anomaly or flag before its colon
// ("ttft-tail", "not explained by the cost model"): the footer has one line.
func plotShortReason(s string) string {
	s, _, _ = strings.Cut(s, ":")
	return strings.TrimSpace(s)
}

// panelMetrics are the default panels, with output throughput standing in
// for request throughput when the source gives only the former.
func (s *plotSeries) panelMetrics() []string {
	has := func(m string) bool {
		for _, r := range s.recs {
			if _, ok := r.Metrics[m]; ok {
				return true
			}
		}
		return false
	}
	ms := append([]string(nil), plots.DefaultPanels...)
	if !has(model.RequestThroughput) && has(model.OutputThroughput) {
		ms[0] = model.OutputThroughput
	}
	return ms
}

// seriesFigure simulates a series over a grid of loads and draws it; all
// are every record loaded (for the output-length estimate). It returns
// the figure, what the index needs (file left empty), the predicted and
// measured pairs for the summary, and a warning when the series could not
// be simulated (the figure then shows the measurements only).
func (o plotOptions) seriesFigure(ctx context.Context, prof *calibrate.Profile, s *plotSeries, flags map[string]string, all []results.Record) (*plots.Figure, plotted, []plots.Pair, string) {
	r := s.first()
	metrics := s.panelMetrics()
	var pts []plots.Point
	var xs []float64
	var warn []string
	for _, rec := range s.recs {
		x := s.x(rec)
		if !(x > 0) || math.IsInf(x, 0) {
			warn = append(warn, fmt.Sprintf("record %s has no place on the load axis (%s with no prompt count); left out", rec.ID, rec.Workload.Load))
			continue
		}
		xs = append(xs, x)
		var reasons []string
		for _, a := range rec.Anomalies {
			reasons = append(reasons, plotShortReason(a))
		}
		if f := flags[rec.ID]; f != "" {
			reasons = append(reasons, plotShortReason(f))
		}
		pts = append(pts, plots.Point{X: x, Measured: rec.Metrics, Flagged: len(reasons) > 0, FlagReason: strings.Join(reasons, ", ")})
	}

	isl, osl, shapeNote := s.shape(all)
	var notes []string
	if shapeNote != "" {
		notes = append(notes, shapeNote)
	}
	p := plotted{points: len(pts), median: math.NaN()}
	var pairs []plots.Pair
	target, targetNotes, err := plotSeriesTarget(prof, s)
	notes = append(notes, targetNotes...)
	var sim map[float64]map[string]float64
	var derived string
	if err == nil {
		sim, derived, err = o.simulate(ctx, prof, s, target, isl, osl, xs)
	}
	if err != nil {
		warn = append(warn, "not simulated: "+firstLine(err.Error()))
	} else {
		p.simulated = true
		grid := make([]float64, 0, len(sim))
		for x := range sim {
			grid = append(grid, x)
		}
		sort.Float64s(grid)
		for _, x := range grid {
			pts = append(pts, plots.Point{X: x, Fitted: sim[x]})
		}
		p.errors, pairs, p.median = plotSeriesErrors(s, sim, metrics)
	}

	shape := fmt.Sprintf("ISL %d / OSL %d", isl, osl)
	if m := r.Workload.OSLMax; m > 0 && m != osl {
		shape = fmt.Sprintf("ISL %d / OSL %d (max %d)", isl, osl, m)
	}
	errText := "not simulated"
	if !math.IsNaN(p.median) {
		errText = fmt.Sprintf("median error %.1f%%", 100*p.median)
	} else if err == nil {
		errText = "no measured metric to compare"
	}
	config := plotConfigLabel(r, target)
	p.title = fmt.Sprintf("%s — %s — %s", config, shape, errText)

	sub := []string{filepath.Base(r.Source.File)}
	if r.Source.Section != "" {
		sub = append(sub, plotClip(r.Source.Section, 64))
	}
	sub = append(sub, plotLoadDescription(r.Workload.Load))
	if derived != "" {
		sub = append(sub, "simulated with "+derived+" costs")
	}
	sub = append(sub, notes...)
	if err != nil {
		sub = append(sub, "not simulated: "+firstLine(err.Error()))
	}
	fig := plots.SeriesFigure(plots.Series{
		Title:    p.title,
		Subtitle: strings.Join(sub, " · "),
		XLabel:   s.xLabel(),
		Metrics:  metrics,
		Points:   pts,
	})
	return fig, p, pairs, strings.Join(warn, "; ")
}

// plotConfigLabel names a series' configuration as the source states it:
// "H20 · Qwen3-32B · dynamo-0.3.0 · 3P(TP4) 1D(TP4)", leaving out what the
// source does not say and naming a GPU and model the calibration assumed.
func plotConfigLabel(r *results.Record, target calibrate.Target) string {
	var parts []string
	gpu, mdl := r.System.GPU, model.ShortName(r.System.Model)
	switch {
	case gpu == "" && mdl == "" && target.GPU != "":
		parts = append(parts, fmt.Sprintf("GPU and model not stated (as %s · %s)", target.GPU, model.ShortName(target.Model)))
	case gpu == "" && mdl == "":
		parts = append(parts, "GPU and model not stated")
	case gpu == "":
		parts = append(parts, "GPU not stated", mdl)
	case mdl == "":
		parts = append(parts, gpu, "model not stated")
	default:
		parts = append(parts, gpu, mdl)
	}
	if r.System.Engine != "" {
		parts = append(parts, r.System.Engine)
	}
	if r.System.Topology.GPUs() > 0 {
		t := r.System.Topology.Notation()
		if d := r.DeploymentLabel(); d != "" {
			t += " " + d
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, " · ")
}

// plotClip shortens s to n runes with an ellipsis.
func plotClip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func plotLoadDescription(l model.Load) string {
	switch l.Kind {
	case model.ClosedLoop:
		return "closed loop"
	case model.OpenLoop:
		if l.Burstiness == 1 || l.Burstiness == 0 {
			return "Poisson arrivals"
		}
		return fmt.Sprintf("gamma arrivals, burstiness %g", l.Burstiness)
	case model.Burst:
		return "all prompts sent at once"
	}
	return string(l.Kind)
}

// plotSeriesErrors compares the simulation at the measured loads with the
// measurements: the median absolute percentage error per metric (as a
// fraction), the pairs for the summary, and the median over every
// compared value. Measurements that are zero or missing are not compared.
func plotSeriesErrors(s *plotSeries, sim map[float64]map[string]float64, metrics []string) (map[string]float64, []plots.Pair, float64) {
	errs := map[string][]float64{}
	var all []float64
	var pairs []plots.Pair
	for _, r := range s.recs {
		pred, ok := sim[s.x(r)]
		if !ok {
			continue
		}
		for _, m := range metrics {
			meas, ok1 := r.Metrics[m]
			v, ok2 := pred[m]
			if !ok1 || !ok2 || !(meas > 0) || math.IsInf(meas, 0) || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			ape := math.Abs(v-meas) / meas
			errs[m] = append(errs[m], ape)
			all = append(all, ape)
			pairs = append(pairs, plots.Pair{Metric: m, Measured: meas, Predicted: v})
		}
	}
	out := map[string]float64{}
	for m, e := range errs {
		out[m] = stats.Median(e)
	}
	if len(all) == 0 {
		return out, pairs, math.NaN()
	}
	return out, pairs, stats.Median(all)
}

// plotLoadGrid is the measured loads plus the geometric midpoints between
// neighbours (whole numbers for concurrencies and burst sizes), so the
// simulated line shows its shape between measurements; a single load gets
// half and double itself.
func plotLoadGrid(xs []float64, whole bool) []float64 {
	set := map[float64]bool{}
	add := func(x float64) {
		if whole {
			x = math.Round(x)
		}
		if x > 0 && !math.IsInf(x, 0) {
			set[x] = true
		}
	}
	for _, x := range xs {
		add(x)
	}
	sorted := func() []float64 {
		out := make([]float64, 0, len(set))
		for x := range set {
			out = append(out, x)
		}
		sort.Float64s(out)
		return out
	}
	base := sorted()
	switch len(base) {
	case 0:
		return nil
	case 1:
		add(base[0] / 2)
		add(base[0] * 2)
	default:
		for i := 1; i < len(base); i++ {
			add(math.Sqrt(base[i-1] * base[i]))
		}
	}
	return sorted()
}

// plotSeriesTarget is the deployment a series ran on, as the profile can
// configure it. A source that names no GPU or model is simulated as the
// pair the calibration assumed for its records; no topology means one GPU.
func plotSeriesTarget(prof *calibrate.Profile, s *plotSeries) (calibrate.Target, []string, error) {
	r := s.first()
	var notes []string
	gpu, llm := r.System.GPU, r.System.Model
	if gpu == "" || llm == "" {
		if a := plotAssumedFor(prof, r); a != nil {
			gpu, llm = a.GPU, a.Model
			notes = append(notes, fmt.Sprintf("GPU and model not stated: simulated as %s / %s, the pair the calibration assumed", gpu, model.ShortName(llm)))
		} else {
			return calibrate.Target{}, nil, fmt.Errorf("the source states no GPU or model and the profile assumes none")
		}
	}
	topo := r.System.Topology
	if topo.GPUs() == 0 {
		topo = model.Aggregated(model.Pool{Count: 1, TP: 1, PP: 1})
		notes = append(notes, "topology not stated: 1xTP1 assumed")
	}
	engine, err := prof.ResolveEngine(gpu, llm, r.System.Engine, topo.Disaggregated())
	if err != nil {
		// An engine version the profile has not seen: simulate with the
		// newest calibrated engine of the same family, and say so.
		family, _, _ := strings.Cut(r.System.Engine, "-")
		if engine, err = prof.ResolveEngine(gpu, llm, family, topo.Disaggregated()); err != nil {
			return calibrate.Target{}, notes, err
		}
		notes = append(notes, fmt.Sprintf("engine %s not calibrated: simulated with %s", r.System.Engine, engine))
	}
	return calibrate.Target{GPU: gpu, Model: llm, Engine: engine, Topology: topo, Assumed: r.System.GPU == "" || r.System.Model == ""}, notes, nil
}

// plotAssumedFor finds the GPU and model a profile assumed for a record whose source does not say.
func plotAssumedFor(prof *calibrate.Profile, r *results.Record) *calibrate.Assumption {
	var byEngine *calibrate.Assumption
	for i := range prof.Groups {
		g := &prof.Groups[i]
		if g.Assumed == nil {
			continue
		}
		for _, id := range g.Records {
			if id == r.ID {
				return g.Assumed
			}
		}
		if byEngine == nil && strings.EqualFold(g.Engine, r.System.Engine) {
			byEngine = g.Assumed
		}
	}
	return byEngine
}

// simulate runs the calibrated simulator for a series over its load grid
// and returns the metrics by x, the cost provenance and notes.
func (o plotOptions) simulate(ctx context.Context, prof *calibrate.Profile, s *plotSeries, target calibrate.Target, isl, osl int, xs []float64) (map[float64]map[string]float64, string, error) {
	if isl <= 0 || osl <= 0 {
		return nil, "", fmt.Errorf("prompt or output length unknown")
	}
	if len(xs) == 0 {
		return nil, "", fmt.Errorf("no measured load to simulate")
	}
	grid := plotLoadGrid(xs, s.kind != model.OpenLoop)
	// Fitted against measured: replay the benchmark as it ran.
	opts := predict.Options{Target: target, Shapes: []predict.Shape{{ISL: isl, OSL: osl}}, NumPrompts: o.numPrompts, Seed: o.seed, NoBand: true, Mode: sim.BenchmarkReplay}
	out := map[float64]map[string]float64{}
	var first *predict.Prediction
	run := func(opts predict.Options, xs []float64) error {
		preds, err := predict.Run(ctx, prof, opts)
		if err != nil {
			return err
		}
		if len(preds) != 1 || len(preds[0].Points) != len(xs) {
			return fmt.Errorf("plot: predict returned %d predictions for one shape", len(preds))
		}
		for i, pt := range preds[0].Points {
			out[xs[i]] = pt.Metrics
		}
		if first == nil {
			first = &preds[0]
		}
		return nil
	}
	var err error
	switch s.kind {
	case model.Burst:
		// A burst's size is part of its workload: one run per size.
		for _, x := range grid {
			opts.Loads = []model.Load{model.Open(math.Inf(1), 1)}
			opts.NumPrompts = int(x)
			if err := run(opts, []float64{x}); err != nil {
				return nil, "", err
			}
		}
	case model.ClosedLoop:
		for _, x := range grid {
			opts.Loads = append(opts.Loads, model.Closed(int(x)))
		}
		err = run(opts, grid)
	case model.OpenLoop:
		b := s.first().Workload.Load.Burstiness
		for _, x := range grid {
			opts.Loads = append(opts.Loads, model.Open(x, b))
		}
		err = run(opts, grid)
	default:
		err = fmt.Errorf("unknown load kind %q", s.kind)
	}
	if err != nil {
		return nil, "", err
	}
	return out, plotCostSources(first), nil
}

// plotCostSources says where the simulated costs came from: "fitted",
// "derived", "prior" or a mix, e.g. "fitted prefill, derived decode".
func plotCostSources(p *predict.Prediction) string {
	if p == nil || len(p.Derived) == 0 {
		return ""
	}
	same := true
	for _, d := range p.Derived {
		same = same && d.Source == p.Derived[0].Source
	}
	if same {
		return p.Derived[0].Source
	}
	var parts []string
	for _, d := range p.Derived {
		parts = append(parts, d.Source+" "+d.Role)
	}
	return strings.Join(parts, ", ")
}

// plotSummaryFigure draws every predicted value against its measurement and
// returns the per-metric median errors for the index.
func plotSummaryFigure(pairs []plots.Pair, nSeries int) (*plots.Figure, map[string]float64) {
	errs := map[string][]float64{}
	for _, p := range pairs {
		if p.Measured > 0 {
			errs[p.Metric] = append(errs[p.Metric], math.Abs(p.Predicted-p.Measured)/p.Measured)
		}
	}
	med := map[string]float64{}
	for m, e := range errs {
		med[m] = stats.Median(e)
	}
	fig := plots.SummaryFigure(plots.Summary{
		Title:    "Calibrated simulation against measurements",
		Subtitle: fmt.Sprintf("every measured point of the %d simulated series, simulated at its own load", nSeries),
		Pairs:    pairs,
	})
	return fig, med
}
