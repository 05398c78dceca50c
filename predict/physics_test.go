package predict

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/workload"
)

// The physical invariants of a prediction on hardware nobody benchmarked:
// better hardware is never slower, a lone request's TPOT lies between its
// memory roofline and what the cited overheads add to it, and on NVLink
// more tensor parallelism never slows a lone request. They are checked on
// every catalog GPU for dense 8B, 32B and 70B models and a mixture of
// experts, at TP1–8, with an engine version no calibrated group ran, so
// that every price is the physics and the engine table, not one
// deployment's residual (a calibrated deployment keeps its own,
// labelled: calibrate.Group.Unexplained).

// physicsEngine is an engine version no group of the embedded profile ran.
const physicsEngine = "vllm-0.15.0"

// physicsSettings hold the engine's batch limits the same on every GPU:
// vLLM's own defaults differ by GPU (1024 sequences from 70 GiB but on
// A100s, 256 below), and with them its KV cache (its profiling run
// samples that many rows), which is the engine's choice, not the
// hardware's: at 1024 rows a Llama-3.1-70B at TP2 keeps about 0.3 GiB of
// cache a GPU on H100s, at 256 about 4 GiB on A100s.
var physicsSettings = engine.Stated{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192}

var physicsModels = []string{"meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-32B", "meta-llama/Llama-3.1-70B-Instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1"}

// physicsPoint is one predicted deployment at concurrency 1 and 64.
type physicsPoint struct {
	ttft, tpot, tput, e2e [2]float64
}

func physicsPredictions(t *testing.T) map[string]physicsPoint {
	t.Helper()
	prof := defaultProfile(t)
	out := map[string]physicsPoint{}
	for _, g := range model.GPUs() {
		for _, name := range physicsModels {
			m, err := model.LookupLLM(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, tp := range []int{1, 2, 4, 8} {
				if !fits(g, m, model.Pool{Count: 1, TP: tp}) {
					continue
				}
				tgt := calibrate.Target{GPU: g, LLM: mustLLM(t, name), Engine: engine.Parse(physicsEngine), Topology: model.Topology{Replicas: model.Pool{Count: 1, TP: tp}}, Stated: physicsSettings}
				p, err := tryPredict(prof, tgt, workload.Workload{ISL: 1024, OSL: 256}, 200, model.Closed(1), model.Closed(64))
				if err != nil {
					continue // KV too small for the load: not this test's subject
				}
				var pt physicsPoint
				for i := range 2 {
					pt.ttft[i], pt.tpot[i], pt.tput[i], pt.e2e[i] = metric(p, i, model.MeanTTFT), metric(p, i, model.MeanTPOT), metric(p, i, model.RequestThroughput), metric(p, i, model.MeanE2EL)
				}
				out[physicsKey(g.Name, name, tp)] = pt
			}
		}
	}
	return out
}

// holdsLoad reports whether a worker of tp GPUs of the named GPU keeps
// tokens of KV cache for the named model at physicsEngine's settings.
func holdsLoad(t *testing.T, gpu, name string, tp, tokens int) bool {
	t.Helper()
	g, err := model.LookupGPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	m := mustLLM(t, name)
	mem, err := model.WorkerMemory(g, m, model.Pool{Count: 1, TP: tp}, calibrate.MemoryOptionsFor(engine.Parse(physicsEngine), g, m, physicsSettings))
	return err == nil && mem.KVTokens >= tokens
}

// fits reports whether m's weights fit a worker of shape p on g.
func fits(g model.GPU, m model.LLM, p model.Pool) bool {
	_, err := model.WorkerMemory(g, m, p, model.MemoryOptions{})
	return err == nil
}

// tryPredict is predictAt that returns the error instead of failing.
func tryPredict(prof *calibrate.Profile, tgt calibrate.Target, sh workload.Workload, prompts int, loads ...model.Load) (Prediction, error) {
	preds, err := Run(context.Background(), prof, Options{Target: tgt, Loads: loads, NoBand: true, Workload: workload.Workload{ISL: sh.ISL, OSL: sh.OSL, NumPrompts: prompts, Seed: 3}})
	if err != nil {
		return Prediction{}, err
	}
	return preds[0], nil
}

func physicsKey(gpu, llm string, tp int) string {
	return fmt.Sprintf("%s/%s/TP%d", gpu, model.ShortName(llm), tp)
}

// atLeastAsGood reports whether b's hardware is at least a's in every
// respect capsim prices for a worker of tp GPUs: memory size, bandwidth
// and FLOPs (spec and measured achievable) and, from TP2, the link's
// all-reduce latencies and bus bandwidth at that TP. Two PCIe GPUs'
// custom all-reduce (5–6 µs) is quicker at TP2 than a B200's or MI300X's
// (7.3–7.4 µs), so those pairs are compared at the other TPs only.
func atLeastAsGood(b, a model.GPU, tp int) bool {
	la, lb := a.Link(), b.Link()
	q := model.QuantNone
	link := tp < 2 || lb.AchievableBps() >= la.AchievableBps() && lb.AllReduceBps(tp) >= la.AllReduceBps(tp) &&
		lb.AllReduceUs(tp, true) <= la.AllReduceUs(tp, true) && lb.AllReduceUs(tp, false) <= la.AllReduceUs(tp, false)
	return b.MemoryGB >= a.MemoryGB && b.MemoryTBps >= a.MemoryTBps && b.TFLOPS >= a.TFLOPS &&
		b.MemoryTBps*b.AchievableMemoryShare() >= a.MemoryTBps*a.AchievableMemoryShare() &&
		b.TFLOPS*b.AchievableMatmulShare(q) >= a.TFLOPS*a.AchievableMatmulShare(q) &&
		link && b.Name != a.Name
}

func TestPhysicalInvariants(t *testing.T) {
	if testing.Short() {
		t.Skip("predicts every catalog GPU for four models")
	}
	preds := physicsPredictions(t)
	gpus := model.GPUs()
	const slack = 1.005 // simulation noise between two deployments
	pairs := 0
	for _, a := range gpus {
		for _, b := range gpus {
			for _, name := range physicsModels {
				for _, tp := range []int{1, 2, 4, 8} {
					if !atLeastAsGood(b, a, tp) {
						continue
					}
					pa, okA := preds[physicsKey(a.Name, name, tp)]
					pb, okB := preds[physicsKey(b.Name, name, tp)]
					if !okA || !okB {
						continue
					}
					pairs++
					// A lone request: every latency and the throughput.
					if pb.ttft[0] > pa.ttft[0]*slack || pb.tpot[0] > pa.tpot[0]*slack || pb.tput[0]*slack < pa.tput[0] {
						t.Errorf("%s is at least as good as %s, yet %s TP%d at c=1: TTFT %.1f vs %.1f ms, TPOT %.2f vs %.2f ms, %.3f vs %.3f req/s",
							b.Name, a.Name, model.ShortName(name), tp, pb.ttft[0], pa.ttft[0], pb.tpot[0], pa.tpot[0], pb.tput[0], pa.tput[0])
					}
					// 64 in a closed loop: the better GPU serves more and
					// answers sooner end to end. Its TTFT and TPOT alone
					// need not fall: a larger KV cache runs larger batches,
					// and a faster cycle brings prompts in closer together.
					if pb.tput[1]*slack < pa.tput[1] || pb.e2e[1] > pa.e2e[1]*slack {
						t.Errorf("%s is at least as good as %s, yet %s TP%d at c=64: %.2f vs %.2f req/s, E2E %.0f vs %.0f ms",
							b.Name, a.Name, model.ShortName(name), tp, pb.tput[1], pa.tput[1], pb.e2e[1], pa.e2e[1])
					}
				}
			}
		}
	}
	if pairs < 20 {
		t.Fatalf("only %d comparable pairs: the test compares nothing", pairs)
	}
	t.Logf("%d (GPU pair, model, TP) comparisons", pairs)
	// The order a buyer compares (issue 33): H20 < A100 < H100 < H200 <
	// B200 by what they serve at load (c=64 throughput) and by how fast
	// they answer a lone prompt (c=1 TTFT) at TP2–8. Not by a lone
	// request's TPOT: the H20 streams weights at twice the A100's
	// bandwidth, and physics orders that the other way. Nor, for a
	// mixture of experts, the H20 against the A100 at load: its decode
	// steps read nearly every expert, so the H20's bandwidth (and 16 GB
	// more memory) weighs against its half of the A100's FLOPs, and on
	// Mixtral-8x7B it serves 6–11% more at c=64. Nor where a GPU's KV
	// cache cannot hold the 64 requests (Llama-3.1-70B at TP2 on A100s):
	// there memory, the H20's 96 GB against 80, decides, not speed.
	ladder := []string{"H20", "A100-80GB", "H100-SXM", "H200", "B200"}
	ordered := 0
	for _, name := range physicsModels {
		rungs := ladder
		if mustLLM(t, name).IsMoE() {
			rungs = ladder[1:]
		}
		for _, tp := range []int{2, 4, 8} {
			var prev *physicsPoint
			prevGPU := ""
			for _, gpu := range rungs {
				p, ok := preds[physicsKey(gpu, name, tp)]
				if !ok || !holdsLoad(t, gpu, name, tp, 64*(1024+256)) {
					prev = nil // a GPU the model or the load does not fit: compare across it no further
					continue
				}
				if prev != nil {
					ordered++
					if p.tput[1] <= prev.tput[1] || p.ttft[0] >= prev.ttft[0] {
						t.Errorf("%s TP%d: %s serves %.2f req/s at c=64 and answers a lone prompt in %.1f ms, %s %.2f req/s and %.1f ms: out of the H20 < A100 < H100 < H200 < B200 order",
							model.ShortName(name), tp, gpu, p.tput[1], p.ttft[0], prevGPU, prev.tput[1], prev.ttft[0])
					}
				}
				prev, prevGPU = &p, gpu
			}
		}
	}
	if ordered < 30 {
		t.Fatalf("only %d neighbouring pairs of the H20-to-B200 ladder compared", ordered)
	}
	t.Logf("%d neighbouring (GPU pair, model, TP) comparisons on the H20-to-B200 ladder", ordered)
	// TP2 → TP8 at concurrency 1 on NVLink: more GPUs never slow a lone request.
	for _, g := range gpus {
		if g.Link().GBps < 100 {
			continue
		}
		for _, name := range physicsModels {
			prev := math.Inf(1)
			for _, tp := range []int{2, 4, 8} {
				p, ok := preds[physicsKey(g.Name, name, tp)]
				if !ok {
					continue
				}
				if p.tpot[0] > prev*slack {
					t.Errorf("%s %s: c=1 TPOT rises to %.2f ms at TP%d (%.2f below)", g.Name, model.ShortName(name), p.tpot[0], tp, prev)
				}
				prev = p.tpot[0]
			}
		}
	}
}

// A lone request's TPOT lies between the time to stream its weights and
// KV cache once at the GPU's spec bandwidth and that stream at a floor
// efficiency plus the engine table's CPU costs and the cited collectives.
// A dense model nobody calibrated on the GPU streams no faster than the
// GPU's measured streaming share (model.GPU.MemoryShare) allows.
func TestLoneRequestTPOTBetweenPhysicalBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("predicts every catalog GPU for four models")
	}
	prof := defaultProfile(t)
	// minStreamShare is the least share of the GPU's measured streaming
	// bandwidth a batch-1 decode reaches in an engine: Nsight Compute
	// profiles of a 70B decode show weight loads at 78% and KV reads at
	// 42–57% of spec (model.PriorWeight), so half is a floor.
	const minStreamShare = 0.5
	row := engine.OverheadFor(physicsEngine)
	for _, g := range model.GPUs() {
		for _, name := range physicsModels {
			m, _ := model.LookupLLM(name)
			for _, tp := range []int{1, 2, 4, 8} {
				pool := model.Pool{Count: 1, TP: tp}
				if !fits(g, m, pool) {
					continue
				}
				tgt := calibrate.Target{GPU: g, LLM: mustLLM(t, name), Engine: engine.Parse(physicsEngine), Topology: model.Topology{Replicas: pool}}
				p, err := tryPredict(prof, tgt, workload.Workload{ISL: 1024, OSL: 256}, 50, model.Closed(1))
				if err != nil {
					continue
				}
				r := model.NewRoofline(g, m, pool)
				ctx := 1024 + 128.0 // the mean context over a request's decode
				stream := r.WeightRead + r.ExpertRead*(1-r.ExpertMiss) + r.KVRead*ctx + r.Act.Time(1)
				// Every kernel pays its measured latency however little it moves.
				lo := stream + r.KernelFloor
				// A (GPU, model) pair a group of the profile fitted is priced
				// by its own weight efficiency, not the GPU's share.
				if !m.IsMoE() && m.LatentKV == 0 && !slices.Contains(prof.Models(g.Name), m.Name) {
					lo = stream/g.AchievableMemoryShare() + r.KernelFloor
				}
				comm := 2 * float64(m.Layers) * g.TPLink(1).AllReduceUs(tp, false) * 1e-6
				if tp == 1 {
					comm = 0
				}
				hi := stream/(minStreamShare*g.AchievableMemoryShare()) + r.KernelFloor + row.StepS + row.PerSeqS + comm + r.CommToken
				got := metric(p, 0, model.MeanTPOT) / 1000
				if got < lo || got > hi {
					t.Errorf("%s %s TP%d: c=1 TPOT %.2f ms outside its physical bounds [%.2f, %.2f] ms", g.Name, model.ShortName(name), tp, 1000*got, 1000*lo, 1000*hi)
				}
			}
		}
	}
}

// A disaggregated deployment nobody calibrated: a lone request's TTFT
// grows by what its path's transfer costs more between servers than
// within one (the same prefill and decode workers otherwise), and hardware
// at least as good (its NIC included) is never slower.
func TestDisaggregatedTransferInvariants(t *testing.T) {
	if testing.Short() {
		t.Skip("predicts every catalog GPU twice")
	}
	prof := defaultProfile(t)
	const isl, slack = 4096, 1.005
	qwen := mustLLM(t, "Qwen/Qwen3-32B")
	ttft := map[string][2]float64{}
	for _, g := range model.GPUs() {
		if !fits(g, qwen, model.Pool{Count: 1, TP: 2}) {
			continue
		}
		var got, transfer [2]float64
		for i, prefill := range []int{1, 5} { // 4 GPUs in one server; 12 across two
			topo := model.Topology{Prefill: model.Pool{Count: prefill, TP: 2}, Decode: model.Pool{Count: 1, TP: 2}}
			tgt := calibrate.Target{GPU: g, LLM: qwen, Engine: engine.Parse(physicsEngine), Topology: topo}
			p, err := tryPredict(prof, tgt, workload.Workload{ISL: isl, OSL: 64}, 40, model.Closed(1))
			if err != nil {
				t.Fatalf("%s %s: %v", g.Name, topo, err)
			}
			got[i] = metric(p, 0, model.MeanTTFT)
			path := g.KVTransferPath(topo.GPUs())
			transfer[i] = 1000 * (path.LatencyS + isl*path.PerTokenS(qwen, 2))
		}
		if d, want := got[1]-got[0], transfer[1]-transfer[0]; math.Abs(d-want) > 0.02*want+0.5 {
			t.Errorf("%s: TTFT %.1f ms across servers, %.1f within one: %.1f ms apart, the paths %.1f", g.Name, got[1], got[0], d, want)
		}
		ttft[g.Name] = got
	}
	pairs := 0
	for _, a := range model.GPUs() {
		for _, b := range model.GPUs() {
			ta, okA := ttft[a.Name]
			tb, okB := ttft[b.Name]
			if !okA || !okB || !atLeastAsGood(b, a, 2) || b.KVTransferPath(12).Bps < a.KVTransferPath(12).Bps {
				continue
			}
			pairs++
			for i := range 2 {
				if tb[i] > ta[i]*slack {
					t.Errorf("%s is at least as good as %s, yet its lone TTFT is %.1f ms against %.1f (deployment %d)", b.Name, a.Name, tb[i], ta[i], i)
				}
			}
		}
	}
	if pairs < 5 {
		t.Fatalf("only %d comparable pairs", pairs)
	}
}

// A lone request's ITL on a GPU and engine version nobody calibrated, against
// a public measurement the fit never saw: vLLM 0.19.1 serving Llama-3.1-8B
// (BF16 KV cache) on one H100 at concurrency 1, 128 output tokens, inputs
// from 256 to 125k tokens, fitted by the vLLM blog (2026-04-22, "The State
// of FP8 KV-Cache and Attention Quantization in vLLM") to ITL = 6.44 ms +
// 4.37e-5 ms a context token. The post's concurrency-8 run is in the
// corpus; this sweep is not. Tolerance 10% on the ITL and on its growth
// with context (the KV read).
func TestLoneRequestITLMatchesVLLMBlogH100(t *testing.T) {
	prof := defaultProfile(t)
	gpu := mustGPU(t, "H100-SXM")
	tgt := calibrate.Target{GPU: gpu, LLM: mustLLM(t, "meta-llama/Llama-3.1-8B"), Engine: engine.Parse("vllm-0.19.1"), Topology: model.Topology{Replicas: model.Pool{Count: 1, TP: 1}}}
	isls := []int{256, 32768}
	var got [2]float64
	for i, isl := range isls {
		p, err := tryPredict(prof, tgt, workload.Workload{ISL: isl, OSL: 128}, 20, model.Closed(1))
		if err != nil {
			t.Fatal(err)
		}
		got[i] = metric(p, 0, model.MeanITL)
		if want := 6.44 + 4.37e-5*float64(isl); math.Abs(got[i]/want-1) > 0.10 {
			t.Errorf("ISL %d: c=1 ITL %.2f ms, measured %.2f ms (more than 10%% apart)", isl, got[i], want)
		}
	}
	if slope := (got[1] - got[0]) / float64(isls[1]-isls[0]); math.Abs(slope/4.37e-5-1) > 0.10 {
		t.Errorf("ITL grows %.3g ms a context token, measured 4.37e-05 (more than 10%% apart)", slope)
	}
}

// Throughput under load against the same public sweep: ML.ENERGY's
// Llama-3.1-8B-Instruct on one H100 with vLLM 0.11.1 (async scheduling),
// max-num-seqs 16 to 384 kept full (its published mean batch is within 1%
// of it: simulated as a closed loop of as many), publishes each
// configuration's output throughput; the prompts' lengths are not
// published (512 assumed), the outputs averaged 390–405 tokens. Tolerance
// 10% on output tok/s.
func TestLoadedThroughputMatchesMLEnergyH100(t *testing.T) {
	prof := defaultProfile(t)
	gpu := mustGPU(t, "H100-SXM")
	for _, tt := range []struct {
		seqs    int
		tokPerS float64
	}{{16, 1953.6}, {32, 3391.1}, {128, 7036.5}, {192, 8223.3}, {256, 9009.6}, {384, 9248.0}} {
		tgt := mlEnergyTarget(t, gpu, "meta-llama/Llama-3.1-8B-Instruct", 1, tt.seqs)
		p, err := tryPredict(prof, tgt, workload.Workload{ISL: 512, OSL: 400}, 4*tt.seqs, model.Closed(tt.seqs))
		if err != nil {
			t.Fatal(err)
		}
		if got := metric(p, 0, model.OutputThroughput); math.Abs(got/tt.tokPerS-1) > 0.10 {
			t.Errorf("%d in flight: %.0f output tok/s, measured %.0f (more than 10%% apart)", tt.seqs, got, tt.tokPerS)
		}
	}
}

// Decode at a small batch on a GPU and engine version nobody calibrated,
// against public measurements the fit never saw: the ML.ENERGY
// leaderboard v3 (github.com/ml-energy/leaderboard public/data at
// 0cd52da, 2026-02-16; harness ml-energy/benchmark at c1d6557) ran
// vLLM 0.11.1 with --async-scheduling on H100s, max-num-seqs 8 kept full
// with LMArena chat requests (mean batch 7.98–8.0: simulated as a closed
// loop of 8), and publishes each model's median ITL. Its prompts' lengths are not published: 512 tokens
// are assumed (256 or 1024 move these predictions by under 4%), and each
// model's mean output. Tolerance 10%.
func TestSmallBatchITLMatchesMLEnergyH100(t *testing.T) {
	prof := defaultProfile(t)
	gpu := mustGPU(t, "H100-SXM")
	for _, tt := range []struct {
		llm      string
		tp, osl  int
		medianMs float64
	}{
		{"meta-llama/Llama-3.1-8B-Instruct", 1, 389, 7.32},
		{"Qwen/Qwen3-8B", 1, 647, 8.20},
		{"Qwen/Qwen3-14B", 1, 620, 12.54},
		{"Qwen/Qwen3-32B", 1, 638, 25.21},
		{"Qwen/Qwen3-32B", 2, 631, 15.06},
		{"meta-llama/Llama-3.1-70B-Instruct", 4, 350, 16.57},
	} {
		tgt := mlEnergyTarget(t, gpu, tt.llm, tt.tp, 8)
		p, err := tryPredict(prof, tgt, workload.Workload{ISL: 512, OSL: tt.osl}, 200, model.Closed(8))
		if err != nil {
			t.Fatal(err)
		}
		if got := metric(p, 0, model.MedianITL); math.Abs(got/tt.medianMs-1) > 0.10 {
			t.Errorf("%s TP%d at 8 in flight: median ITL %.2f ms, measured %.2f ms (more than 10%% apart)", model.ShortName(tt.llm), tt.tp, got, tt.medianMs)
		}
	}
}

// mlEnergyTarget is a deployment as ML.ENERGY's harness runs it: vLLM
// 0.11.1 with --async-scheduling, --max-model-len 20480 and max-num-seqs
// seqs, the engine's defaults otherwise.
func mlEnergyTarget(t *testing.T, gpu model.GPU, llm string, tp, seqs int) calibrate.Target {
	t.Helper()
	id := engine.Parse("vllm-0.11.1")
	s, err := engine.Defaults(id, gpu.Device(), 20480)
	if err != nil {
		t.Fatal(err)
	}
	on := true
	// The harness states --enable-expert-parallel (a dense model ignores it).
	s.AsyncScheduling, s.MaxNumSeqs, s.ExpertParallel = &on, seqs, tp
	return calibrate.Target{GPU: gpu, LLM: mustLLM(t, llm), Engine: id, Settings: &s, Topology: model.Topology{Replicas: model.Pool{Count: 1, TP: tp}}}
}
