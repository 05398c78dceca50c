package predict

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// These tests check predictions on deployments, loads and shapes the
// profile was never fitted on against physics and against the measured
// seed-004 rows of the configuration left out of the fit.

const qwen32 = "Qwen/Qwen3-32B"

func topo(t testing.TB, s string) model.Topology {
	t.Helper()
	tp, err := model.ParseTopology(s)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// target is a Qwen3-32B deployment on gpu; engine is a prefix such as "dynamo" or "vllm-0.9".
func target(t testing.TB, gpu, label, topology string) calibrate.Target {
	return calibrate.Target{GPU: mustGPU(t, gpu), LLM: mustLLM(t, qwen32), Engine: engine.Parse(label), Topology: topo(t, topology)}
}

// predictAt predicts one shape at the given loads with prompts requests per
// point (steady state: measured requests of the first run).
func predictAt(t testing.TB, prof *calibrate.Profile, tgt calibrate.Target, sh workload.Workload, prompts int, band bool, loads ...model.Load) Prediction {
	t.Helper()
	return predictIn(t, prof, sim.SteadyState, tgt, sh, prompts, band, loads...)
}

// replayAt predicts as a benchmark of prompts requests per point measured:
// the mode to compare with measurements.
func replayAt(t testing.TB, prof *calibrate.Profile, tgt calibrate.Target, sh workload.Workload, prompts int, loads ...model.Load) Prediction {
	t.Helper()
	return predictIn(t, prof, sim.BenchmarkReplay, tgt, sh, prompts, false, loads...)
}

func predictIn(t testing.TB, prof *calibrate.Profile, mode sim.Mode, tgt calibrate.Target, sh workload.Workload, prompts int, band bool, loads ...model.Load) Prediction {
	t.Helper()
	preds, err := Run(context.Background(), prof, Options{Target: tgt, Loads: loads, NoBand: !band, Mode: mode, Workload: workload.Workload{ISL: sh.ISL, OSL: sh.OSL, NumPrompts: prompts, Seed: 3}})
	if err != nil {
		t.Fatalf("%s %s: %v", tgt.GPU.Name, tgt.Topology, err)
	}
	if len(preds) != 1 || len(preds[0].Points) != len(loads) {
		t.Fatalf("%s %s: got %d predictions", tgt.GPU.Name, tgt.Topology, len(preds))
	}
	return preds[0]
}

func metric(p Prediction, i int, name string) float64 { return p.Points[i].Metrics[name] }

// prefillTime is one worker's time for a single prompt of n tokens (chunked
// as the engine's token budget requires) in the deployment's prefill pool.
func prefillTime(t testing.TB, prof *calibrate.Profile, gpu string, tp, n int) float64 {
	t.Helper()
	d, err := prof.Configure(target(t, gpu, "dynamo", fmt.Sprintf("prefill 1xTP%d + decode 1xTP4", tp)))
	if err != nil {
		t.Fatal(err)
	}
	budget := d.Config.Prefill.MaxBatchedTokens
	if budget <= 0 {
		budget = n
	}
	total := 0.0
	for done := 0; done < n; done += budget {
		c := min(budget, n-done)
		total += d.Config.Prefill.Cost.StepTime(model.Step{PrefillTokens: c, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(done, c)})
	}
	return total
}

func TestMoreWorkersNeverLowerSaturatedThroughput(t *testing.T) {
	prof := defaultProfile(t)
	tests := []struct {
		name, engine, from, to string
		shape                  workload.Workload
		// gain bounds the ratio of saturated request throughputs: more
		// workers of the bottleneck pool help, at most in proportion.
		minGain, maxGain float64
	}{
		{"prefill 3→6 workers", "dynamo", "prefill 3xTP4 + decode 1xTP4", "prefill 6xTP4 + decode 1xTP4", workload.Workload{ISL: 3000, OSL: 150}, 1.3, 2.05},
		{"decode 1→2 workers", "dynamo", "prefill 6xTP4 + decode 1xTP4", "prefill 6xTP4 + decode 2xTP4", workload.Workload{ISL: 500, OSL: 1000}, 1.3, 2.05},
		{"replicas 2→4", "vllm-0.9", "2xTP4", "4xTP4", workload.Workload{ISL: 1000, OSL: 300}, 1.5, 2.05},
		// Adding workers to a pool that is not the bottleneck must not hurt.
		{"decode 1→2 workers, prefill-bound", "dynamo", "prefill 3xTP4 + decode 1xTP4", "prefill 3xTP4 + decode 2xTP4", workload.Workload{ISL: 3000, OSL: 150}, 0.98, 1.3},
	}
	// 1024 clients saturate even four replicas (256 sequences each at most).
	load := model.Closed(1024)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := predictAt(t, prof, target(t, "H20", tt.engine, tt.from), tt.shape, 3072, false, load)
			b := predictAt(t, prof, target(t, "H20", tt.engine, tt.to), tt.shape, 3072, false, load)
			xa, xb := metric(a, 0, model.RequestThroughput), metric(b, 0, model.RequestThroughput)
			t.Logf("%s → %s at %s, ISL %d OSL %d: %.3f → %.3f req/s (×%.2f)", tt.from, tt.to, load, tt.shape.ISL, tt.shape.OSL, xa, xb, xb/xa)
			if g := xb / xa; g < tt.minGain || g > tt.maxGain {
				t.Errorf("throughput ratio %.3f, want within [%.2f, %.2f]", g, tt.minGain, tt.maxGain)
			}
		})
	}
}

func TestPrefillGetsFasterWithTP(t *testing.T) {
	prof := defaultProfile(t)
	// From a few hundred tokens up, dense compute dominates and more GPUs
	// prefill faster. A prompt of a few tokens need not: each TP degree
	// adds two all-reduces per layer at the link's eager latency, about
	// what halving the weight read saves.
	for _, gpu := range []string{"H20", "H100-SXM", "H200"} {
		for _, n := range []int{500, 2500, 4096, 8000} {
			prev := math.Inf(1)
			for _, tp := range []int{1, 2, 4, 8} {
				if gpu == "H100-SXM" && tp == 1 && n > 16000 {
					continue
				}
				cur := prefillTime(t, prof, gpu, tp, n)
				if !(cur < prev) {
					t.Errorf("%s: a %d-token prefill takes %.1f ms at TP%d, not less than %.1f ms at TP%d", gpu, n, 1e3*cur, tp, 1e3*prev, tp/2)
				}
				prev = cur
			}
		}
	}
	// End to end, a lone request's TTFT at TP2 (derived) lies between TP1 and TP4 (fitted).
	sh := workload.Workload{ISL: 2500, OSL: 100}
	var ttft []float64
	for _, tp := range []int{1, 2, 4} {
		p := predictAt(t, prof, target(t, "H20", "dynamo", fmt.Sprintf("prefill 1xTP%d + decode 1xTP4", tp)), sh, 8, false, model.Closed(1))
		ttft = append(ttft, metric(p, 0, model.MeanTTFT))
	}
	t.Logf("H20 lone-request TTFT at ISL 2500, prefill TP1/TP2/TP4: %.0f / %.0f / %.0f ms", ttft[0], ttft[1], ttft[2])
	if !(ttft[0] > ttft[1] && ttft[1] > ttft[2]) {
		t.Errorf("TTFT not decreasing with prefill TP: %.0f, %.0f, %.0f ms", ttft[0], ttft[1], ttft[2])
	}
	// Dense compute dominates a long prompt, so TP2 sits near the middle: TP1/TP2 and TP2/TP4 both between 1.3 and 2.
	for i, r := range []float64{ttft[0] / ttft[1], ttft[1] / ttft[2]} {
		if r < 1.3 || r > 2 {
			t.Errorf("TTFT ratio %d (TP%d/TP%d) = %.2f, want within [1.3, 2]", i, 1<<i, 2<<i, r)
		}
	}
}

// heldOutProfile fits the seed-004 Dynamo records without those whose prefill pool has TP heldTP.
// Other groups are fitted independently and do not affect the Dynamo group's coefficients.
func heldOutProfile(t testing.TB, heldTP int) (*calibrate.Profile, []results.Record) {
	t.Helper()
	heldOut.Lock()
	defer heldOut.Unlock()
	if f, ok := heldOut.fits[heldTP]; ok {
		return f.prof, f.test
	}
	all, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	var train, test []results.Record
	for _, r := range all {
		if r.System.GPU != "H20" || !strings.HasPrefix(r.System.Engine, "dynamo") {
			continue
		}
		if r.System.Topology.Prefill.TP == heldTP {
			test = append(test, r)
		} else {
			train = append(train, r)
		}
	}
	if len(train) == 0 || len(test) == 0 {
		t.Fatalf("holding out prefill TP%d leaves %d training and %d test records", heldTP, len(train), len(test))
	}
	prof, _, err := calibrate.Fit(context.Background(), train, calibrate.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	heldOut.fits[heldTP] = heldOutFit{prof, test}
	return prof, test
}

type heldOutFit struct {
	prof *calibrate.Profile
	test []results.Record
}

// heldOut caches the held-out fits the tests share (Fit is deterministic).
var heldOut = struct {
	sync.Mutex
	fits map[int]heldOutFit
}{fits: map[int]heldOutFit{}}

func TestDerivedTPReproducesMeasuredLowLoadTTFT(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Dynamo group twice")
	}
	tests := []struct {
		heldTP   int
		topology string
		measured float64 // seed 004, ISL:OSL 2500:100, concurrency 1, mean TTFT in ms
	}{
		{1, "prefill 12xTP1 + decode 1xTP4", 1431.5},
		{4, "prefill 3xTP4 + decode 1xTP4", 441.94},
	}
	for _, tt := range tests {
		t.Run(tt.topology, func(t *testing.T) {
			prof, _ := heldOutProfile(t, tt.heldTP)
			p := replayAt(t, prof, target(t, "H20", "dynamo", tt.topology), workload.Workload{ISL: 2500, OSL: 100}, 16, model.Closed(1))
			if p.Derived[0].Source != calibrate.SourceDerived {
				t.Fatalf("prefill TP%d costs are %q (%s), want derived from the other TP", tt.heldTP, p.Derived[0].Source, p.Derived[0].From)
			}
			got := metric(p, 0, model.MeanTTFT)
			t.Logf("prefill TP%d held out: TTFT %.0f ms predicted, %.0f ms measured (%+.1f%%), costs %s", tt.heldTP, got, tt.measured, 100*(got/tt.measured-1), p.Derived[0].From)
			if math.Abs(got/tt.measured-1) > 0.15 {
				t.Errorf("derived TP%d TTFT %.0f ms is more than 15%% from the measured %.0f ms", tt.heldTP, got, tt.measured)
			}
		})
	}
}

func TestOtherGPUsScaleWithTheirRooflines(t *testing.T) {
	prof := defaultProfile(t)
	h20 := mustGPU(t, "H20")
	stepOf := func(gpu string) (pre, dec model.StepCost) {
		d, err := prof.Configure(target(t, gpu, "dynamo", "prefill 1xTP4 + decode 1xTP4"))
		if err != nil {
			t.Fatal(err)
		}
		return d.Config.Prefill.Cost.(model.StepCost), d.Config.Decode.Cost.(model.StepCost)
	}
	p20, d20 := stepOf("H20")
	pH100, dH100 := stepOf("H100-SXM")
	for _, name := range []string{"H100-SXM", "H200"} {
		g, err := model.LookupGPU(name)
		if err != nil {
			t.Fatal(err)
		}
		pre, dec := stepOf(name)
		compute := g.TFLOPS / h20.TFLOPS
		// Prefill: the marginal cost of prompt tokens is dense compute, so it
		// shrinks nearly by the compute ratio (TP all-reduce traffic, on the
		// same NVLink, does not) and never by more. H20's own fit and the
		// pooled price of a GPU without data may differ in efficiency, so
		// this holds within a wider band than between two pooled GPUs.
		marginal := func(c model.StepCost) float64 {
			at := func(n int) float64 {
				return c.StepTime(model.Step{PrefillTokens: n, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(0, n)})
			}
			return at(4096) - at(2048)
		}
		speed := marginal(p20) / marginal(pre)
		t.Logf("%s vs H20 at TP4: prefill marginal speed-up ×%.2f (compute roofline ×%.2f)", name, speed, compute)
		if speed < 0.5*compute || speed > compute*1.5 {
			t.Errorf("%s prefill marginal speed-up ×%.2f, want within [0.5, 1.5] × the compute ratio %.2f", name, speed, compute)
		}
		for _, n := range []int{16, 512, 2500, 4096} {
			s := model.Step{PrefillTokens: n, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(0, n)}
			if a, b := p20.StepTime(s), pre.StepTime(s); b > a {
				t.Errorf("%s prefills %d tokens in %.1f ms, slower than H20's %.1f ms", name, n, 1e3*b, 1e3*a)
			}
		}
		big := model.Step{DecodeSeqs: 128, DecodeKV: 128 * 2000}
		if a, b := d20.StepTime(big), dec.StepTime(big); b >= a {
			t.Errorf("%s decodes a batch of 128 in %.1f ms, not faster than H20's %.1f ms", name, 1e3*b, 1e3*a)
		}
	}
	// Two GPUs without data are priced by the same pooled costs carried to
	// each by its measured matmul and bandwidth shares, so between them
	// every term scales by exactly its achievable roofline: decode KV reads
	// and a lone sequence's weight streaming by the measured bandwidth
	// ratio, prompt compute by the measured FLOP ratio.
	h100, err := model.LookupGPU("H100-SXM")
	if err != nil {
		t.Fatal(err)
	}
	h200, err := model.LookupGPU("H200")
	if err != nil {
		t.Fatal(err)
	}
	pH200, dH200 := stepOf("H200")
	shareRatio := h200.AchievableMemoryShare() / h100.AchievableMemoryShare()
	for _, pair := range [][2]model.Coeffs{{dH100.Coeffs, dH200.Coeffs}, {pH100.Coeffs, pH200.Coeffs}} {
		a, b := pair[0], pair[1]
		b.Weight, b.KV = b.Weight*shareRatio, b.KV*shareRatio
		if math.Abs(a.Weight/b.Weight-1) > 1e-9 || math.Abs(a.KV/b.KV-1) > 1e-9 {
			t.Errorf("H100-SXM and H200 weight/KV reads not carried by their bandwidth shares: %+v vs %+v", pair[0], pair[1])
		}
		b.Weight, b.KV = a.Weight, a.KV
		if a != b {
			t.Fatalf("H100-SXM and H200 priced differently beyond their bandwidth shares: %+v vs %+v", pair[0], pair[1])
		}
	}
	bandwidth := h200.MemoryTBps * h200.AchievableMemoryShare() / (h100.MemoryTBps * h100.AchievableMemoryShare())
	kv100 := dH100.Coeffs.KV * dH100.Roofline.KVRead
	kv200 := dH200.Coeffs.KV * dH200.Roofline.KVRead
	if r := kv100 / kv200; math.Abs(r/bandwidth-1) > 1e-9 {
		t.Errorf("H200 decode per-KV-token speed-up over H100-SXM ×%.3f, want the measured bandwidth ratio ×%.3f", r, bandwidth)
	}
	small := model.Step{DecodeSeqs: 1, DecodeKV: 1000}
	// Memory work: the step less its CPU costs, its all-reduces (both GPUs
	// have NVLink 4, so those are the same) and its kernels' measured
	// latency (the same on every GPU).
	memoryWork := func(c model.StepCost) float64 {
		return c.StepTime(small) - c.Coeffs.Overhead - c.Coeffs.PerSeq - c.Coeffs.Comm*(c.Roofline.CommToken+c.Roofline.CommStepGraph) - c.KernelFloor()
	}
	w100, w200 := memoryWork(dH100), memoryWork(dH200)
	t.Logf("H200 vs H100-SXM at TP4: batch-1 decode memory work ×%.2f (bandwidth roofline ×%.2f)", w100/w200, bandwidth)
	if r := w100 / w200; r < 0.9*bandwidth || r > 1.1*bandwidth {
		t.Errorf("H200 batch-1 decode work speed-up over H100-SXM ×%.2f, want near the bandwidth ratio ×%.2f", r, bandwidth)
	}
	if a, b := dH100.StepTime(small), dH200.StepTime(small); b > a {
		t.Errorf("H200 has more bandwidth than H100-SXM yet decodes one sequence in %.2f ms > %.2f ms", 1e3*b, 1e3*a)
	}
	// End to end on an unseen P/D split: the faster GPUs serve more and answer sooner.
	sh := workload.Workload{ISL: 3000, OSL: 150}
	loads := []model.Load{model.Closed(1), model.Closed(128)}
	base := predictAt(t, prof, target(t, "H20", "dynamo", "prefill 4xTP2 + decode 2xTP2"), sh, 600, false, loads...)
	for _, name := range []string{"H100-SXM", "H200"} {
		p := predictAt(t, prof, target(t, name, "dynamo", "prefill 4xTP2 + decode 2xTP2"), sh, 600, false, loads...)
		t.Logf("%s / H20, 4P(TP2) 2D(TP2), ISL 3000 OSL 150: TTFT c=1 %.0f/%.0f ms, throughput c=128 %.2f/%.2f req/s",
			name, metric(p, 0, model.MeanTTFT), metric(base, 0, model.MeanTTFT), metric(p, 1, model.RequestThroughput), metric(base, 1, model.RequestThroughput))
		if metric(p, 0, model.MeanTTFT) >= metric(base, 0, model.MeanTTFT) {
			t.Errorf("%s lone-request TTFT %.0f ms is not below H20's %.0f ms", name, metric(p, 0, model.MeanTTFT), metric(base, 0, model.MeanTTFT))
		}
		if metric(p, 1, model.RequestThroughput) <= metric(base, 1, model.RequestThroughput) {
			t.Errorf("%s saturated throughput %.2f req/s is not above H20's %.2f", name, metric(p, 1, model.RequestThroughput), metric(base, 1, model.RequestThroughput))
		}
	}
}

func TestTTFTGrowsWithISLThroughAttentionOnly(t *testing.T) {
	prof := defaultProfile(t)
	tgt := target(t, "H20", "dynamo", "prefill 3xTP4 + decode 1xTP4")
	short := predictAt(t, prof, tgt, workload.Workload{ISL: 2500, OSL: 100}, 8, false, model.Closed(1))
	long := predictAt(t, prof, tgt, workload.Workload{ISL: 8000, OSL: 500}, 8, false, model.Closed(1))
	r := metric(long, 0, model.MeanTTFT) / metric(short, 0, model.MeanTTFT)
	t.Logf("TP4 lone-request TTFT: ISL 8000 %.0f ms, ISL 2500 %.0f ms (×%.2f; tokens ×3.2)", metric(long, 0, model.MeanTTFT), metric(short, 0, model.MeanTTFT), r)
	if r >= 3.5 || r < 2.5 {
		t.Errorf("TTFT(8000)/TTFT(2500) = %.2f, want within [2.5, 3.5)", r)
	}
	// The prefill step itself: without the attention term it would be affine in
	// the prompt length (fixed costs per chunk aside), so any excess over
	// linear is attention and at most its share.
	d, err := prof.Configure(tgt)
	if err != nil {
		t.Fatal(err)
	}
	c := d.Config.Prefill.Cost.(model.StepCost)
	noAttn := c
	noAttn.Coeffs.Attn = 0
	one := func(c model.StepCost, n int) float64 {
		return c.StepTime(model.Step{PrefillTokens: n, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(0, n)})
	}
	// Per-token cost without attention does not depend on length once the
	// step's GEMMs are compute-bound (an empty step streams the weights
	// instead); the smooth roofline's memory share adds under 0.1% at
	// these sizes on H20 (its ridge is at 37 tokens).
	a, b := one(noAttn, 6000)-one(noAttn, 4000), one(noAttn, 4000)-one(noAttn, 2000)
	if math.Abs(a/b-1) > 1e-3 {
		t.Errorf("prefill without attention is not affine: %.4g s for the 2nd 2000 tokens, %.4g s for the 1st", a, b)
	}
	// With attention the second 2000 tokens cost more, by at most 30% at this size.
	a, b = one(c, 4000)-one(c, 2000), one(c, 2000)-one(c, 0)
	if !(a > b && a < 1.3*b) {
		t.Errorf("the 2nd 2000 prompt tokens cost %.1f ms, the 1st %.1f ms: want more, by under 30%%", 1e3*a, 1e3*b)
	}
	if w := long.Warnings; len(w) == 0 || !strings.Contains(strings.Join(w, " "), "max-model-len") {
		t.Errorf("ISL 8000 on an engine run with max-model-len 4096 gave no warning: %q", w)
	}
}

func TestTPOTGrowsWithContext(t *testing.T) {
	prof := defaultProfile(t)
	tgt := target(t, "H20", "dynamo", "prefill 6xTP4 + decode 1xTP4")
	const c = 32
	var tpot []float64
	for _, isl := range []int{200, 1000, 3000} {
		p := predictAt(t, prof, tgt, workload.Workload{ISL: isl, OSL: 500}, 4*c, false, model.Closed(c))
		tpot = append(tpot, metric(p, 0, model.MeanTPOT))
	}
	t.Logf("TPOT at c=%d, OSL 500, ISL 200/1000/3000: %.2f / %.2f / %.2f ms", c, tpot[0], tpot[1], tpot[2])
	if !(tpot[0] < tpot[1] && tpot[1] < tpot[2]) {
		t.Errorf("TPOT does not grow with context: %.2f, %.2f, %.2f ms", tpot[0], tpot[1], tpot[2])
	}
	// The growth is the KV read of the extra context: c sequences × 2800 tokens.
	d, err := prof.Configure(tgt)
	if err != nil {
		t.Fatal(err)
	}
	_, perKV := d.Config.Decode.Cost.DecodeAffine(c)
	want := 1e3 * perKV * c * 2800
	if got := tpot[2] - tpot[0]; got < 0.5*want || got > 2*want {
		t.Errorf("TPOT grew %.2f ms from ISL 200 to 3000, want about %.2f ms (the extra KV read)", got, want)
	}
	// A long output decodes at a growing context too: ISL 200 / OSL 2000 averages
	// more context per step than ISL 200 / OSL 500.
	p := predictAt(t, prof, tgt, workload.Workload{ISL: 200, OSL: 2000}, 2*c, false, model.Closed(c))
	if got := metric(p, 0, model.MeanTPOT); got <= tpot[0] {
		t.Errorf("TPOT at OSL 2000 (%.2f ms) not above OSL 500 (%.2f ms)", got, tpot[0])
	}
}

func TestOpenLoop(t *testing.T) {
	prof := defaultProfile(t)
	tgt := target(t, "H20", "dynamo", "prefill 3xTP4 + decode 1xTP4")
	sh := workload.Workload{ISL: 2500, OSL: 100}
	// Capacity is about 7.5 req/s (prefill-bound); at 2 req/s every request is
	// served as it comes, so throughput is the offered rate, up to the
	// randomness of the arrivals (Poisson: ±1/√N) and the last request's E2E.
	for _, tt := range []struct {
		burstiness float64
		prompts    int
		tol        float64
	}{
		{100, 300, 0.03}, // nearly regular gaps (CV 0.1)
		{1, 2000, 0.07},  // Poisson: 3/√2000 ≈ 6.7%
	} {
		below := predictAt(t, prof, tgt, sh, tt.prompts, false, model.Open(2, tt.burstiness))
		x := metric(below, 0, model.RequestThroughput)
		t.Logf("open loop at 2 req/s, burstiness %g, %d prompts: %.3f req/s, mean TTFT %.0f ms", tt.burstiness, tt.prompts, x, metric(below, 0, model.MeanTTFT))
		if math.Abs(x/2-1) > tt.tol {
			t.Errorf("below capacity (burstiness %g), throughput %.3f req/s is not within %.0f%% of the 2 req/s offered", tt.burstiness, x, 100*tt.tol)
		}
		if ttft := metric(below, 0, model.MeanTTFT); ttft > 2*472 {
			t.Errorf("below capacity (burstiness %g), mean TTFT %.0f ms is far above a lone request's", tt.burstiness, ttft)
		}
	}
	// Above capacity the queue grows with every request: the more prompts, the longer the mean wait.
	var ttft, tput []float64
	for _, n := range []int{200, 800} {
		p := predictAt(t, prof, tgt, sh, n, false, model.Open(20, 1))
		ttft = append(ttft, metric(p, 0, model.MeanTTFT))
		tput = append(tput, metric(p, 0, model.RequestThroughput))
	}
	t.Logf("open loop at 20 req/s: 200 prompts TTFT %.0f ms (%.2f req/s), 800 prompts TTFT %.0f ms (%.2f req/s)", ttft[0], tput[0], ttft[1], tput[1])
	if ttft[1] < 3*ttft[0] {
		t.Errorf("overloaded open loop: mean TTFT %.0f ms with 800 prompts, want ≥ 3× the %.0f ms with 200", ttft[1], ttft[0])
	}
	if tput[1] > 0.6*20 || math.Abs(tput[1]/tput[0]-1) > 0.1 {
		t.Errorf("overloaded open loop served %.2f and %.2f req/s; want the same capacity, well below the 20 offered", tput[0], tput[1])
	}
}

func TestRequestsBeyondKVOrContextFailClearly(t *testing.T) {
	prof := defaultProfile(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// One H100-SXM GPU (81559 MiB) holds about 37k tokens of Qwen3-32B KV
	// next to its weights and the peak of vLLM's profiling run (a forward
	// pass over its 8192-token budget), a Dynamo prefill worker (4096
	// tokens) about 40k.
	tgt := target(t, "H100-SXM", "vllm", "4xTP1")
	_, err := Run(ctx, prof, Options{Target: tgt, Loads: []model.Load{model.Closed(1)}, NoBand: true, Workload: workload.Workload{ISL: 40000, OSL: 100, NumPrompts: 4}})
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a 40k-token request on one H100 worker: err = %v, want a clear error", err)
	}
	if !strings.Contains(err.Error(), "KV") && !strings.Contains(err.Error(), "cache") {
		t.Errorf("error does not say the KV cache is too small: %v", err)
	}
	t.Logf("40k tokens on 1×H100 TP1: %v", err)
	// The same in a disaggregated prefill pool.
	tgt = target(t, "H100-SXM", "dynamo", "prefill 2xTP1 + decode 1xTP4")
	_, err = Run(ctx, prof, Options{Target: tgt, Loads: []model.Load{model.Closed(2)}, NoBand: true, Workload: workload.Workload{ISL: 45000, OSL: 100, NumPrompts: 4}})
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a 45k-token prompt on a TP1 H100 prefill worker: err = %v, want a clear error", err)
	}
	t.Logf("45k tokens on an H100 TP1 prefill worker: %v", err)
	// Longer than the engine's max-model-len: predicted, with a warning.
	p := predictAt(t, prof, target(t, "H20", "dynamo", "prefill 3xTP4 + decode 1xTP4"), workload.Workload{ISL: 6000, OSL: 1000}, 4, false, model.Closed(1))
	if !strings.Contains(strings.Join(p.Warnings, " "), "max-model-len 4096") {
		t.Errorf("ISL+OSL 7000 with max-model-len 4096 gave warnings %q", p.Warnings)
	}
}

func TestBandContainsCentralAndWidensForDerivedCosts(t *testing.T) {
	prof := defaultProfile(t)
	sh := workload.Workload{ISL: 3000, OSL: 150}
	loads := []model.Load{model.Closed(1), model.Closed(64)}
	width := func(p Prediction, i int, m string) float64 {
		pt := p.Points[i]
		lo, hi, mid := pt.Lo[m], pt.Hi[m], pt.Metrics[m]
		if !(lo <= mid*1.001 && mid <= hi*1.001) {
			t.Errorf("%s %s at %s: %s %.4g outside its band [%.4g, %.4g]", p.GPU, p.Topology, pt.Load, m, mid, lo, hi)
		}
		return (hi - lo) / mid
	}
	fitted := predictAt(t, prof, target(t, "H20", "dynamo", "prefill 3xTP4 + decode 1xTP4"), sh, 300, true, loads...)
	for _, tt := range []struct{ gpu, topology string }{
		{"H20", "prefill 6xTP2 + decode 1xTP4"},
		{"H20", "prefill 3xTP4 + decode 1xTP2"},
		{"H100-SXM", "prefill 3xTP4 + decode 1xTP4"},
		{"H200", "prefill 3xTP4 + decode 1xTP4"},
	} {
		derived := predictAt(t, prof, target(t, tt.gpu, "dynamo", tt.topology), sh, 300, true, loads...)
		wf, wd := width(fitted, 0, model.MeanTTFT), width(derived, 0, model.MeanTTFT)
		t.Logf("relative ±1σ width of lone-request TTFT: fitted H20 3xTP4 %.1f%%, %s %s %.1f%%", 100*wf, tt.gpu, tt.topology, 100*wd)
		if strings.Contains(tt.topology, "TP2") && strings.Contains(tt.topology, "decode 1xTP2") {
			wf, wd = width(fitted, 0, model.MeanTPOT), width(derived, 0, model.MeanTPOT)
			t.Logf("  and of TPOT: %.1f%% vs %.1f%%", 100*wf, 100*wd)
		}
		if wd <= wf {
			t.Errorf("%s %s: derived costs give a band %.1f%% wide, not wider than the fitted %.1f%%", tt.gpu, tt.topology, 100*wd, 100*wf)
		}
		for i := range loads {
			width(derived, i, model.RequestThroughput)
		}
		checkBandMatchesSigma(t, derived)
	}
	width(fitted, 1, model.RequestThroughput)
	checkBandMatchesSigma(t, fitted)
	// Aggregated vLLM, fitted: with every coefficient shifted by its own σ
	// this band spanned ×3 of saturated throughput though the step is known to ±24%.
	agg := predictAt(t, prof, target(t, "H20", "vllm-0.9", "4xTP4"), workload.Workload{ISL: 200, OSL: 2000}, 1024, true, model.Closed(512))
	width(agg, 0, model.RequestThroughput)
	checkBandMatchesSigma(t, agg)
}

// checkBandMatchesSigma: the band moves each pool's steps by its reported
// RelSigma, so the throughput at the highest load spans no more than the
// slowest-moving pool allows: hi/lo ≤ e^(2·max σ), with 10% for queueing
// and the KV transfer.
func checkBandMatchesSigma(t *testing.T, p Prediction) {
	t.Helper()
	maxSigma := 0.0
	for _, d := range p.Derived {
		maxSigma = math.Max(maxSigma, d.RelSigma)
	}
	last := p.Points[len(p.Points)-1]
	r := last.Hi[model.RequestThroughput] / last.Lo[model.RequestThroughput]
	t.Logf("%s %s at %s: throughput band ×%.2f (pools' max σ %.1f%%)", p.GPU, p.Topology, last.Load, r, 100*maxSigma)
	if r > 1.1*math.Exp(2*maxSigma) {
		t.Errorf("%s %s at %s: throughput band hi/lo = %.2f, wider than the pools' σ %.3f allows (%.2f)", p.GPU, p.Topology, last.Load, r, maxSigma, 1.1*math.Exp(2*maxSigma))
	}
}

// TestHeldOutDynamoAccuracy predicts every measured seed-004 Dynamo row of
// one configuration from a fit that never saw that configuration: the
// closest proxy for an unseen P/D split or TP degree.
func TestHeldOutDynamoAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Dynamo group twice and simulates 56 points")
	}
	// Bounds on the median and maximum absolute % error per metric.
	limits := map[string][2]float64{
		model.RequestThroughput: {8, 25},
		model.MeanTTFT:          {15, 60},
		model.MeanTPOT:          {8, 25},
		model.MeanE2EL:          {8, 25},
	}
	metrics := []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL}
	for _, heldTP := range []int{4, 1} {
		prof, test := heldOutProfile(t, heldTP)
		ape := map[string][]float64{}
		for _, r := range test {
			sh := workload.Workload{ISL: int(math.Round(r.Workload.ISL)), OSL: int(math.Round(r.Workload.OSL))}
			p := replayAt(t, prof, calibrate.Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, qwen32), Engine: engine.Parse("dynamo"), Topology: r.System.Topology}, sh, r.Workload.NumPrompts, r.Workload.Load)
			for _, m := range metrics {
				want, ok := r.Metric(m)
				if !ok || want <= 0 {
					t.Fatalf("record %s has no %s", r.ID, m)
				}
				ape[m] = append(ape[m], 100*math.Abs(metric(p, 0, m)/want-1))
			}
		}
		for _, m := range metrics {
			med, mx := medianMax(ape[m])
			t.Logf("prefill TP%d held out (%d rows): %s median APE %.1f%%, max %.1f%%", heldTP, len(test), m, med, mx)
			if med > limits[m][0] || mx > limits[m][1] {
				t.Errorf("prefill TP%d held out: %s median %.1f%% / max %.1f%%, want ≤ %.0f%% / %.0f%%", heldTP, m, med, mx, limits[m][0], limits[m][1])
			}
		}
	}
}

func medianMax(v []float64) (median, maximum float64) {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return median, s[n-1]
}

// The KV transfer a prediction simulates is, for the calibrated
// deployment, the one its fit simulated (even when the data could not
// separate it from the prefill overhead), whatever its prefill TP; for any
// other GPU or model it is priced on its own path, never carried.
func TestConfiguredTransferIsTheFittedOne(t *testing.T) {
	prof := defaultProfile(t)
	var fitted calibrate.TransferFit
	for _, g := range prof.Groups {
		if g.GPU == "H20" && strings.HasPrefix(g.Engine, "dynamo") {
			fitted = g.Transfer
		}
	}
	if fitted.LatencyS <= 0 || fitted.PerTokenS <= 0 {
		t.Fatalf("no Dynamo transfer in the profile: %+v", fitted)
	}
	for _, tt := range []struct {
		gpu, llm, topology string
		own                bool
	}{
		{"H20", qwen32, "prefill 3xTP4 + decode 1xTP4", true},
		{"H20", qwen32, "prefill 6xTP2 + decode 2xTP2", true},
		{"H200", qwen32, "prefill 2xTP4 + decode 1xTP8", false},
		{"H20", "meta-llama/Llama-3.1-70B-Instruct", "prefill 2xTP4 + decode 1xTP4", false},
	} {
		tgt := target(t, tt.gpu, "dynamo", tt.topology)
		tgt.LLM = mustLLM(t, tt.llm)
		d, err := prof.Configure(tgt)
		if err != nil {
			t.Fatal(err)
		}
		want := sim.Transfer{Latency: fitted.LatencyS, PerToken: fitted.PerTokenS}
		if !tt.own {
			path := tgt.GPU.KVTransferPath(tgt.Topology.GPUs())
			want = sim.Transfer{Latency: path.LatencyS, PerToken: path.PerTokenS(d.LLM, tgt.Topology.Prefill.TP)}
		}
		if tr := d.Config.Transfer; math.Abs(tr.Latency/want.Latency-1) > 1e-9 || math.Abs(tr.PerToken/want.PerToken-1) > 1e-9 {
			t.Errorf("%s %s %s: transfer %+v, want %+v", tt.gpu, model.ShortName(tt.llm), tt.topology, tr, want)
		}
		if !strings.Contains(d.TransferFrom, map[bool]string{true: "calibrated deployment's own", false: "not another deployment's"}[tt.own]) {
			t.Errorf("%s %s %s: transfer said %q", tt.gpu, model.ShortName(tt.llm), tt.topology, d.TransferFrom)
		}
	}
	// A stated link prices even the calibrated deployment's transfer; its
	// frontend stays inside its fitted prefill (none is added).
	tgt := target(t, "H20", "dynamo", "prefill 3xTP4 + decode 1xTP4")
	tgt.KVLink = "RDMA200"
	d, err := prof.Configure(tgt)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := tgt.GPU.KVTransferPathOver("RDMA200")
	if tr, want := d.Config.Transfer, path.PerTokenS(d.LLM, 4); math.Abs(tr.PerToken/want-1) > 1e-9 || tr.Latency != path.LatencyS || d.Config.FrontendLatency != 0 {
		t.Errorf("stated RDMA200: transfer %+v (want %g s/token), frontend %v (want none beside its fitted costs)", tr, want, d.Config.FrontendLatency)
	}
}

// Beyond the measured concurrencies (up to 128) on unseen deployments:
// throughput saturates without falling, latency only grows, and Little's
// law holds for the closed loop.
func TestBeyondMeasuredConcurrency(t *testing.T) {
	prof := defaultProfile(t)
	tests := []struct {
		engine, topology string
		shape            workload.Workload
	}{
		{"dynamo", "prefill 6xTP2 + decode 1xTP4", workload.Workload{ISL: 3000, OSL: 150}},
		{"dynamo", "prefill 4xTP2 + decode 2xTP2", workload.Workload{ISL: 1000, OSL: 1000}},
		{"dynamo", "prefill 3xTP4 + decode 1xTP4", workload.Workload{ISL: 8000, OSL: 500}},
		{"vllm-0.9", "8xTP2", workload.Workload{ISL: 200, OSL: 2000}},
		{"vllm-0.8", "4xTP4", workload.Workload{ISL: 2500, OSL: 100}},
	}
	loads := []model.Load{model.Closed(64), model.Closed(128), model.Closed(256), model.Closed(512)}
	for _, tt := range tests {
		t.Run(tt.engine+" "+tt.topology, func(t *testing.T) {
			p := predictAt(t, prof, target(t, "H20", tt.engine, tt.topology), tt.shape, 0, false, loads...)
			for i, pt := range p.Points {
				x, e2e := pt.Metrics[model.RequestThroughput], pt.Metrics[model.MeanE2EL]
				if inFlight := x * e2e / 1000; inFlight < 0.85*float64(pt.Load.Concurrency) || inFlight > 1.05*float64(pt.Load.Concurrency) {
					t.Errorf("c=%d: throughput × mean E2E = %.1f requests in flight", pt.Load.Concurrency, inFlight)
				}
				if i == 0 {
					continue
				}
				prev := p.Points[i-1]
				for _, m := range []string{model.MeanTTFT, model.MeanTPOT, model.MeanE2EL} {
					if pt.Metrics[m] < 0.97*prev.Metrics[m] {
						t.Errorf("%s fell from %.4g at c=%d to %.4g at c=%d", m, prev.Metrics[m], prev.Load.Concurrency, pt.Metrics[m], pt.Load.Concurrency)
					}
				}
				// Throughput holds once saturated, unless a full KV cache makes
				// the engine preempt and recompute (as vLLM does), which wastes work.
				floor := 0.97
				if kvFull(pt) {
					floor = 0.7
				}
				if x, px := pt.Metrics[model.RequestThroughput], prev.Metrics[model.RequestThroughput]; x < floor*px {
					t.Errorf("throughput fell from %.3f at c=%d to %.3f at c=%d (KV full: %v)", px, prev.Load.Concurrency, x, pt.Load.Concurrency, kvFull(pt))
				}
			}
			last := p.Points[len(p.Points)-1]
			t.Logf("ISL %d OSL %d, c=64…512: %.2f → %.2f req/s, TTFT %.0f → %.0f ms, TPOT %.1f → %.1f ms; %s",
				tt.shape.ISL, tt.shape.OSL, metric(p, 0, model.RequestThroughput), last.Metrics[model.RequestThroughput],
				metric(p, 0, model.MeanTTFT), last.Metrics[model.MeanTTFT], metric(p, 0, model.MeanTPOT), last.Metrics[model.MeanTPOT], p.Bottleneck.Resource)
		})
	}
}

// kvFull reports whether some pool's KV cache filled up during the point.
func kvFull(pt Point) bool {
	for _, ps := range pt.Pools {
		if ps.MaxKVUsage >= 0.95 {
			return true
		}
	}
	return false
}
