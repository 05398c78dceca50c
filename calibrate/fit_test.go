package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// truthCoeffs are the "real engine" the synthetic benchmarks are drawn from:
// deliberately away from the prior, so that a fit that stays at the prior fails.
var truthPrefill = model.Coeffs{Overhead: 0.030, PerSeq: 30e-6, Weight: 1.25, Compute: 1.25, Attn: 2, KV: 1.4, Comm: 1.5}
var truthDecode = model.Coeffs{Overhead: 0.010, PerSeq: 30e-6, Weight: 2.0, Compute: 1.5, Attn: 2, KV: 1.4, Comm: 1.5}

// syntheticRecords simulates a Dynamo-like sweep with the truth coefficients
// and returns it as measured records.
func syntheticRecords(t testing.TB, topo string, concs []int, shapes [][2]int) []results.Record {
	return syntheticOn(t, "H20", truthPrefill, truthDecode, topo, concs, shapes)
}

// simulateMetrics simulates point p of env e at costs prm and returns the
// named metrics: a synthetic measurement with known truth.
func simulateMetrics(t testing.TB, e env, prm params, p *point, metrics ...string) map[string]float64 {
	t.Helper()
	cfg, err := simConfig(e, prm, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mt := map[string]float64{}
	for _, k := range metrics {
		mt[k] = res.Metrics[k]
	}
	return mt
}

// syntheticOn is syntheticRecords on another GPU with other truth costs.
func syntheticOn(t testing.TB, gpu string, pre, dec model.Coeffs, topo string, concs []int, shapes [][2]int) []results.Record {
	t.Helper()
	g, err := model.LookupGPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := model.LookupLLM("Qwen/Qwen3-32B")
	tp, err := model.ParseTopology(topo)
	if err != nil {
		t.Fatal(err)
	}
	s := defaultSettings(engine.Parse("dynamo-0.3.0"), model.GPU{}, 0)
	e := env{gpu: g, llm: m, settings: s}
	prm := params{coeffs: map[string]model.Coeffs{RolePrefill: pre, RoleDecode: dec},
		transfer: TransferFit{LatencyS: 0.004, PerTokenS: 5e-6}}
	var recs []results.Record
	for _, sh := range shapes {
		for _, c := range concs {
			p := &point{topo: tp, w: workload.Workload{Load: model.Closed(c), ISL: sh[0], OSL: sh[1], NumPrompts: max(200, 10*c)}}
			mt := simulateMetrics(t, e, prm, p, model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL, model.OutputThroughput)
			recs = append(recs, results.Record{
				ID:     strings.Replace(fmt.Sprintf("syn:%s:%d:%d", topo, sh[0], c), "syn", "syn"+map[bool]string{true: "", false: "-" + g.Name}[g.Name == "H20"], 1),
				Source: results.Source{File: "synthetic-" + g.Name + ".md", Section: topo, Line: len(recs) + 1, Format: "markdown"},
				System: results.System{GPU: g.Name, GPUCount: tp.GPUs(), Model: "Qwen/Qwen3-32B", Engine: "dynamo-0.3.0", Topology: tp},
				Workload: results.Workload{ISL: float64(sh[0]), OSL: float64(sh[1]), ISLMax: sh[0], OSLMax: sh[1],
					Load: model.Closed(c), NumPrompts: max(200, 10*c)},
				// No completed count: the simulated outputs were spread around
				// OSL, and a counted mean equal to the cap would say they ran
				// to exactly OSL (workload.Workload.ExactOutput).
				Metrics: mt,
			})
		}
	}
	return recs
}

func TestFitRecoversSyntheticEngine(t *testing.T) {
	recs := syntheticRecords(t, "3P(TP4) 1D(TP4)", []int{1, 2, 8, 32}, [][2]int{{3000, 150}, {1000, 300}})
	recs = append(recs, syntheticRecords(t, "12P(TP1) 1D(TP4)", []int{1, 2, 16}, [][2]int{{2500, 100}})...)
	prof, rep, err := Fit(context.Background(), recs, Options{MaxEvals: 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.Groups) != 1 {
		t.Fatalf("groups = %d, want 1", len(prof.Groups))
	}
	for _, s := range rep.Series {
		for _, m := range []string{model.RequestThroughput, model.MeanTPOT, model.MeanE2EL} {
			if a := s.APE[m]; a.Median > 3 {
				t.Errorf("%s %g:%g: median APE of %s = %.1f%%, want ≤ 3%%", s.Topology, s.ISL, s.OSL, m, a.Median)
			}
		}
		if a := s.APE[model.MeanTTFT]; a.Median > 8 {
			t.Errorf("%s %g:%g: median APE of TTFT = %.1f%%, want ≤ 8%%", s.Topology, s.ISL, s.OSL, a.Median)
		}
	}
	// The physics must be recovered, not just the table: step times of
	// shapes the data pin down (TP4 decode, TP1 and TP4 prefill) within 10%.
	g, _ := model.LookupGPU("H20")
	m, _ := model.LookupLLM("Qwen/Qwen3-32B")
	gr := prof.Groups[0]
	coeffs := map[string]model.Coeffs{}
	for _, e := range gr.Entries {
		coeffs[e.Role] = e.Coeffs
	}
	checks := []struct {
		name string
		role string
		tp   int
		step model.Step
	}{
		{"decode of 16 at TP4", RoleDecode, 4, model.Step{DecodeSeqs: 16, DecodeKV: 16 * 1200}},
		{"decode of 1 at TP4", RoleDecode, 4, model.Step{DecodeSeqs: 1, DecodeKV: 1100}},
		{"prefill of 2500 at TP1", RolePrefill, 1, model.Step{PrefillTokens: 2500, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(0, 2500)}},
		{"prefill of 3000 at TP4", RolePrefill, 4, model.Step{PrefillTokens: 3000, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(0, 3000)}},
	}
	for _, c := range checks {
		truth := truthDecode
		if c.role == RolePrefill {
			truth = truthPrefill
		}
		pool := model.Pool{Count: 1, TP: c.tp}
		want := model.NewStepCost(g, m, pool, truth, nil).StepTime(c.step)
		got := model.NewStepCost(g, m, pool, coeffs[c.role], nil).StepTime(c.step)
		if math.Abs(got/want-1) > 0.10 {
			t.Errorf("%s: fitted %.2f ms, truth %.2f ms", c.name, 1000*got, 1000*want)
		}
	}
	if len(gr.Residuals) != len(recs) {
		t.Errorf("residuals = %d, want one per record (%d)", len(gr.Residuals), len(recs))
	}
}

func TestFitTooFewPointsKeepsPrior(t *testing.T) {
	recs := syntheticRecords(t, "3P(TP4) 1D(TP4)", []int{1}, [][2]int{{1000, 200}})
	// A user file with one point: only TPOT and TTFT are measured.
	for i := range recs {
		delete(recs[i].Metrics, model.RequestThroughput)
		delete(recs[i].Metrics, model.MeanE2EL)
		delete(recs[i].Metrics, model.OutputThroughput)
	}
	prof, rep, err := Fit(context.Background(), recs, Options{MaxEvals: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range prof.Groups[0].Entries {
		if len(e.Prior) == 0 {
			t.Errorf("%s: one point determined every coefficient: fitted %v", e.Role, e.Fitted)
		}
	}
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "stay at the roofline prior") {
		t.Errorf("notes do not say what stayed at the prior:\n%s", notes)
	}
}

func TestFitBadInput(t *testing.T) {
	good := syntheticRecords(t, "3P(TP4) 1D(TP4)", []int{1, 8}, [][2]int{{1000, 200}})
	tests := []struct {
		name     string
		edit     func([]results.Record) []results.Record
		wantWarn string
		wantErr  string
	}{
		{"negative latency", func(r []results.Record) []results.Record {
			r[0].Metrics[model.MeanTTFT] = -5
			return r
		}, "record syn:3P(TP4) 1D(TP4):1000:1: mean_ttft_ms = -5 is not a positive number", ""},
		{"throughput above the roofline", func(r []results.Record) []results.Record {
			r[1].Metrics[model.RequestThroughput] = 500
			return r
		}, "record syn:3P(TP4) 1D(TP4):1000:8: 600000 tokens/s exceeds", ""},
		{"no lengths", func(r []results.Record) []results.Record {
			r[0].Workload.ISL, r[0].Workload.OSL, r[0].Workload.OSLMax = 0, 0, 0
			return r
		}, "record syn:3P(TP4) 1D(TP4):1000:1: skipped: prompt and output lengths unknown", ""},
		{"nothing usable", func(r []results.Record) []results.Record {
			for i := range r {
				r[i].Metrics = map[string]float64{"p99_itl_ms": 3}
			}
			return r
		}, "", "calibrate: none of the 2 records can be fitted"},
		{"unknown model", func(r []results.Record) []results.Record {
			for i := range r {
				r[i].System.Model = "acme/Nonexistent-7B"
			}
			return r
		}, "", `unknown model "acme/Nonexistent-7B"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := make([]results.Record, len(good))
			for i, r := range good {
				r.Metrics = cloneMetrics(r.Metrics)
				recs[i] = r
			}
			_, rep, err := Fit(context.Background(), tt.edit(recs), Options{MaxEvals: 4}, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, tt.wantWarn) {
				t.Errorf("warnings:\n%s\nwant one containing %q", w, tt.wantWarn)
			}
		})
	}
}

func cloneMetrics(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestCrossValidationHoldsOutConfigurations(t *testing.T) {
	recs := syntheticRecords(t, "3P(TP4) 1D(TP4)", []int{1, 8}, [][2]int{{2500, 100}})
	recs = append(recs, syntheticRecords(t, "12P(TP1) 1D(TP4)", []int{1, 8}, [][2]int{{2500, 100}})...)
	_, rep, err := Fit(context.Background(), recs, Options{MaxEvals: 10, CV: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, s := range rep.CV {
		if s.Holdout != "configuration" {
			t.Errorf("holdout %q, want configuration (one shape only)", s.Holdout)
		}
		held[s.Topology] = true
		// Prefill efficiency is shared across TP: TP1 is predicted from TP4 and back.
		if a := s.APE[model.RequestThroughput]; a.Max > 15 {
			t.Errorf("held-out %s: throughput APE max %.1f%%, want ≤ 15%%", s.Topology, a.Max)
		}
	}
	if !held["3P(TP4) 1D(TP4)"] || !held["12P(TP1) 1D(TP4)"] {
		t.Errorf("held-out configurations %v, want both", held)
	}
}

// TestHoldoutTransfersAcrossGPUs: two GPUs measured with the same engine
// (the same GEMM efficiencies, the engine table's CPU overheads, and a
// dense model's decode streaming its weights and KV at each GPU's measured
// share, as a GPU without a fit is priced): each is predicted from a fit
// of the other alone within a few percent, because the step model is
// physical; the report has a row per fold and the pooled row, and the ±1σ
// band's coverage is measured.
func TestHoldoutTransfersAcrossGPUs(t *testing.T) {
	o := engine.OverheadFor("dynamo-0.3.0")
	pre, dec := truthPrefill, truthDecode
	pre.Overhead, pre.PerSeq = o.EagerStepS, o.PerSeqS
	dec.Overhead, dec.PerSeq = o.StepS, o.PerSeqS
	shapes := [][2]int{{3000, 150}, {1000, 300}}
	var recs []results.Record
	for _, g := range []string{"H20", "H100-SXM"} {
		d := dec
		d.Weight = 1 / mustGPU(t, g).AchievableMemoryShare()
		d.KV = d.Weight
		recs = append(recs, syntheticOn(t, g, pre, d, "3P(TP4) 1D(TP4)", []int{1, 4, 16}, shapes)...)
	}
	_, rep, err := Fit(context.Background(), recs, Options{MaxEvals: 8, CV: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]HoldoutReport{}
	for _, h := range rep.Holdout {
		rows[h.Kind+" "+h.Fold] = h
	}
	for _, k := range []string{"in-sample all", "gpu H20", "gpu H100-SXM", "gpu all", "source all"} {
		h, ok := rows[k]
		if !ok {
			t.Fatalf("no holdout row %q in %v", k, rep.Holdout)
		}
		if want := map[bool]int{true: 12, false: 6}[h.Fold == "all"]; h.Points != want || h.Failed > 0 {
			t.Errorf("%s: %d points, %d failed; want %d and 0", k, h.Points, h.Failed, want)
		}
		if _, ok := h.Coverage["all"]; !ok {
			t.Errorf("%s: no band coverage", k)
		}
	}
	for _, m := range []string{model.MeanTPOT, model.RequestThroughput} {
		if a := rows["gpu all"].APE[m]; a.Median > 8 {
			t.Errorf("leave-one-GPU-out median APE of %s = %.1f%%, want ≤ 8%% (same engine, physical model)", m, a.Median)
		}
		// The floor: each record priced by its own group's fit of noise-free
		// records generated by the cost model itself.
		if a := rows["in-sample all"].APE[m]; a.Median > 3 {
			t.Errorf("in-sample median APE of %s = %.1f%%, want ≤ 3%% (records generated by the cost model)", m, a.Median)
		}
	}
	t.Logf("leave-one-GPU-out: %+v", rows["gpu all"])
}

// A record whose settings state its quantization is fitted as that
// checkpoint: fewer weight bytes, FP8 tensor cores where the GPU has them.
func TestRecordModelReadsQuantization(t *testing.T) {
	tests := []struct {
		model, quant, want string
	}{
		{"meta-llama/Llama-3.1-70B-Instruct", "fp8", "meta-llama/Llama-3.1-70B-Instruct-FP8"},
		{"meta-llama/Llama-3.1-8B-Instruct", "nvfp4", "meta-llama/Llama-3.1-8B-Instruct-FP4"},
		{"Qwen/Qwen3-32B-AWQ", "awq checkpoint", "Qwen/Qwen3-32B-AWQ"},
		{"Qwen/Qwen3-32B", "None", "Qwen/Qwen3-32B"},
		{"Qwen/Qwen3-32B", "", "Qwen/Qwen3-32B"},
	}
	for _, tt := range tests {
		r := &results.Record{System: results.System{Model: tt.model, Settings: map[string]string{"quantization": tt.quant}}}
		if got := recordModel(r); got != tt.want {
			t.Errorf("recordModel(%s, quantization %q) = %s, want %s", tt.model, tt.quant, got, tt.want)
		}
	}
}

// TestRequireStated: with Options.RequireStated, a group that names no GPU
// is an *UnstatedError instead of an assumed catalog pair.
func TestRequireStated(t *testing.T) {
	rec := results.Record{ID: "x:1", Source: results.Source{File: "sweep.json", Line: 1},
		System:   results.System{Model: "Qwen/Qwen3-8B", Engine: "vllm-0.10.1", Topology: model.Aggregated(model.Pool{Count: 1, TP: 1, PP: 1})},
		Workload: results.Workload{ISL: 1024, OSL: 128, ISLMax: 1024, OSLMax: 128, Load: model.Closed(4)},
		Metrics:  map[string]float64{model.RequestThroughput: 3, model.MeanTTFT: 40, model.MeanTPOT: 9, model.MeanE2EL: 1200}}
	_, _, err := Fit(context.Background(), []results.Record{rec}, Options{RequireStated: true, SkipRefine: true}, nil)
	var ue *UnstatedError
	if !errors.As(err, &ue) || !ue.GPU || ue.Model || len(ue.Sources) != 1 || ue.Sources[0] != "sweep.json" {
		t.Fatalf("err = %v, want an UnstatedError for the GPU of sweep.json", err)
	}
	if want := "calibrate: group unknown GPU / Qwen3-8B / vllm-0.10.1: the records do not name the GPU (sources: sweep.json)"; err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
}

// An interrupted fit returns an error that errors.Is recognises as the
// cancellation, so the CLI can tell Ctrl-C from a failed fit.
func TestFitCanceledWrapsContextError(t *testing.T) {
	recs := syntheticRecords(t, "3P(TP4) 1D(TP4)", []int{1, 4}, [][2]int{{1000, 200}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func(ctx context.Context, _ sim.Config) (*sim.Result, error) {
		cancel()
		return nil, ctx.Err()
	}
	_, _, err := Fit(ctx, recs, Options{MaxEvals: 4, Simulate: stop}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Fit after cancel: %v, want an error wrapping context.Canceled", err)
	}
}

// The frontend's serial work is a stage-2 knob only where a group's points
// can show it: a burst, or a point whose measured rate kept an API server
// at least frontendBusy busy at the prior.
func TestFrontendServiceKnob(t *testing.T) {
	agg := func(load model.Load, replicas int, rate float64) *point {
		return &point{topo: model.Aggregated(model.Pool{Count: replicas, TP: 1}), w: workload.Workload{Load: load},
			meas: map[string]float64{model.RequestThroughput: rate}}
	}
	busy := frontendBusy / priorFrontendService // req/s that keep one server frontendBusy busy
	for _, tt := range []struct {
		name string
		pts  []*point
		want bool
	}{
		{"burst", []*point{agg(model.Load{Kind: model.Burst}, 1, 1)}, true},
		{"light closed loop", []*point{agg(model.Closed(8), 1, busy/2)}, false},
		{"busy open loop", []*point{agg(model.Open(2*busy, 1), 1, busy*1.5)}, true},
		{"the same rate over four replicas", []*point{agg(model.Open(2*busy, 1), 4, busy*1.5)}, false},
		{"disaggregated burst", []*point{{topo: model.Disaggregated(model.Pool{Count: 1, TP: 1}, model.Pool{Count: 1, TP: 1}),
			w: workload.Workload{Load: model.Load{Kind: model.Burst}}, meas: map[string]float64{}}}, false},
	} {
		l := layoutOf(tt.pts)
		var knob bool
		for _, k := range knobsFor(l) {
			knob = knob || k.service
		}
		if l.service != tt.want || knob != tt.want {
			t.Errorf("%s: layout.service %v, knob %v; want %v", tt.name, l.service, knob, tt.want)
		}
	}
}

// Scaled gives an aggregated deployment one API server per replica, as
// Configure builds it, and the serial work never exceeds the latency.
func TestFrontendServiceInConfig(t *testing.T) {
	pr := pricing{frontend: 0.004, service: 0.01, coeffs: func(string, model.Pool) (model.Coeffs, error) {
		return model.PriorCoeffsFor(engine.OverheadFor("vllm-0.9.0.1"), false), nil
	}}
	gpu, _ := model.LookupGPU("H20")
	llm, _ := model.LookupLLM("Qwen/Qwen3-32B")
	pr.gpu, pr.llm, pr.settings = gpu, llm, defaultSettings(engine.Parse("vllm-0.9.0.1"), gpu, llm.MaxContext)
	cfg, err := pr.build(model.Aggregated(model.Pool{Count: 2, TP: 4}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.FrontendService != 0.004 || cfg.FrontendServers != 2 {
		t.Errorf("service %v over %d servers, want the latency's 0.004 over 2", cfg.FrontendService, cfg.FrontendServers)
	}
	d := Deployment{Config: cfg, Topology: model.Aggregated(model.Pool{Count: 2, TP: 4})}
	if got := d.Scaled(model.Aggregated(model.Pool{Count: 5, TP: 4})).Config.FrontendServers; got != 5 {
		t.Errorf("scaled to 5 replicas: %d API servers", got)
	}
}

// TestQuickResidualsLeaveUnpricedMetricsOut: --quick (SkipRefine) prices
// only what the analytic model gives (TTFT only at light load; TPOT, E2E
// and closed-loop throughput wherever it has a TPOT row), so a measured
// metric it did not price is neither a 100% error nor a flag.
func TestQuickResidualsLeaveUnpricedMetricsOut(t *testing.T) {
	var recs []results.Record
	for i, c := range []int{1, 4, 16} {
		recs = append(recs, results.Record{ID: fmt.Sprintf("q:%d", i), Source: results.Source{File: "q.json", Line: i + 1},
			System:   results.System{GPU: "H100", Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: "vllm-0.10.1", Topology: model.Aggregated(model.Pool{Count: 1, TP: 1, PP: 1})},
			Workload: results.Workload{ISL: 1024, OSL: 128, ISLMax: 1024, OSLMax: 128, Load: model.Closed(c)},
			Metrics:  map[string]float64{model.RequestThroughput: 0.8 * float64(c), model.MeanTTFT: 40, model.MeanTPOT: 9, model.MeanE2EL: 1200}})
	}
	prof, _, err := Fit(context.Background(), recs, Options{SkipRefine: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, r := range prof.Groups[0].Residuals {
		left += 4 - len(r.Measured)
		for m, v := range r.Fitted {
			if !(v > 0) {
				t.Errorf("%s: %s kept with fitted %v: --quick did not price it", r.Record, m, v)
			}
		}
		if strings.Contains(r.Flag, "not simulated") {
			t.Errorf("%s flagged: %s", r.Record, r.Flag)
		}
	}
	if left == 0 {
		t.Error("every measured metric was priced: the test no longer exercises an unpriced one")
	}
}

// TestFitStopsWhenCanceled (issue 37): a prompt of ten million tokens
// prefilled one token a step is ten million chunks per pass of the linear
// fit (and 2^62 tokens ran for hours); canceling the context stops the fit
// within a few seconds with the context's error.
func TestFitStopsWhenCanceled(t *testing.T) {
	doc := `{"backend": "vllm", "model_id": "Qwen/Qwen3-32B", "request_rate": "inf", "max_concurrency": 4, "completed": 8, "duration": 100,
"request_throughput": 0.08, "mean_ttft_ms": 20000, "mean_tpot_ms": 10, "total_input_tokens": 80000000, "total_output_tokens": 800, "max_num_batched_tokens": 1}`
	recs, err := results.Parse("long.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := results.ParseMeta("long.meta.json", []byte(`{"document": "long.json", "defaults": {"gpu": "H20", "topology": "1xTP4", "engine": "vllm-0.9.0.1"}}`))
	if err != nil || meta.Apply(recs) != nil {
		t.Fatalf("sidecar: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := Fit(ctx, recs, Options{SkipRefine: true}, func(Progress) {})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the fit did not stop within 30 s of its context's end")
	}
}

// TestFitOverflowingRecord (issue 37): a throughput of 1e308 overflowed
// every candidate's loss, leaving the group's GPU and model blank ("model:
// does not fit on  at 1xTP2") or, with SkipRefine, an index panic; the
// group is refused in one line. (The readers refuse such a value; this is
// a record built in code.)
func TestFitOverflowingRecord(t *testing.T) {
	doc := `{"backend": "vllm", "model_id": "Qwen/Qwen3-32B", "request_rate": "inf", "max_concurrency": 4, "completed": 200, "duration": 100,
"request_throughput": 2, "mean_ttft_ms": 200, "mean_tpot_ms": 30, "mean_e2el_ms": 3200, "total_input_tokens": 200000, "total_output_tokens": 20000}`
	recs, err := results.Parse("thr.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := results.ParseMeta("thr.meta.json", []byte(`{"document": "thr.json", "defaults": {"gpu": "H20", "topology": "1xTP2", "engine": "vllm-0.10.1"}}`))
	if err != nil || meta.Apply(recs) != nil {
		t.Fatalf("sidecar: %v", err)
	}
	recs[0].Metrics[model.RequestThroughput] = 1e308
	for _, quick := range []bool{true, false} {
		_, _, err := Fit(context.Background(), recs, Options{SkipRefine: quick}, func(Progress) {})
		const want = "calibrate: group H20 / Qwen3-32B / vllm-0.10.1: its least-squares loss is not finite: a measured value is out of any physical range"
		if err == nil || err.Error() != want {
			t.Errorf("SkipRefine %v: err = %v\nwant %s", quick, err, want)
		}
	}
}
