package plan

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// h20Profile is the embedded default profile, which must hold the H20 /
// Qwen3-32B calibration (seed 004).
func h20Profile(t testing.TB) *calibrate.Profile {
	t.Helper()
	p, err := calibrate.ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Engines("H20", "Qwen/Qwen3-32B")) == 0 {
		t.Fatal("the embedded profile has no H20 / Qwen3-32B calibration")
	}
	return p
}

// profiles are the profiles every search property is checked on.
func profiles(t *testing.T) []struct {
	name string
	prof Profile
} {
	return []struct {
		name string
		prof Profile
	}{{"fake", &fakeProfile{}}, {"H20", h20Profile(t)}}
}

func mustSLOs(t testing.TB, s string) []SLO {
	t.Helper()
	slos, err := ParseSLOs(s)
	if err != nil {
		t.Fatal(err)
	}
	return slos
}

// h20Options is a small search on H20 only, ranked by GPU count, with
// shorter steady-state runs than the default (the properties tested do not
// need a p99 to 5%).
func h20Options(t testing.TB, rate float64, slo string) Options {
	return Options{Model: "Qwen3-32B", GPUs: []string{"H20"}, SLOs: mustSLOs(t, slo), MaxGPUs: 32, TopK: 3, NoSweep: true, Steady: sim.SteadyOptions{MaxPrompts: 8000}, Workload: workload.Workload{ISL: 3000, OSL: 150, Load: model.Open(rate, 1), Seed: 1, NumPrompts: 2000}}
}

func TestRecommendationsMeetSLOsWhenResimulated(t *testing.T) {
	t.Parallel()
	for _, p := range profiles(t) {
		t.Run(p.name, func(t *testing.T) {
			opts := h20Options(t, 4, "ttft_p99=3000ms,tpot_p99=60ms,e2el_mean=12s")
			res, err := Run(context.Background(), p.prof, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Recommendations) == 0 {
				t.Fatalf("no recommendation: %s", res.Why)
			}
			for _, rec := range res.Recommendations {
				r := resimulate(t, p.prof, opts, rec, opts.Workload.Load, opts.Band())
				if r.Steady == nil || r.Steady.Saturated {
					t.Errorf("%s: re-simulated steady state %+v", rec.Notation, r.Steady)
				}
				for _, slo := range opts.SLOs {
					got := r.Metrics[slo.Metric()]
					if got > slo.LimitMs {
						t.Errorf("%s: re-simulated %s = %.1f ms misses %s", rec.Notation, slo.Metric(), got, slo)
					}
					// Another run length gives another estimate, within the
					// statistical uncertainty of the two.
					e := r.Steady.RelError[slo.Metric()] + rec.Steady.RelError[slo.Metric()]
					if math.Abs(got-rec.Metrics[slo.Metric()]) > (3*e+0.01)*got {
						t.Errorf("%s: re-simulated %s = %v, plan reported %v (relative errors %v)", rec.Notation, slo.Metric(), got, rec.Metrics[slo.Metric()], e)
					}
				}
				if rec.GPUs != rec.Topology.GPUs() || rec.Cost != float64(rec.GPUs) {
					t.Errorf("%s: %d GPUs, cost %v", rec.Notation, rec.GPUs, rec.Cost)
				}
				if rec.Headroom.Ratio < 1 {
					t.Errorf("%s: headroom ratio %v below 1", rec.Notation, rec.Headroom.Ratio)
				}
			}
			if len(res.Frontier) == 0 {
				t.Error("no Pareto frontier")
			}
			for i, p := range res.Frontier {
				if !p.MeetsSLOs {
					t.Errorf("frontier point %s misses the SLOs though some deployments meet them", p.Notation)
				}
				if i > 0 && (p.PerUser > res.Frontier[i-1].PerUser || p.OutputPerGPU <= res.Frontier[i-1].OutputPerGPU) {
					t.Errorf("frontier not ordered fastest per user first with rising throughput per GPU: %+v after %+v", p, res.Frontier[i-1])
				}
			}
			for i := 1; i < len(res.Recommendations); i++ {
				a, b := res.Recommendations[i-1], res.Recommendations[i]
				if a.Cost > b.Cost || (a.Cost == b.Cost && a.Headroom.Ratio < b.Headroom.Ratio) {
					t.Errorf("rank %d (%v, headroom %v) before rank %d (%v, headroom %v)", a.Rank, a.Cost, a.Headroom.Ratio, b.Rank, b.Cost, b.Headroom.Ratio)
				}
			}
		})
	}
}

// The headroom is a load that passes and just below one that fails.
func TestHeadroomPassesAndIsTight(t *testing.T) {
	t.Parallel()
	prof := h20Profile(t)
	opts := h20Options(t, 4, "ttft_p99=3000ms,tpot_p99=60ms")
	opts.TopK = 1
	res, err := Run(context.Background(), prof, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recommendations) == 0 {
		t.Fatalf("no recommendation: %s", res.Why)
	}
	rec := res.Recommendations[0]
	if rec.Headroom.AtLeast {
		t.Skipf("headroom search ended passing at %v req/s", rec.Headroom.RequestRate)
	}
	run := func(rate float64) bool {
		r := resimulate(t, prof, opts, rec, model.Open(rate, 1), opts.Band())
		_, ok := check(opts.SLOs, r.Metrics)
		return ok && !r.Steady.Saturated
	}
	// Re-simulated with another run length, the boundary moves by the
	// statistical error of a p99 (a few percent): 3% either side.
	h := rec.Headroom.RequestRate
	if !run(h * 0.97) {
		t.Errorf("%s fails its SLOs 3%% below its headroom %v req/s", rec.Notation, h)
	}
	if run(h * 1.05) {
		t.Errorf("%s still meets its SLOs 5%% above its headroom %v req/s", rec.Notation, h)
	}
	if rec.Headroom.Binding == "" {
		t.Error("no binding SLO named")
	}
}

// resimulate runs a recommendation again outside the search: configured
// at cost band z with its engine settings, in steady state at load l as
// predict would (sim.Converge from predict.DefaultNumPrompts), adjusted to
// what a client measures.
func resimulate(t *testing.T, prof Profile, opts Options, rec Recommendation, l model.Load, z float64) *sim.Result {
	t.Helper()
	d, err := prof.Configure(calibrate.Target{GPU: mustGPU(t, rec.GPU), LLM: mustLLM(t, opts.Model), Engine: engine.Parse(rec.Engine), Topology: rec.Topology, Band: z})
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range rec.Settings {
		p := &d.Config.Replicas
		switch ps.Role {
		case "prefill":
			p = &d.Config.Prefill
		case "decode":
			p = &d.Config.Decode
		}
		p.MaxNumSeqs, p.MaxBatchedTokens = ps.MaxNumSeqs, ps.MaxNumBatchedTokens
	}
	cfg := d.Config
	// The workload plan simulates: outputs spread as in real runs.
	cfg.Load, cfg.Input, cfg.Output = l, sim.Fixed(opts.Workload.ISL), workload.BenchmarkOutput(opts.Workload.OSL, 0)
	cfg.NumPrompts, cfg.Seed = predict.DefaultNumPrompts(opts.Workload.NumPrompts, sim.SteadyState, l), opts.Workload.Seed
	r, err := sim.Converge(context.Background(), cfg, opts.Steady, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func cheapest(t *testing.T, prof Profile, opts Options) int {
	t.Helper()
	res, err := Run(context.Background(), prof, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recommendations) == 0 {
		return math.MaxInt
	}
	return res.Recommendations[0].GPUs
}

func TestHigherRateNeverNeedsFewerGPUs(t *testing.T) {
	t.Parallel()
	for _, p := range profiles(t) {
		t.Run(p.name, func(t *testing.T) {
			prev, prevRate := 0, 0.0
			for _, rate := range []float64{0.5, 1, 2, 4, 6} {
				opts := h20Options(t, rate, "ttft_p99=2000ms,tpot_p99=50ms")
				opts.TopK = 1
				n := cheapest(t, p.prof, opts)
				if n < prev {
					t.Errorf("rate %v needs %d GPUs, fewer than the %d at rate %v", rate, n, prev, prevRate)
				}
				t.Logf("rate %v: %d GPUs", rate, n)
				prev, prevRate = n, rate
			}
			if prev == math.MaxInt {
				t.Error("the highest rate found no deployment: the test checks nothing there")
			}
		})
	}
}

func TestLooserSLONeverNeedsMoreGPUs(t *testing.T) {
	t.Parallel()
	for _, p := range profiles(t) {
		t.Run(p.name, func(t *testing.T) {
			prev, prevSLO := math.MaxInt, ""
			for _, slo := range []string{
				"ttft_p99=800ms,tpot_p99=30ms", "ttft_p99=1000ms,tpot_p99=40ms", "ttft_p99=1500ms,tpot_p99=50ms",
				"ttft_p99=2000ms,tpot_p99=60ms", "ttft_p99=4000ms,tpot_p99=100ms", "ttft_p99=20s,tpot_p99=1s",
			} {
				opts := h20Options(t, 4, slo)
				opts.TopK = 1
				n := cheapest(t, p.prof, opts)
				if n > prev {
					t.Errorf("%s needs %d GPUs, more than the %d under the tighter %s", slo, n, prev, prevSLO)
				}
				t.Logf("%s: %d GPUs", slo, n)
				prev, prevSLO = n, slo
			}
			if prev == math.MaxInt {
				t.Error("even the loosest SLO found no deployment: the test checks nothing")
			}
		})
	}
}

func TestNothingQualifiesSaysWhy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, slo string
		rate      float64
		maxGPUs   int
		want      []string
		hit       float64 // prefix-cache hit rate
	}{
		// TTFT below the prefill of one 3000-token prompt on any H20 worker.
		{"impossible ttft", "ttft_p99=50ms,tpot_p99=50ms", 4, 32, []string{"ttft_p99<=50ms", "at least", "prefill of one 3000-token prompt"}, 0},
		// With a hit rate the floor prices the uncached tokens only, and says so.
		{"impossible ttft, cached prefix", "ttft_p99=20ms,tpot_p99=50ms", 4, 32,
			[]string{"ttft_p99<=20ms", "fastest prefill of the 1710 uncached tokens of one 3000-token prompt (1290 from the prefix cache)"}, 0.43},
		{"impossible tpot", "ttft_p99=5s,tpot_mean=2ms", 4, 32, []string{"tpot_mean<=2ms", "decode step"}, 0},
		{"rate beyond capacity", "ttft_p99=5s,tpot_p99=100ms", 500, 16, []string{"sustain rate 500 req/s", "capacity bound"}, 0},
	}
	prof := h20Profile(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := h20Options(t, tc.rate, tc.slo)
			opts.MaxGPUs = tc.maxGPUs
			opts.Workload.PrefixHitRate = tc.hit
			res, err := Run(context.Background(), prof, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Recommendations) != 0 {
				t.Fatalf("got %d recommendations, want none (first %s)", len(res.Recommendations), res.Recommendations[0].Notation)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Why, w) {
					t.Errorf("Why = %q, want it to contain %q", res.Why, w)
				}
			}
			if strings.Contains(res.Why, "\n") {
				t.Errorf("Why spans lines: %q", res.Why)
			}
			if strings.Contains(res.Why, "prefix cache") != (tc.hit > 0) {
				t.Errorf("Why = %q: mentions the prefix cache %v, want %v", res.Why, !(tc.hit > 0), tc.hit > 0)
			}
		})
	}
}

// A latency floor's wording names what it priced: with a cached prefix,
// the prefill of the uncached tokens only.
func TestFloorWhat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		family           string
		isl, osl, cached int
		want             string
	}{
		{"ttft", 3000, 150, 0, "the fastest prefill of one 3000-token prompt"},
		{"ttft", 3000, 150, 1200, "the fastest prefill of the 1800 uncached tokens of one 3000-token prompt (1200 from the prefix cache)"},
		{"e2el", 3000, 150, 0, "the prefill of one 3000-token prompt and 149 decode steps at the fastest"},
		{"e2el", 3000, 150, 1200, "the prefill of the 1800 uncached tokens of one 3000-token prompt (1200 from the prefix cache) and 149 decode steps at the fastest"},
		{"tpot", 3000, 150, 1200, "one decode step of a lone request at the fastest"},
	} {
		if got := floorWhat(tt.family, tt.isl, tt.osl, tt.cached); got != tt.want {
			t.Errorf("floorWhat(%s, %d, %d, %d) = %q, want %q", tt.family, tt.isl, tt.osl, tt.cached, got, tt.want)
		}
	}
}

// Between the latency floor and what queueing allows, the search names
// the best value any simulated deployment reached.
func TestNothingQualifiesNamesBestReached(t *testing.T) {
	t.Parallel()
	prof := h20Profile(t)
	for _, limit := range []string{"800ms", "600ms", "500ms", "400ms", "300ms", "250ms", "200ms"} {
		opts := h20Options(t, 3, "ttft_p99="+limit+",tpot_p99=200ms")
		opts.MaxGPUs = 16
		res, err := Run(context.Background(), prof, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Recommendations) > 0 || strings.Contains(res.Why, "even a lone request") {
			continue // met, or below the floor: try the next limit
		}
		want := "no deployment within 16 GPUs meets ttft_p99<=" + limit + " at rate 3 req/s: the best ttft_p99 reached is "
		if !strings.HasPrefix(res.Why, want) {
			t.Fatalf("Why = %q, want it to start %q", res.Why, want)
		}
		best := res.Best[0]
		if best.SLO != "ttft_p99" || best.Value <= best.Limit || best.By == "" {
			t.Errorf("best %+v: want a ttft_p99 above the limit, with its deployment", best)
		}
		if !strings.Contains(res.Why, best.By) {
			t.Errorf("Why %q does not name the deployment %q", res.Why, best.By)
		}
		return
	}
	t.Fatal("no limit between the floor and the queueing delay: the test checks nothing")
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	good := func() Options { return h20Options(t, 4, "ttft_p99=2000ms") }
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"unknown GPU", func(o *Options) { o.GPUs = []string{"H20", "Z9000"} }, `unknown GPU "Z9000"`},
		{"unknown model", func(o *Options) { o.Model = "GPT-9" }, `unknown model "GPT-9"`},
		{"max GPUs too small", func(o *Options) { o.GPUs, o.MaxGPUs = []string{"L40S"}, 1 }, "a limit of 1 GPUs is too small for Qwen3-32B"},
		{"does not fit at the TPs", func(o *Options) { o.GPUs, o.TPs = []string{"L4"}, []int{1, 2} }, "does not fit on L4"},
		// The memory screen sizes a worker as the stated settings do: 48 GB of an H20 holds no 64 GB Qwen3-32B.
		{"does not fit at a stated utilization", func(o *Options) {
			o.GPUs, o.TPs, o.Stated = []string{"H20"}, []int{1}, engine.Stated{GPUMemoryUtilization: 0.5}
		}, "does not fit on H20"},
		{"cost of unknown GPU", func(o *Options) { o.GPUCost = map[string]float64{"Z9000": 1} }, `unknown GPU "Z9000"`},
		{"negative cost", func(o *Options) { o.GPUCost = map[string]float64{"H20": -1} }, "must be a positive number"},
		{"no price for any GPU", func(o *Options) { o.GPUCost = map[string]float64{"H200": 3} }, "no GPU cost for any GPU searched"},
		{"no SLO", func(o *Options) { o.SLOs = nil }, "plan: an SLO is required"},
		{"no ISL", func(o *Options) { o.Workload.ISL = 0 }, "plan: ISL and OSL are required and must be positive"},
		{"burst", func(o *Options) { o.Workload.Load = model.Open(math.Inf(1), 1) }, "plan: rate inf is not a load to size for"},
		{"prefix hit rate 1", func(o *Options) { o.Workload.PrefixHitRate = 1 }, "plan: prefix-cache hit rate must be a fraction in [0, 1), got 1"},
		{"prefix hit rate NaN", func(o *Options) { o.Workload.PrefixHitRate = math.NaN() }, "got NaN"},
		{"unknown dataset", func(o *Options) { o.Workload.Dataset = "sonnet" }, `plan: unknown dataset "sonnet" (known: sharegpt)`},
		{"negative frontend", func(o *Options) { fe := -0.001; o.Frontend = &fe }, "plan: calibrate: a stated frontend latency out of range: 0 to 60 s, got -0.001"},
		{"frontend on a disaggregated search", func(o *Options) { fe := 0.005; o.Frontend, o.Disaggregated = &fe, true },
			"plan: a stated frontend latency applies to aggregated deployments, and the search is of disaggregated ones only"},
		{"zero rate", func(o *Options) { o.Workload.Load = model.Load{Kind: model.OpenLoop} }, "request_rate must be a positive number"},
		// Issue 15: caps with the exact text, rejected before any work.
		{"max GPUs absurd", func(o *Options) { o.MaxGPUs = 10000 },
			"plan: max GPUs 10000 is more than 512: the candidates grow with its square (512 GPUs over every catalog GPU take a minute or more and 2 to 4 GB)"},
		{"rate absurd", func(o *Options) { o.Workload.Load, o.Workload.NumPrompts = model.Open(1e9, 1), 0 },
			"plan: calibrate: rate 1e+09 req/s needs 2e+10 prompts for a steady state (20 × the load), more than the 10000000 requests one simulation may run; give a smaller load or a prompt count"},
		{"prompts absurd", func(o *Options) { o.Workload.NumPrompts = 20_000_000 },
			"plan: calibrate: 20000000 prompts per run is more than the 10000000 requests one simulation may run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := good()
			tc.edit(&o)
			_, err := Run(context.Background(), &fakeProfile{}, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "plan: ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line prefixed plan:", err)
			}
		})
	}
}

func TestUnpricedGPUsLeftOut(t *testing.T) {
	t.Parallel()
	opts := h20Options(t, 4, "ttft_p99=3000ms,tpot_p99=60ms")
	opts.GPUs = []string{"H20", "H200"}
	opts.GPUCost = map[string]float64{"h20": 1.9}
	res, err := Run(context.Background(), &fakeProfile{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GPUTypes) != 1 || res.GPUTypes[0] != "H20" || res.CostUnit != "$/h" {
		t.Errorf("searched %v in %s, want [H20] in $/h", res.GPUTypes, res.CostUnit)
	}
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "no GPU cost for H200") {
		t.Errorf("notes %q do not say H200 was left out", res.Notes)
	}
	for _, r := range res.Recommendations {
		if math.Abs(r.Cost-1.9*float64(r.GPUs)) > 1e-9 {
			t.Errorf("%s: cost %v for %d GPUs at 1.9/h", r.Notation, r.Cost, r.GPUs)
		}
	}
}

// The default GPU list holds only GPUs whose costs were fitted or derived.
func TestDefaultGPUsAreCalibrated(t *testing.T) {
	t.Parallel()
	prof := &fakeProfile{fitted: map[string]bool{"H20": true, "H200": true}}
	opts := h20Options(t, 4, "ttft_p99=3000ms,tpot_p99=60ms")
	opts.GPUs = nil
	res, err := Run(context.Background(), prof, opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.GPUTypes, ",") != "H20,H200" {
		t.Errorf("searched %v, want the calibrated H20 and H200", res.GPUTypes)
	}
}

// The same options give the same bytes, however many workers run (eight
// on a small machine leave candidates beyond the final cutoff in flight,
// whose runs the simulation count must not include).
func TestDeterministic(t *testing.T) {
	t.Parallel()
	var out []string
	for _, workers := range []int{1, 2, 8} {
		opts := h20Options(t, 4, "ttft_p99=2000ms,tpot_p99=50ms")
		opts.GPUs = []string{"H20", "H200"}
		opts.Workers = workers
		opts.NoSweep = false
		res, err := Run(context.Background(), &fakeProfile{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Search.FrontierRuns == 0 {
			t.Error("no frontier sweep: the test does not cover it")
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		c, err := json.Marshal(res.Cloud)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b)+string(c))
	}
	if out[0] != out[1] || out[0] != out[2] {
		for i := 1; i < 3; i++ {
			a, b := out[0], out[i]
			k := 0
			for k < len(a) && k < len(b) && a[k] == b[k] {
				k++
			}
			t.Errorf("results differ with the number of workers (1 vs run %d) at byte %d of %d/%d: %.300q vs %.300q", i, k, len(a), len(b), a[max(0, k-100):], b[max(0, k-100):])
		}
	}
}

func TestClosedLoop(t *testing.T) {
	t.Parallel()
	opts := h20Options(t, 1, "ttft_p99=3000ms,tpot_p99=60ms")
	opts.Workload.Load, opts.MaxGPUs = model.Closed(16), 16
	res, err := Run(context.Background(), &fakeProfile{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recommendations) == 0 {
		t.Fatalf("no recommendation: %s", res.Why)
	}
	for _, r := range res.Recommendations {
		if r.Headroom.MaxConcurrency < 16 || r.Headroom.RequestRate != 0 {
			t.Errorf("%s: headroom %+v, want a concurrency of at least 16", r.Notation, r.Headroom)
		}
	}
}

func TestProgressAndCancel(t *testing.T) {
	opts := h20Options(t, 4, "ttft_p99=2000ms,tpot_p99=50ms")
	var last Progress
	calls := 0
	opts.Progress = func(p Progress) { last, calls = p, calls+1 }
	if _, err := Run(context.Background(), &fakeProfile{}, opts); err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last.Done != last.Total {
		t.Errorf("%d progress calls, last %+v", calls, last)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, &fakeProfile{}, opts); err == nil {
		t.Error("a cancelled search returned no error")
	}
}

// Short runs only save time: with or without them the search recommends
// the same deployments with the same metrics.
func TestShortRunsChangeNoVerdict(t *testing.T) {
	t.Parallel()
	prof := h20Profile(t)
	for _, tc := range []struct {
		rate float64
		slo  string
	}{
		{3, "ttft_p99=600ms,tpot_p99=200ms"},
		{4, "ttft_p99=1500ms,tpot_p99=45ms"},
		{2, "ttft_mean=800ms,e2el_p95=9s"},
	} {
		var got [2]string
		var sims [2]int
		for i, noShort := range []bool{false, true} {
			opts := h20Options(t, tc.rate, tc.slo)
			opts.noShortRuns = noShort
			res, err := Run(context.Background(), prof, opts)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(res.Recommendations)
			if err != nil {
				t.Fatal(err)
			}
			got[i], sims[i] = string(b)+res.Why, res.Search.Simulations
		}
		if got[0] != got[1] {
			t.Errorf("rate %v, %s: short runs change the result:\nwith:    %.300s\nwithout: %.300s", tc.rate, tc.slo, got[0], got[1])
		}
		t.Logf("rate %v, %s: %d simulations with short runs, %d without", tc.rate, tc.slo, sims[0], sims[1])
	}
}

// A short open-loop run sees an empty system at first, so it rarely shows
// worse latencies than the full run: no candidate that passes in full may
// miss in a short run by more than the margin that rejects it. (Closed
// loops start with every client at once, which inflates a short run's
// tail; they get no short runs.)
func TestShortRunMarginIsSafe(t *testing.T) {
	t.Parallel()
	prof := h20Profile(t)
	for _, rate := range []float64{1, 8} {
		opts := h20Options(t, rate, "ttft_p99=1500ms,tpot_p99=45ms")
		opts.GPUs = []string{"H20", "H200"}
		opts = opts.withDefaults()
		s, err := newSearch(prof, opts)
		if err != nil {
			t.Fatal(err)
		}
		s.enumerate()
		worstPass, passes := 0.0, 0
		for i := 0; i < len(s.cands); i += 13 {
			c := s.cands[i]
			short, err := s.run(context.Background(), c, opts.workload(opts.Workload.Load, opts.screenPrompts(opts.Workload.Load)))
			if err != nil {
				t.Fatal(err)
			}
			d, err := c.deployment()
			if err != nil {
				t.Fatal(err)
			}
			long, err := s.steady(context.Background(), c, d, opts.Workload.Load)
			if err != nil {
				t.Fatal(err)
			}
			ms, _ := check(opts.SLOs, short.Metrics)
			if _, ok, _ := s.verdict(long); ok {
				passes++
				worstPass = math.Max(worstPass, worst(ms).Ratio())
			}
		}
		if worstPass > shortMargin {
			t.Errorf("rate %v: a candidate passing in full missed a short run by %.2f×, beyond the margin %v", rate, worstPass, shortMargin)
		}
		if passes == 0 {
			t.Errorf("rate %v: no sampled candidate passes: the test checks nothing", rate)
		}
		t.Logf("rate %v: %d sampled candidates pass in full; their worst short-run ratio is %.3f", rate, passes, worstPass)
	}
}

func TestSimulatorErrorStopsTheSearch(t *testing.T) {
	t.Parallel()
	opts := h20Options(t, 4, "ttft_p99=2000ms,tpot_p99=50ms")
	calls := 0
	var mu sync.Mutex
	opts.Simulate = func(ctx context.Context, cfg sim.Config) (*sim.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return nil, errors.New("sim: Config.Decode.Cost.StepTime returned NaN")
	}
	_, err := Run(context.Background(), &fakeProfile{}, opts)
	if err == nil || !strings.Contains(err.Error(), "plan: simulating ") || !strings.Contains(err.Error(), "returned NaN") {
		t.Fatalf("error = %v, want the simulator's, with the deployment named", err)
	}
	if calls > 2*runtime.GOMAXPROCS(0) {
		t.Errorf("%d simulations after the first error", calls)
	}
}

func TestCancelMidSearch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := h20Options(t, 4, "ttft_p99=2000ms,tpot_p99=50ms")
	calls := 0
	opts.Progress = func(Progress) {
		// The first call comes before any simulation, the second after one.
		if calls++; calls == 2 {
			cancel()
		}
	}
	if _, err := Run(ctx, &fakeProfile{}, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if calls < 2 {
		t.Errorf("%d progress calls: cancelled before any simulation", calls)
	}
}

// A GPU the profile cannot configure is skipped; when none can be, the
// error says why.
func TestConfigureFailures(t *testing.T) {
	t.Parallel()
	opts := h20Options(t, 4, "ttft_p99=3000ms,tpot_p99=60ms")
	opts.GPUs = []string{"H20", "H200"}
	res, err := Run(context.Background(), &fakeProfile{failGPUs: map[string]bool{"H200": true}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.GPUTypes, ",") != "H20" {
		t.Errorf("searched %v, want only H20", res.GPUTypes)
	}
	opts.GPUs = []string{"H200"}
	_, err = Run(context.Background(), &fakeProfile{failGPUs: map[string]bool{"H200": true}}, opts)
	if err == nil || !strings.Contains(err.Error(), "plan: no deployment of Qwen3-32B can be configured: calibrate: cannot configure H200") {
		t.Errorf("error = %v", err)
	}
	opts.GPUs, opts.Engine = []string{"H20"}, "sglang"
	_, err = Run(context.Background(), &fakeProfile{}, opts)
	if err == nil || !strings.Contains(err.Error(), `no engine matching "sglang"`) {
		t.Errorf("error = %v, want the unknown engine named", err)
	}
}

// The "done" check: the Llama-3.1-70B example's recommendations,
// re-simulated by predict in steady state for 20,000 measured requests
// with their chosen engine settings, meet both SLOs, with central costs
// and at the cost-band edge the verdicts used.
func TestLlama70BRecommendationsHoldWhenPredicted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a full plan and ten long predictions")
	}
	prof := h20Profile(t)
	opts := Options{Model: "Llama-3.1-70B", SLOs: mustSLOs(t, "ttft_p99=2s,tpot_p99=50ms"), GPUs: []string{"H100", "H200"}, NoMargin: true, NoSweep: true, Workload: workload.Workload{ISL: 1024, OSL: 256, Load: model.Open(30, 1), Seed: 1}}
	res, err := Run(context.Background(), prof, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recommendations) == 0 {
		t.Fatalf("no recommendation: %s", res.Why)
	}
	for _, rec := range res.Recommendations {
		for _, band := range []float64{0, opts.Band()} {
			preds, err := predict.Run(context.Background(), prof, predict.Options{
				Target: calibrate.Target{GPU: mustGPU(t, rec.GPU), LLM: mustLLM(t, opts.Model), Engine: engine.Parse(rec.Engine), Topology: rec.Topology, Band: band}, Loads: []model.Load{opts.Workload.Load}, Settings: rec.Settings, NoBand: true, Workload: workload.Workload{ISL: opts.Workload.ISL, OSL: opts.Workload.OSL, NumPrompts: 20_000, Seed: 7}})
			if err != nil {
				t.Fatal(err)
			}
			pt := preds[0].Points[0]
			if pt.Mode != sim.SteadyState || pt.NumPrompts < 20_000 || pt.Steady.Saturated {
				t.Errorf("%s band %.2f: mode %s, %d measured, saturated %v", rec.Notation, band, pt.Mode, pt.NumPrompts, pt.Steady.Saturated)
			}
			for _, slo := range opts.SLOs {
				v := pt.Metrics[slo.Metric()]
				t.Logf("%s on %s, band %+.2fσ: %s = %.1f ms (limit %.0f)", rec.Notation, rec.GPU, band, slo.Label(), v, slo.LimitMs)
				// Over the limit beyond the run's own statistical uncertainty
				// (the plan's verdict, from other random draws, is decided
				// within its uncertainty too): a p99 0.5% over at the SLO
				// boundary is noise, not a missed SLO.
				rel := 0.0
				if pt.Steady != nil {
					rel = pt.Steady.RelError[slo.Metric()]
				}
				if v*(1-rel) > slo.LimitMs {
					t.Errorf("%s on %s at cost band %+.2fσ: predict gives %s = %.1f ms (±%.1f%%) over its %s", rec.Notation, rec.GPU, band, slo.Label(), v, 100*rel, slo)
				}
			}
		}
	}
}

// An SGLang search tries each TP worker with its attention split by TP and
// with one data-parallel attention group per rank, and says which it
// recommends; another engine, or NoDPAttentionSearch, tries only the
// calibrated default.
func TestDPAttentionSearch(t *testing.T) {
	t.Parallel()
	prof := h20Profile(t)
	opts := Options{Model: "DeepSeek-R1", GPUs: []string{"H200"}, Engine: "sglang", SLOs: mustSLOs(t, "tpot_p99=1000ms"), MaxGPUs: 16, TPs: []int{8}, TopK: 4, Aggregated: true, NoSweep: true, NoMargin: true, // an SLO all four meet
		Steady: sim.SteadyOptions{MaxPrompts: 4000}, Workload: workload.Workload{ISL: 3200, OSL: 800, Load: model.Closed(128), Seed: 1, NumPrompts: 1000}}
	res, err := Run(context.Background(), prof, opts)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range res.Recommendations {
		seen[r.Shape()] = true
		var settings []int
		for _, s := range r.Settings {
			settings = append(settings, s.DPAttention)
		}
		if want := []int{r.DPAttention}; !slices.Equal(settings, want) {
			t.Errorf("%s: engine settings' DP attention %v, want %v", r.Label(), settings, want)
		}
	}
	for _, want := range []string{"1xTP8", "1xTP8 DP-attention 8", "2xTP8", "2xTP8 DP-attention 8"} {
		if !seen[want] {
			t.Errorf("recommendations %v lack %s", seen, want)
		}
	}
	if res.Search.Candidates != 4 {
		t.Errorf("%d candidates, want 4: two worker counts, two attention layouts", res.Search.Candidates)
	}

	for _, o := range []Options{{Engine: "vllm"}, {NoDPAttentionSearch: true}} {
		opts2 := opts
		opts2.NoDPAttentionSearch = o.NoDPAttentionSearch
		if o.Engine != "" {
			opts2.Engine = o.Engine
		}
		res, err := Run(context.Background(), prof, opts2)
		if err != nil {
			t.Fatal(err)
		}
		if res.Search.Candidates != 2 {
			t.Errorf("engine %s, NoDPAttentionSearch %v: %d candidates, want 2", opts2.Engine, opts2.NoDPAttentionSearch, res.Search.Candidates)
		}
	}
}

// A data-parallel attention layout that cannot be configured (on 8× H20
// DeepSeek-R1's weights fit only with the attention split by TP) is left
// out with a note saying why, and the TP layout is still searched.
func TestDPAttentionFailureNoted(t *testing.T) {
	t.Parallel()
	opts := Options{Model: "DeepSeek-R1", GPUs: []string{"H20"}, Engine: "sglang", SLOs: mustSLOs(t, "tpot_p99=1000ms"), MaxGPUs: 8, TPs: []int{8}, TopK: 1, Aggregated: true, NoSweep: true, NoMargin: true, Steady: sim.SteadyOptions{MaxPrompts: 2000}, Workload: workload.Workload{ISL: 3200, OSL: 800, Load: model.Closed(16), Seed: 1, NumPrompts: 500}}
	res, err := Run(context.Background(), h20Profile(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Search.Candidates != 1 || !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.HasPrefix(n, "DP attention 8 not searched: ") }) {
		t.Errorf("%d candidates, notes %q; want the TP layout alone and a note on DP attention 8", res.Search.Candidates, res.Notes)
	}
}

// A stated frontend prices the aggregated candidates, and each aggregated
// recommendation names it as a central-cost prediction would (its serial
// work is the calibrated one, not the pessimistic band's).
func TestStatedFrontendRecommendation(t *testing.T) {
	t.Parallel()
	prof := h20Profile(t)
	opts := h20Options(t, 2, "ttft_p99=3000ms")
	opts.Workload.ISL, opts.Workload.OSL, opts.Aggregated, opts.TopK = 2500, 100, true, 2
	fe := 0.050
	opts.Frontend = &fe
	res, err := Run(context.Background(), prof, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.FrontendMS == nil || *res.FrontendMS != 50 {
		t.Errorf("FrontendMS %v, want 50", res.FrontendMS)
	}
	if len(res.Recommendations) == 0 {
		t.Fatalf("no recommendation: %s", res.Why)
	}
	for _, r := range res.Recommendations {
		central, err := prof.Configure(calibrate.Target{GPU: mustGPU(t, r.GPU), LLM: mustLLM(t, res.Model), Engine: engine.Parse(r.Engine), Topology: r.Topology, Frontend: &fe})
		if err != nil {
			t.Fatal(err)
		}
		if r.Frontend == "" || r.Frontend != central.FrontendFrom {
			t.Errorf("%s: frontend %q, want the central deployment's %q", r.Notation, r.Frontend, central.FrontendFrom)
		}
	}
}

// A Dynamo deployment's prefill workers run without chunked prefill, so
// the settings search never tries a prefill token budget below
// max-model-len, which vLLM would refuse to start with.
func TestDynamoPrefillBudgetNotBelowMaxModelLen(t *testing.T) {
	t.Parallel()
	opts := h20Options(t, 4, "ttft_p99=2000ms,tpot_p99=50ms").withDefaults()
	s, err := newSearch(h20Profile(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	s.enumerate()
	seen := 0
	for _, tm := range s.tmpls {
		if !tm.disagg || tm.dep.Engine.Family != engine.Dynamo {
			continue
		}
		seen++
		for _, v := range variants(tm, opts.workload(opts.Workload.Load, 1)) {
			if v.a.budget > 0 && v.a.budget < tm.dep.MaxModelLen {
				t.Errorf("%s: variant prefill budget %d below max-model-len %d", tm.shape(), v.a.budget, tm.dep.MaxModelLen)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no Dynamo template searched")
	}
}

// A stated max-num-seqs or max-num-batched-tokens is the user's: the
// settings search varies only what was not stated.
func TestStatedSettingsNotSearched(t *testing.T) {
	t.Parallel()
	count := func(st engine.Stated) (seqs, budgets int) {
		opts := h20Options(t, 4, "ttft_p99=2000ms,tpot_p99=50ms").withDefaults()
		opts.Stated = st
		s, err := newSearch(h20Profile(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		s.enumerate()
		for _, tm := range s.tmpls {
			for _, v := range variants(tm, opts.workload(opts.Workload.Load, 1)) {
				if v.a.seqs > 0 || v.b.seqs > 0 {
					seqs++
				}
				if v.a.budget > 0 || v.b.budget > 0 {
					budgets++
				}
			}
		}
		return seqs, budgets
	}
	if seqs, budgets := count(engine.Stated{}); seqs == 0 || budgets == 0 {
		t.Fatalf("unstated: %d sequence and %d budget variants, want both searched", seqs, budgets)
	}
	if seqs, budgets := count(engine.Stated{MaxNumSeqs: 128}); seqs != 0 || budgets == 0 {
		t.Errorf("max-num-seqs stated: %d sequence and %d budget variants, want budgets only", seqs, budgets)
	}
	if seqs, budgets := count(engine.Stated{MaxNumBatchedTokens: 4096}); seqs == 0 || budgets != 0 {
		t.Errorf("max-num-batched-tokens stated: %d sequence and %d budget variants, want sequences only", seqs, budgets)
	}
}

// A stated KV link within a server caps disaggregated candidates at one
// server's GPUs and says so; every recommendation is priced over it.
func TestKVLinkWithinServerCapsDisaggregated(t *testing.T) {
	t.Parallel()
	prof := h20Profile(t)
	opts := h20Options(t, 1, "ttft_p99=5000ms,tpot_p99=80ms")
	opts.Disaggregated, opts.KVLink = true, "NVLink4"
	res, err := Run(context.Background(), prof, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recommendations) == 0 || res.KVLink != "NVLink4" || !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "at most 8 GPUs") }) {
		t.Fatalf("%d recommendations, KV link %q, notes %v", len(res.Recommendations), res.KVLink, res.Notes)
	}
	// At 4 req/s an H20 deployment meeting these SLOs takes more than one
	// server: none is recommended over the stated link.
	opts.Workload.Load = model.Open(4, 1)
	opts.SLOs = mustSLOs(t, "ttft_p99=3000ms,tpot_p99=60ms")
	if res, err = Run(context.Background(), prof, opts); err != nil {
		t.Fatal(err)
	}
	for _, rec := range res.Recommendations {
		if rec.Topology.GPUs() > 8 {
			t.Errorf("%s: %d GPUs over a link within one server", rec.Notation, rec.Topology.GPUs())
		}
	}
}
