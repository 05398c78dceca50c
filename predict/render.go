package predict

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/textout"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// Rendering of predictions and validations as text tables (on a
// textout.Output, so also CSV) and tidy CSV; it knows nothing of flags.

// csvMetrics are the metric columns of predict --format csv, named
// as vLLM's bench serve names them.
var csvMetrics = []string{model.RequestThroughput, model.OutputThroughput, model.TotalTokenThroughput,
	model.MeanTTFT, model.MedianTTFT, model.P99TTFT, model.MeanTPOT, model.MedianTPOT, model.P99TPOT,
	model.MeanITL, model.MedianITL, model.P99ITL, model.MeanE2EL, model.MedianE2EL, model.P99E2EL}

// WriteCSV writes one row per predicted point of every shape,
// under one header: the deployment and shape, the load, then every metric
// to six significant digits, so a spreadsheet gets numbers, not the
// table's text.
func WriteCSV(w io.Writer, preds []Prediction) error {
	cw := csv.NewWriter(w)
	head := []string{"gpu", "model", "engine", "topology", "gpus", "isl", "osl", "load", "max_concurrency", "request_rate", "mode", "num_prompts", "saturated"}
	head = append(append(head, csvMetrics...), "output_throughput_per_gpu", "prefix_hit_rate", "router")
	if err := cw.Write(head); err != nil {
		return err
	}
	num := textout.Number
	for _, p := range preds {
		for _, pt := range p.Points {
			conc, rate := loadColumns(pt.Load)
			row := []string{p.GPU, p.Model, p.Engine, p.Topology, strconv.Itoa(p.GPUs), strconv.Itoa(p.ISL), strconv.Itoa(p.OSL),
				pt.Load.Label(), conc, rate, string(pt.Mode), strconv.Itoa(pt.NumPrompts), strconv.FormatBool(pt.Steady != nil && pt.Steady.Saturated)}
			for _, m := range csvMetrics {
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

// WriteTable writes predictions as capsim predict prints them: per shape
// a header line, the table of load points and the lines that explain it.
func WriteTable(w io.Writer, preds []Prediction) error {
	for i, p := range preds {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s on %d× %s, %s, %s — ISL %d, OSL %d — %s\n", model.ShortName(p.Model), p.GPUs, p.GPU, p.Engine, p.Topology, p.ISL, p.OSL, p.HowSimulated())
		tw := textout.NewTable(w)
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
				fmt.Fprintf(w, "near-critical: at %s a pool is busy ≥ %.0f%% with requests waiting: its p99s keep growing with the run's length\n", pt.Load.Label(), 100*sim.CriticalUtilisation)
			}
		}
		fmt.Fprintf(w, "knee:        %.2f req/s (%.0f%% of max %.2f req/s, %.0f output tok/s) at %s\n",
			p.Knee.RequestThroughput, 100*KneeShare, p.Knee.MaxRequestThroughput, p.Knee.MaxOutputThroughput, p.Knee.Load)
		if p.Blowup.Found {
			fmt.Fprintf(w, "TTFT blow-up: mean TTFT %.0f ms (≥ %g× the %.0f ms at the lowest load) from %s\n", p.Blowup.MeanTTFTms, BlowupFactor, p.Blowup.BaseTTFTms, p.Blowup.Load)
		} else {
			fmt.Fprintf(w, "TTFT blow-up: none in range (mean TTFT stays below %g× the %.0f ms at the lowest load)\n", BlowupFactor, p.Blowup.BaseTTFTms)
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
			if d.Experts != "" {
				fmt.Fprintf(w, "experts:     %s %s: %s\n", d.Role, d.Pool, d.Experts)
			}
		}
		if p.Frontend != "" {
			fmt.Fprintf(w, "frontend:    %s\n", p.Frontend)
		}
		if p.Transfer != "" {
			fmt.Fprintf(w, "transfer:    %s\n", p.Transfer)
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
		return "", textout.Number(l.Rate)
	case model.Burst:
		return "", "inf"
	}
	return "", ""
}

// WriteValidationCSV writes one row per load point and metric, under one
// header: the load and shape, then measured, predicted and the error.
func WriteValidationCSV(w io.Writer, v *Validation) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"record", "load", "max_concurrency", "request_rate", "isl", "osl", "num_prompts", "completed", "failed",
		"metric", "measured", "predicted", "abs_pct_error"}); err != nil {
		return err
	}
	for _, p := range v.Points {
		conc, rate := loadColumns(p.Load)
		for _, c := range p.Metrics {
			if err := cw.Write([]string{p.Record, p.Load.Label(), conc, rate, strconv.Itoa(p.ISL), strconv.Itoa(p.OSL), strconv.Itoa(p.NumPrompts),
				strconv.Itoa(p.Completed), strconv.Itoa(p.Failed), c.Metric, textout.Number(c.Measured), textout.Number(c.Predicted), textout.Number(c.AbsPctError)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteValidationTable writes a validation as capsim validate prints it:
// per load point measured against predicted, then the error summary.
func WriteValidationTable(w io.Writer, v *Validation) error {
	fmt.Fprintf(w, "%s on %s, %s, %s — measured %s, predicted with the %s profile as a benchmark replay (the same prompts, ramp-up and drain)%s\n",
		model.ShortName(v.Model), v.GPU, v.Engine, v.Topology, v.Source, v.Profile, WorkloadClause(0, v.Dataset)+ExactOutputClause(v.ExactOutput))
	for _, d := range v.Derived {
		fmt.Fprintf(w, "costs: %s\n", d)
	}
	if v.Frontend != "" {
		fmt.Fprintf(w, "frontend: %s\n", v.Frontend)
	}
	if len(v.EngineFlags) > 0 {
		fmt.Fprintf(w, "engine: %s\n", engineFlagsLine(v.EngineFlags, v.Engine, v.GPU, v.EngineDefaults))
	}
	for _, p := range v.Points {
		completed, failed := fmt.Sprint(p.Completed), fmt.Sprint(p.Failed)
		if p.Record != "" && p.Completed == 0 { // a record that states no counts: "-", never a made-up zero
			completed, failed = "-", textout.Count(p.Failed)
		}
		fmt.Fprintf(w, "\n%s, ISL %d, OSL %d: %d prompts, %s completed, %s failed\n", p.Load, p.ISL, p.OSL, p.NumPrompts, completed, failed)
		t := textout.NewTable(w)
		fmt.Fprintln(t, "metric\tmeasured\tpredicted\tabs % error\t")
		for _, c := range p.Metrics {
			fmt.Fprintf(t, "%s\t%s\t%s\t%.1f\t\n", c.Metric, textout.Value(c.Measured), textout.Value(c.Predicted), c.AbsPctError)
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
		t := textout.NewTable(w)
		fmt.Fprintln(t, "metric\tmedian\tmax\t")
		for _, s := range v.Summary {
			fmt.Fprintf(t, "%s\t%.1f\t%.1f\t\n", s.Metric, s.Median, s.Max)
		}
		return t.Flush()
	}
	return nil
}

// engineFlagsLine is a prediction's engine settings on one line: the
// flags it ran with, then which the user stated, which were the
// calibrated deployment's, and that the rest are the engine version's
// defaults on the GPU (by its rule).
func engineFlagsLine(flags []engine.Flag, label, gpu, rule string) string {
	var all []string
	from := map[string][]string{}
	for _, f := range flags {
		if s := f.String(); s != "" {
			all = append(all, s)
		}
		name := f.Switch()
		if name == "" {
			name = "no --" + f.Name
		}
		from[f.From] = append(from[f.From], name)
	}
	line := strings.Join(all, " ")
	var notes []string
	if n := from[engine.FromStated]; len(n) > 0 {
		notes = append(notes, "stated: "+strings.Join(n, " "))
	}
	if n := from[engine.FromCalibrated]; len(n) > 0 {
		notes = append(notes, "the calibrated deployment's: "+strings.Join(n, " "))
	}
	rest := "the rest"
	if len(notes) == 0 {
		rest = "all"
	}
	notes = append(notes, fmt.Sprintf("%s %s's defaults on %s (%s)", rest, label, gpu, rule))
	return line + " — " + strings.Join(notes, "; ")
}
