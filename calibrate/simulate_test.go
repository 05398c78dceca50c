package calibrate

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

func TestSimulateFillsWorkloadAndFrontend(t *testing.T) {
	p := testProfile()
	p.Groups[2].Frontend = &FrontendFit{LatencyS: 0.05, Source: SourceFitted, RelSigma: 0.2}
	d, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("vllm-0.9"), Topology: mustTopo(t, "4xTP4")})
	if err != nil {
		t.Fatal(err)
	}
	w := workload.Workload{Load: model.Closed(8), ISL: 1000, OSL: 200, NumPrompts: 64, Seed: 7, PrefixHitRate: 0.3}
	var seen sim.Config
	raw := &sim.Result{Duration: 100, Metrics: map[string]float64{model.MeanTTFT: 150, model.MeanE2EL: 2000}}
	res, err := d.SimulateWith(context.Background(), w, func(_ context.Context, cfg sim.Config) (*sim.Result, error) {
		seen = cfg
		return raw, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen.Load != w.Load || !reflect.DeepEqual(seen.Input, sim.Fixed(1000)) || !reflect.DeepEqual(seen.Output, workload.BenchmarkOutput(200, 0)) ||
		seen.NumPrompts != 64 || seen.Seed != 7 || !reflect.DeepEqual(seen.Replicas, d.Config.Replicas) || seen.FrontendLatency != 0.05 || seen.PrefixHitRate != 0.3 {
		t.Errorf("simulated config %+v does not carry the workload %+v and the 0.05 s frontend on the deployment", seen, w)
	}
	if res != raw || res.Metrics[model.MeanTTFT] != 150 {
		t.Errorf("Simulate patched the simulator's result: %v", res.Metrics)
	}

	// The real simulator gives what sim.Run gives on the same configuration.
	got, err := d.Simulate(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.Run(context.Background(), d.WithWorkload(w).Config)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want.Metrics {
		if math.Abs(got.Metrics[k]-v) > 1e-9*math.Max(1, math.Abs(v)) {
			t.Errorf("%s = %v, want %v", k, got.Metrics[k], v)
		}
	}
}

func TestSimulateReturnsTheSimulatorsError(t *testing.T) {
	boom := errors.New("sim: boom")
	_, err := Deployment{}.SimulateWith(context.Background(), workload.Workload{Load: model.Closed(1)}, func(context.Context, sim.Config) (*sim.Result, error) {
		return nil, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
}

// A record whose settings state a prefix-cache hit rate is fitted and
// predicted with it (the point's workload carries it into the simulator);
// one that states none keeps 0; one that states nonsense is skipped with a
// warning naming it.
func TestPointsReadThePrefixHitRate(t *testing.T) {
	topo := mustTopo(t, "1xTP4")
	base := results.Record{ID: "hit:1", Source: results.Source{File: "hit.md", Line: 1, Format: "markdown"},
		System:   results.System{GPU: "H20", GPUCount: 4, Model: "Qwen/Qwen3-32B", Engine: "vllm-0.10.1", Topology: topo},
		Workload: results.Workload{ISL: 4000, OSL: 100, ISLMax: 4000, OSLMax: 100, Load: model.Closed(4), NumPrompts: 40},
		Metrics:  map[string]float64{model.RequestThroughput: 1.5, model.MeanTTFT: 300, model.MeanTPOT: 25}, Completed: 40}
	for _, tc := range []struct {
		settings map[string]string
		want     float64
		warn     string
	}{
		{nil, 0, ""},
		{map[string]string{"prefix_cache_hit_rate": "0.4"}, 0.4, ""},
		{map[string]string{"Prefix-Cache-Hit-Rate": "53.7%"}, 0.537, ""},
		{map[string]string{"prefix_cache_hit_rate": "1"}, 0, `prefix_cache_hit_rate "1" is not a fraction`},
	} {
		r := base
		r.System.Settings = tc.settings
		groups, keys, warn := preparePoints([]results.Record{r}, 0)
		if tc.warn != "" {
			if len(keys) != 0 || len(warn) != 1 || !strings.Contains(warn[0], tc.warn) || !strings.Contains(warn[0], r.ID) {
				t.Errorf("settings %v: points %v, warnings %q; want the record skipped with %q", tc.settings, keys, warn, tc.warn)
			}
			continue
		}
		if len(keys) != 1 {
			t.Fatalf("settings %v: %d groups, warnings %q", tc.settings, len(keys), warn)
		}
		p := groups[keys[0]][0]
		if w := p.workload(); math.Abs(w.PrefixHitRate-tc.want) > 1e-12 {
			t.Errorf("settings %v: workload hit rate %v, want %v", tc.settings, w.PrefixHitRate, tc.want)
		}
		g, _ := model.LookupGPU("H20")
		m, _ := model.LookupLLM("Qwen/Qwen3-32B")
		e := env{gpu: g, llm: m, settings: defaultSettings(engine.Parse("vllm-0.10.1"), g, 0)}
		prm := params{coeffs: map[string]model.Coeffs{RoleAggregated: truthDecode}}
		cfg, err := simConfig(e, prm, p)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(cfg.PrefixHitRate-tc.want) > 1e-12 {
			t.Errorf("settings %v: simulated hit rate %v, want %v", tc.settings, cfg.PrefixHitRate, tc.want)
		}
	}
}

// Each point is simulated with the KV cache its own record states, not the
// last one its group read: one source ran the same GPU, model and engine at
// --gpu-memory-utilization 0.25 and 0.5, and logged the KV cache each left.
// A stated KV cache (GiB per GPU, or vLLM's --kv-cache-memory-bytes) sizes
// the simulated cache exactly, in elements of its stated --kv-cache-dtype;
// an unstated one is what the utilization leaves.
func TestPointsKeepTheirOwnKVCache(t *testing.T) {
	topo := mustTopo(t, "1xTP2")
	base := results.Record{Source: results.Source{File: "kv.md", Format: "markdown"},
		System:   results.System{GPU: "A100-80GB", GPUCount: 2, Model: "Qwen/Qwen2-7B-Instruct", Engine: "vllm-0.10.1.1", Topology: topo},
		Workload: results.Workload{ISL: 1000, OSL: 100, ISLMax: 1000, OSLMax: 100, Load: model.Closed(4), NumPrompts: 40},
		Metrics:  map[string]float64{model.RequestThroughput: 1.5, model.MeanTTFT: 300, model.MeanTPOT: 25}, Completed: 40}
	g, m := mustGPU(t, "A100-80GB"), mustLLM(t, "Qwen2-7B-Instruct")
	perToken := m.KVBytesPerToken(2, m.KVElemBytes())
	for i, tc := range []struct {
		settings map[string]string
		want     int // KV tokens; 0: what the utilization leaves
		util     float64
	}{
		{map[string]string{"gpu-memory-utilization": "0.25", "kv-cache-memory-gib": "12.02"}, int(12.02 * (1 << 30) * 2 / perToken), 0},
		{map[string]string{"gpu_memory_utilization": "0.5", "KV_Cache_Memory_GiB": "31.83"}, int(31.83 * (1 << 30) * 2 / perToken), 0},
		{map[string]string{"kv-cache-memory-bytes": "8589934592"}, int(8 * (1 << 30) * 2 / perToken), 0},
		// An FP8 KV cache holds twice the tokens in the same bytes.
		{map[string]string{"kv-cache-memory-bytes": "8589934592", "kv-cache-dtype": "fp8"}, int(8 * (1 << 30) * 2 / (perToken / 2)), 0},
		{map[string]string{"gpu-memory-utilization": "0.5"}, 0, 0.5},
		{nil, 0, 0.9},
	} {
		r := base
		r.ID = "kv:" + itoa(i+1)
		r.Source.Line = i + 1
		r.System.Settings = tc.settings
		groups, keys, warn := preparePoints([]results.Record{r}, 0)
		if len(keys) != 1 || len(warn) != 0 {
			t.Fatalf("settings %v: %d groups, warnings %q", tc.settings, len(keys), warn)
		}
		// The group's own settings say something else: the point's win.
		s := defaultSettings(engine.Parse(base.System.Engine), g, 0)
		s.GPUMemoryUtilization, s.KVCacheGiB = 0.7, 40
		e := env{gpu: g, llm: m, settings: s, engine: engine.Parse(base.System.Engine)}
		cfg, err := simConfig(e, params{coeffs: map[string]model.Coeffs{RoleAggregated: truthDecode}}, groups[keys[0]][0])
		if err != nil {
			t.Fatal(err)
		}
		want := tc.want
		if want == 0 {
			mem, err := model.WorkerMemory(g, m, model.Pool{Count: 1, TP: 2}, model.MemoryOptions{Utilization: tc.util})
			if err != nil {
				t.Fatal(err)
			}
			want = mem.KVTokens
		}
		if got := cfg.Replicas.KVCapacity; got != want {
			t.Errorf("settings %v: KV capacity %d tokens, want %d", tc.settings, got, want)
		}
	}
}

// Records of one group that state different batch limits (a tuned run
// beside the defaults) are each simulated with their own, whatever the
// group's settings say.
func TestPointsKeepTheirOwnBatchLimits(t *testing.T) {
	base := results.Record{Source: results.Source{File: "trt.md", Format: "markdown"},
		System:   results.System{GPU: "H100-SXM", GPUCount: 1, Model: "Qwen/Qwen3-14B", Engine: "trtllm-1.2.0rc1", Topology: mustTopo(t, "1xTP1")},
		Workload: results.Workload{ISL: 2000, OSL: 100, ISLMax: 2000, OSLMax: 100, Load: model.Closed(64), NumPrompts: 500},
		Metrics:  map[string]float64{model.RequestThroughput: 5, model.MeanTTFT: 3000, model.MeanTPOT: 60}, Completed: 500}
	pts, reps, warn := groupReplicas(t, base, map[string]string{}, map[string]string{"max_num_tokens": "32768", "max_batch_size": "512"})
	if len(pts) != 2 {
		t.Fatalf("warnings %q; want both records in one group", warn)
	}
	for i, want := range [][2]int{{8192, 2048}, {32768, 512}} {
		if r := reps[i]; r.MaxBatchedTokens != want[0] || r.MaxNumSeqs != want[1] {
			t.Errorf("record %s: budget %d, %d seqs; want its own %d, %d", pts[i].rec.ID, r.MaxBatchedTokens, r.MaxNumSeqs, want[0], want[1])
		}
	}
}

// Records of one group that differ on chunked prefill are each scheduled
// as they ran: the budget and prefill-first decided together, per record.
func TestPointsKeepTheirOwnScheduling(t *testing.T) {
	base := results.Record{Source: results.Source{File: "v0.md", Format: "markdown"},
		System:   results.System{GPU: "MI300X", GPUCount: 8, Model: "meta-llama/Llama-3.1-405B-Instruct", Engine: "vllm-0.6.3", Topology: mustTopo(t, "1xTP8")},
		Workload: results.Workload{ISL: 2000, OSL: 100, ISLMax: 2000, OSLMax: 100, Load: model.Closed(16), NumPrompts: 160},
		Metrics:  map[string]float64{model.RequestThroughput: 1, model.MeanTTFT: 3000, model.MeanTPOT: 60}, Completed: 160}
	pts, reps, warn := groupReplicas(t, base, map[string]string{"enable-chunked-prefill": "False"}, map[string]string{})
	if len(pts) != 2 || len(warn) != 0 {
		t.Fatalf("warnings %q; want both records in one group, no warning", warn)
	}
	v1 := map[string]string{"VLLM_USE_V1": "1"}
	if _, _, warn := groupReplicas(t, base, map[string]string{"enable-chunked-prefill": "False"}, map[string]string{}, v1); len(warn) != 1 || !strings.Contains(warn[0], "different vLLM engine generations") {
		t.Errorf("records of V0 and V1 in one group: warnings %q, want one naming the generations", warn)
	}
	for i, want := range []struct {
		budget int
		first  bool
	}{{131072, true}, {2048, false}} {
		if r := reps[i]; r.MaxBatchedTokens != want.budget || r.PrefillFirst != want.first {
			t.Errorf("record %s: budget %d, prefill first %v; want %d, %v", pts[i].rec.ID, r.MaxBatchedTokens, r.PrefillFirst, want.budget, want.first)
		}
	}
}

// groupReplicas makes one record of base per settings map (IDs in order),
// groups them as the fit does, and returns the group's points, the
// replicas each point is simulated with (over the group's own settings)
// and preparePoints' warnings.
func groupReplicas(t *testing.T, base results.Record, settings ...map[string]string) ([]*point, []sim.PoolConfig, []string) {
	t.Helper()
	var recs []results.Record
	for i, st := range settings {
		r := base
		r.ID, r.Source.Line, r.System.Settings = base.Source.File+":"+itoa(i+1), i+1, st
		recs = append(recs, r)
	}
	groups, keys, warn := preparePoints(recs, 0)
	if len(keys) != 1 {
		return nil, nil, warn
	}
	pts := groups[keys[0]]
	e := env{gpu: mustGPU(t, base.System.GPU), llm: mustLLM(t, model.ShortName(base.System.Model)), settings: settingsFrom(base.System.Engine, pts), engine: engine.Parse(base.System.Engine)}
	var reps []sim.PoolConfig
	for _, p := range pts {
		cfg, err := simConfig(e, params{coeffs: map[string]model.Coeffs{RoleAggregated: truthDecode}}, p)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, cfg.Replicas)
	}
	return pts, reps, warn
}

// A workload that names a dataset is simulated with its lengths scaled to
// the workload's means, not every request at them, and the fit's memory
// check sees its longest request; an unknown name keeps the means.
func TestWorkloadDatasetLengths(t *testing.T) {
	w := workload.Workload{Load: model.Closed(8), ISL: 217, OSL: 202, NumPrompts: 100, Dataset: "sharegpt"}
	d := Deployment{}.WithWorkload(w)
	in, out := d.Config.Input, d.Config.Output
	if in.Kind != "empirical" || out.Kind != "empirical" {
		t.Fatalf("input %s, output %s; want empirical", in.Kind, out.Kind)
	}
	mean := func(v []int) float64 {
		s := 0
		for _, x := range v {
			s += x
		}
		return float64(s) / float64(len(v))
	}
	if math.Abs(mean(in.Values)/217-1) > 0.01 || math.Abs(mean(out.Values)/202-1) > 0.01 {
		t.Errorf("means %.1f and %.1f, want 217 and 202", mean(in.Values), mean(out.Values))
	}
	if li, lo := w.Longest(); li != slices.Max(in.Values) || lo != slices.Max(out.Values) || li+lo < 4*(217+202) {
		t.Errorf("longest %d+%d, want %d+%d (a ShareGPT tail several times the means)", li, lo, slices.Max(in.Values), slices.Max(out.Values))
	}
	if si, so := w.Shortest(); si != slices.Min(in.Values) || so != slices.Min(out.Values) || si > 217/10 {
		t.Errorf("shortest %d+%d, want %d+%d (ShareGPT's shortest prompts are a few tokens)", si, so, slices.Min(in.Values), slices.Min(out.Values))
	}
	w.Dataset = "sonnet"
	if si, so := w.Shortest(); si != 217 || so != workload.BenchmarkOutput(202, 0).Min {
		t.Errorf("without a dataset: shortest %d+%d, want the prompt and the bottom of the outputs' spread (%d)", si, so, workload.BenchmarkOutput(202, 0).Min)
	}
	d = Deployment{}.WithWorkload(w)
	if !reflect.DeepEqual(d.Config.Input, sim.Fixed(217)) || d.Config.Output.Kind != "uniform" {
		t.Errorf("unknown dataset: input %+v, output %+v; want the means", d.Config.Input, d.Config.Output)
	}
}

// A workload whose outputs ran to exactly their length is simulated so, not
// spread: its clients then finish together and are prefilled in waves.
func TestWorkloadExactOutput(t *testing.T) {
	w := workload.Workload{Load: model.Closed(4), ISL: 3200, OSL: 800, NumPrompts: 40, ExactOutput: true}
	d := Deployment{}.WithWorkload(w)
	if !reflect.DeepEqual(d.Config.Input, sim.Fixed(3200)) || !reflect.DeepEqual(d.Config.Output, sim.Fixed(800)) {
		t.Errorf("input %+v, output %+v; want both fixed", d.Config.Input, d.Config.Output)
	}
	if li, lo := w.Longest(); li != 3200 || lo != 800 {
		t.Errorf("longest %d+%d, want 3200+800", li, lo)
	}
	w.ExactOutput = false
	if d := (Deployment{}).WithWorkload(w); d.Config.Output.Kind != "uniform" {
		t.Errorf("without ExactOutput: output %+v; want the ±20%% spread", d.Config.Output)
	}
}

// Re-simulating a fitted record (RecordTarget, then Configure) repeats the
// fit's own simulation of it, KV cache included, when the group's records
// stated different KV caches; the group itself keeps none, since a stated
// cache holds for its record's worker shape only.
func TestRecordTargetRepeatsTheFitsKVCache(t *testing.T) {
	if testing.Short() {
		t.Skip("fits a small group")
	}
	topo := mustTopo(t, "1xTP1")
	var recs []results.Record
	for i, kv := range []string{"2", "2", "8", "8"} {
		c := 32 * (1 + i%2)
		recs = append(recs, results.Record{ID: "kvfit:" + itoa(i+1),
			Source: results.Source{File: "kvfit.md", Line: i + 1, Format: "markdown"},
			System: results.System{GPU: "A100-80GB", GPUCount: 1, Model: "Qwen/Qwen2-7B-Instruct", Engine: "vllm-0.10.1.1", Topology: topo,
				Settings: map[string]string{"kv-cache-memory-gib": kv}},
			Workload: results.Workload{ISL: 2000, OSL: 200, ISLMax: 2000, OSLMax: 200, Load: model.Closed(c), NumPrompts: 10 * c},
			Metrics: map[string]float64{model.RequestThroughput: 2 + float64(i), model.MeanTTFT: 2000 - 300*float64(i),
				model.MeanTPOT: 40 - 4*float64(i)},
			Completed: 10 * c})
	}
	prof, _, err := Fit(t.Context(), recs, Options{MaxEvals: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.Groups) != 1 {
		t.Fatalf("%d groups, want 1", len(prof.Groups))
	}
	g := prof.Groups[0]
	if g.Settings.KVCacheGiB != 0 {
		t.Errorf("group KV cache %v GiB, want none (each record keeps its own)", g.Settings.KVCacheGiB)
	}
	groups, keys, _ := preparePoints(recs, 0)
	pts := groups[keys[0]]
	for _, res := range g.Residuals {
		var p *point
		for _, q := range pts {
			if q.rec.ID == res.Record {
				p = q
			}
		}
		tg, _, err := prof.RecordTarget(p.rec, Override{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := prof.Configure(tg)
		if err != nil {
			t.Fatal(err)
		}
		sim, err := d.Simulate(t.Context(), p.workload())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{model.MeanTTFT, model.RequestThroughput} {
			if got, want := sim.Metrics[m], res.Fitted[m]; math.Abs(got/want-1) > 1e-3 { // residuals keep 4 significant digits
				t.Errorf("record %s: re-simulated %s %.4g, the fit's %.4g", res.Record, m, got, want)
			}
		}
	}
}

// Fits names the request and the worker that cannot hold it, by the
// simulator's own rules: a prefill worker counts the prompt in tokens, a
// decode worker or replica the prompt and output in whole blocks.
func TestDeploymentFits(t *testing.T) {
	agg := Deployment{GPU: mustGPU(t, "H20"), Topology: mustTopo(t, "2xTP1"),
		Config: sim.Config{Replicas: sim.PoolConfig{KVCapacity: 1000, BlockSize: 16}}}
	disagg := Deployment{GPU: mustGPU(t, "H20"), Topology: mustTopo(t, "prefill 2xTP1 + decode 1xTP2"),
		Config: sim.Config{Prefill: sim.PoolConfig{KVCapacity: 900}, Decode: sim.PoolConfig{KVCapacity: 1000, BlockSize: 16}}}
	for _, c := range []struct {
		d    Deployment
		w    workload.Workload
		want string
	}{
		{agg, workload.Workload{ISL: 800, OSL: 8}, ""},
		{agg, workload.Workload{ISL: 800, OSL: 200}, "a 800-token prompt with a 240-token output (the top of the outputs' ±20% spread around OSL 200) does not fit the KV cache of a replica 1xTP1 on H20 (1000 tokens)"},
		{agg, workload.Workload{ISL: 990, OSL: 8}, "a 990+8-token request does not fit the KV cache of a replica 1xTP1"}, // 998 tokens, 63 blocks of 16 > 62
		{disagg, workload.Workload{ISL: 899, OSL: 8}, ""},
		{disagg, workload.Workload{ISL: 901, OSL: 8}, "of a prefill worker 1xTP1 on H20 (900 tokens)"},
		{disagg, workload.Workload{ISL: 100, OSL: 5, Dataset: "sharegpt"}, ""}, // longest prompt 463 tokens
		{disagg, workload.Workload{ISL: 300, OSL: 5, Dataset: "sharegpt"}, "the longest prompt plus the longest output of the sharegpt dataset scaled to ISL 300 / OSL 5"},
	} {
		err := c.d.Fits(c.w)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s, %+v: err %v, want %q", c.d.Topology, c.w, err, c.want)
		}
	}
}

// A record predicted with another engine keeps what it states and takes
// that engine's defaults for the rest, not its own engine's: vLLM 0.9 on
// an H20 defaults to 1024 sequences, 0.8.4 (by device name) to 256.
func TestRecordTargetOtherEngineDefaults(t *testing.T) {
	rec := results.Record{ID: "x:1", Source: results.Source{File: "x.md", Line: 1},
		System:   results.System{GPU: "H20", GPUCount: 4, Model: "Qwen/Qwen3-32B", Engine: "vllm-0.9.0.1", Topology: mustTopo(t, "1xTP4")},
		Workload: results.Workload{ISL: 1000, OSL: 100, Load: model.Closed(8), NumPrompts: 80}}
	for _, tt := range []struct {
		engine   string
		settings map[string]string
		seqs     int
	}{
		{"", nil, 1024},
		{"vllm-0.8.4", nil, 256},
		{"vllm-0.8.4", map[string]string{"max-num-seqs": "512"}, 512},
	} {
		r := rec
		r.System.Settings = tt.settings
		tg, _, err := testProfile().RecordTarget(&r, Override{Engine: tt.engine})
		if err != nil {
			t.Fatal(err)
		}
		if tg.Record == nil || tg.Record.MaxNumSeqs != tt.seqs {
			t.Errorf("engine %q, settings %v: record settings %+v, want %d sequences", tt.engine, tt.settings, tg.Record, tt.seqs)
		}
	}
}

// A stepMemo prices every step as its StepCost does, to the bit: dense and
// MoE, latent attention, tensor and pipeline parallel, eager and with CUDA
// graphs, mixed, pure-prefill and pure-decode steps, entries met again
// and entries evicted by others, and across runs: one memo reset to each
// cost in turn, then to each again while it holds that cost's entries.
func TestStepMemoIsStepTime(t *testing.T) {
	graphs := []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
	coeffs := model.Coeffs{Overhead: 0.004, PerSeq: 3e-5, Weight: 1.3, Compute: 1.7, Attn: 2.2, KV: 1.9, Comm: 1.4}
	costs := []model.StepCost{
		model.NewStepCost(mustGPU(t, "H20"), mustLLM(t, "Qwen3-32B"), model.Pool{Count: 1, TP: 4}, coeffs, graphs),
		model.NewStepCost(mustGPU(t, "H20"), mustLLM(t, "Llama-3.1-8B-Instruct"), model.Pool{Count: 1, TP: 1}, model.PriorCoeffs(true), nil),
		model.NewStepCost(mustGPU(t, "H20"), mustLLM(t, "Qwen/Qwen3-30B-A3B"), model.Pool{Count: 1, TP: 2, PP: 2}, coeffs, graphs),
		model.NewStepCost(mustGPU(t, "H20"), mustLLM(t, "deepseek-ai/DeepSeek-R1"), model.Pool{Count: 1, TP: 8}, model.PriorCoeffs(false), graphs[:6]),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m := new(stepMemo)
	for ci, c := range slices.Concat(costs, costs, costs[3:]) {
		m.reset(c)
		for i := range 20000 {
			// Few distinct pairs at first (entries met again), then many (evictions).
			span := 8
			if i >= 10000 {
				span = 4096
			}
			s := model.Step{PrefillTokens: rng.IntN(span), DecodeSeqs: rng.IntN(span / 2), PrefillAttn: rng.Float64() * 1e7, DecodeKV: rng.Float64() * 1e6}
			if s.PrefillTokens > 0 {
				s.PrefillSeqs = 1 + rng.IntN(4)
			}
			if got, want := m.StepTime(s), c.StepTime(s); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("cost %d, step %+v: memo %v, StepTime %v", ci, s, got, want)
			}
			b, k := m.DecodeAffine(s.DecodeSeqs)
			if wb, wk := c.DecodeAffine(s.DecodeSeqs); b != wb || k != wk {
				t.Fatalf("cost %d: DecodeAffine(%d) = %v, %v; want %v, %v", ci, s.DecodeSeqs, b, k, wb, wk)
			}
		}
	}
}

// sameCost tells costs apart by their bits: a memo of one is not reused
// for the other (stepMemo.reset).
func TestSameCostBits(t *testing.T) {
	a := model.NewStepCost(mustGPU(t, "H20"), mustLLM(t, "Qwen3-32B"), model.Pool{Count: 1, TP: 4}, model.PriorCoeffs(true), []int{1, 2, 4})
	b := a
	b.GraphSizes = slices.Clone(a.GraphSizes)
	if !sameCost(&a, &b) {
		t.Errorf("a cost and its copy differ")
	}
	b.Coeffs.Comm = math.Copysign(0, -1)
	a.Coeffs.Comm = 0
	if sameCost(&a, &b) {
		t.Errorf("costs with comm 0 and −0 are the same")
	}
	b = a
	b.GraphSizes = []int{1, 2, 8}
	if sameCost(&a, &b) {
		t.Errorf("costs with other graph sizes are the same")
	}
	b = a
	b.Roofline.Act.Kernels[2]++
	if sameCost(&a, &b) {
		t.Errorf("costs with other activation traffic are the same")
	}
}
