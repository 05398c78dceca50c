package calibrate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/workload"
)

// A record's stated placement becomes the number of nodes its workers span.
func TestSettingsReadPlacement(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]string
		want     int
	}{
		{"unstated", nil, 0},
		{"two nodes", map[string]string{"placement": "2 nodes"}, 2},
		{"one node", map[string]string{"placement": "1 node"}, 1},
		{"network named after the count", map[string]string{"placement": "2 nodes, InfiniBand"}, 2},
		{"network in brackets", map[string]string{"placement": "4 nodes (RoCE)"}, 4},
		{"bare count", map[string]string{"Placement": " 4 "}, 4},
		{"role-prefixed", map[string]string{"decode.placement": "2 nodes"}, 2},
		{"not a count", map[string]string{"placement": "same rack"}, 0},
		{"prose is not read", map[string]string{"placement": "2 (prefill workers span both nodes)"}, 0},
		{"a deployment's node count is not a worker's", map[string]string{"nodes": "2"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results.Record{ID: "x:1", System: results.System{GPU: "A100-40GB", Model: "Qwen/Qwen2-7B-Instruct", Settings: tt.settings}}
			p := &point{rec: r, topo: model.Aggregated(model.Pool{Count: 1, TP: 2})}
			if got := settingsFrom("vllm-0.10.1.1", []*point{p}).Nodes; got != tt.want {
				t.Errorf("settingsFrom: Nodes = %d, want %d", got, tt.want)
			}
			if got := recordNodes(r); got != tt.want {
				t.Errorf("recordNodes = %d, want %d", got, tt.want)
			}
		})
	}
}

// A record that states vLLM's --async-scheduling (any spelling of the key)
// sets Settings.AsyncScheduling, which prices the group's prior overheads
// as async V1 where the flag was an opt-in.
func TestSettingsReadAsyncScheduling(t *testing.T) {
	for _, tt := range []struct {
		settings map[string]string
		want     string // "on", "off" or "" (not stated)
	}{
		{nil, ""},
		{map[string]string{"async-scheduling": "true"}, "on"},
		{map[string]string{"async_scheduling": "True"}, "on"},
		{map[string]string{"Async-Scheduling": "false"}, "off"},
		{map[string]string{"no-async-scheduling": "true"}, "off"},
		{map[string]string{"async-scheduling": "maybe"}, ""},
	} {
		r := &results.Record{ID: "x:1", System: results.System{GPU: "A100-80GB", Model: "Qwen/Qwen3-14B", Settings: tt.settings}}
		p := &point{rec: r, topo: model.Aggregated(model.Pool{Count: 1, TP: 1})}
		got := ""
		if a := settingsFrom("vllm-0.11.0", []*point{p}).AsyncScheduling; a != nil {
			got = engine.PrefixSetting(*a)
		}
		if got != tt.want {
			t.Errorf("%v: AsyncScheduling = %q, want %q", tt.settings, got, tt.want)
		}
	}
	pool := model.Pool{Count: 1, TP: 1}
	on, off := true, false
	sync, _ := resolveCoeffs(nil, sourceExact, RoleAggregated, pool, "vllm-0.11.0", engine.Settings{AsyncScheduling: &off}, false)
	async, der := resolveCoeffs(nil, sourceExact, RoleAggregated, pool, "vllm-0.11.0", engine.Settings{AsyncScheduling: &on}, false)
	if want := engine.OverheadWith("vllm-0.11.0", engine.Settings{AsyncScheduling: &on}).StepS; async.coeffs.Overhead != want || !(async.coeffs.Overhead < sync.coeffs.Overhead) {
		t.Errorf("prior overhead with async scheduling %g s (synchronous %g s), want the async row's %g s", async.coeffs.Overhead, sync.coeffs.Overhead, want)
	}
	if !strings.Contains(der.From, "V1 with async scheduling") {
		t.Errorf("derivation %q does not name the async V1 row", der.From)
	}
}

// Configure prices a target's all-reduces on the node network when its
// workers span nodes, whichever way the target says so, and never because
// the calibrated group it draws on ran across nodes.
func TestConfigurePricesPlacement(t *testing.T) {
	prof := testProfile()
	cross := prof.Groups[2].Settings // vllm-0.9.0.1 on H20: pretend it was measured across two nodes
	cross.Nodes = 2
	prof.Groups[2].Settings = cross
	twoNodes := engine.Settings{Nodes: 2}
	tests := []struct {
		name string
		t    Target
		link string
	}{
		{"one node, though the group ran across two", Target{}, "NVLink4"},
		{"Target.Nodes", Target{Nodes: 2}, model.NodeNetwork},
		{"stated settings", Target{Settings: &twoNodes}, model.NodeNetwork},
		{"Target.Nodes over settings", Target{Nodes: 1, Settings: &twoNodes}, "NVLink4"},
	}
	configure := func(t *testing.T, tg Target) Deployment {
		t.Helper()
		tg.GPU, tg.LLM, tg.Engine, tg.Topology = mustGPU(t, "H20"), mustLLM(t, "Qwen3-32B"), engine.Parse("vllm-0.9.0.1"), mustTopo(t, "2xTP4")
		d, err := prof.Configure(tg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	decode := model.Step{DecodeSeqs: 16, DecodeKV: 16 * 1000}
	oneNode := configure(t, Target{Nodes: 1}).Config.Replicas.Cost.StepTime(decode)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := configure(t, tt.t)
			if d.GPU.TPLink(1).Name != tt.link {
				t.Fatalf("link %s, want %s", d.GPU.TPLink(1).Name, tt.link)
			}
			if got := d.Settings.Nodes > 1; got != (tt.link == model.NodeNetwork) {
				t.Errorf("Deployment.Settings.Nodes = %d with link %s", d.Settings.Nodes, tt.link)
			}
			step := d.Config.Replicas.Cost.StepTime(decode)
			if cross := tt.link == model.NodeNetwork; cross != (step > 1.5*oneNode) {
				t.Errorf("decode step %.1f ms, one node %.1f ms: want much slower only across nodes", 1000*step, 1000*oneNode)
			}
		})
	}
}

// Profiles written before placement was recorded have no "nodes" key and
// price one node; a cross-node group's placement survives a round trip.
func TestProfilePlacementJSON(t *testing.T) {
	b, err := testProfile().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"nodes"`) {
		t.Fatalf("a one-node profile writes a nodes key:\n%s", b)
	}
	p, err := ParseProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range p.Groups {
		if g.Settings.Nodes != 0 {
			t.Errorf("group %s: Nodes = %d, want 0 (one node)", g.Engine, g.Settings.Nodes)
		}
	}
	d, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("vllm-0.9.0.1"), Topology: mustTopo(t, "1xTP4")})
	if err != nil {
		t.Fatal(err)
	}
	if d.GPU.Link().Name != "NVLink4" {
		t.Errorf("old profile priced on %s, want NVLink4", d.GPU.Link().Name)
	}
	p.Groups[0].Settings.Nodes = 2
	b, _ = p.Marshal()
	q, err := ParseProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	if q.Groups[0].Settings.Nodes != 2 {
		t.Errorf("round trip lost the placement: %+v", q.Groups[0].Settings)
	}
}

// RecordTarget carries a record's placement to the deployment predict
// simulates, unless another topology is asked for.
func TestRecordTargetPlacement(t *testing.T) {
	prof := testProfile()
	r := &results.Record{ID: "r:1", System: results.System{GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "vllm-0.9.0.1",
		Topology: mustTopo(t, "1xTP4"), Settings: map[string]string{"placement": "2 nodes"}}}
	tg, _, err := prof.RecordTarget(r, Override{})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Nodes != 2 {
		t.Errorf("Nodes = %d, want the record's 2", tg.Nodes)
	}
	tg, _, err = prof.RecordTarget(r, Override{Topology: mustTopo(t, "2xTP2")})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Nodes != 0 {
		t.Errorf("another topology asked for: Nodes = %d, want 0", tg.Nodes)
	}
}

// A fitted comm multiplier cannot tell a step's all-reduce latency from
// the rest of its fixed per-step time, so it is that deployment's own: a
// pooled price takes the interconnect catalog's figures (comm 1) whatever
// the groups fitted, on one node or across nodes (where the roofline
// itself prices the node network).
func TestPooledCommIsTheCatalogs(t *testing.T) {
	p := pooledProfile()
	for i := range p.Groups {
		e := &p.Groups[i].Entries[0]
		e.Coeffs.Comm, e.TP, e.Fitted = 1.2, 2, []string{"comm"}
	}
	p.Groups[1].Entries[0].Coeffs.Comm = 6
	p.Groups[1].Settings.Nodes = 2
	gpu, llm := mustGPU(t, "H100-SXM"), mustLLM(t, "Llama-3.1-8B-Instruct")
	pool := model.Pool{Count: 1, TP: 2}
	for _, g := range []model.GPU{gpu, gpu.AcrossNodes(2)} {
		pc, ok := p.pooledCoeffs(g, llm, pool, nil, "vllm-0.10.1", engine.Settings{}, RoleAggregated, sourceOtherGPU, false)
		if !ok {
			t.Fatal("no pooled price")
		}
		if pc.coeffs.Comm != 1 {
			t.Errorf("%d nodes: comm %v, want 1 (the catalog's figures)", max(g.Nodes, 1), pc.coeffs.Comm)
		}
		if pc.groups != 3 {
			t.Errorf("%d groups pooled, want 3", pc.groups)
		}
		if !strings.Contains(pc.from, "catalog's cited latencies") {
			t.Errorf("derivation %q does not say where the collectives' price came from", pc.from)
		}
	}
}

// crossNodeRecords simulates a vLLM sweep of Qwen2-7B at TP2 on two
// A100-40GB servers (the truth priced on the node network) and returns it
// as measured records that state placement (nil: they do not say).
func crossNodeRecords(t *testing.T, truth model.Coeffs, placement map[string]string) []results.Record {
	t.Helper()
	const label = "vllm-0.10.1.1"
	g, m := mustGPU(t, "A100-40GB"), mustLLM(t, "Qwen2-7B-Instruct")
	s := defaultSettings(engine.Parse(label), g, m.MaxContext)
	s.Nodes = 2
	e := env{gpu: g.AcrossNodes(2), llm: m, settings: s, engine: engine.Parse(label)}
	prm := params{coeffs: map[string]model.Coeffs{RoleAggregated: truth}, frontend: 0.01}
	topo := model.Aggregated(model.Pool{Count: 1, TP: 2})
	var recs []results.Record
	for _, sh := range [][2]int{{1000, 200}, {3000, 100}} {
		for _, c := range []int{1, 4, 16, 32} {
			p := &point{topo: topo, w: workload.Workload{Load: model.Closed(c), ISL: sh[0], OSL: sh[1], NumPrompts: max(100, 5*c)}}
			mt := simulateMetrics(t, e, prm, p, model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL, model.OutputThroughput)
			recs = append(recs, results.Record{
				ID:     "xnode:" + strings.Join([]string{itoa(sh[0]), itoa(c)}, ":"),
				Source: results.Source{File: "synthetic-xnode.md", Section: "TP2 over two nodes", Line: len(recs) + 1, Format: "markdown"},
				System: results.System{GPU: g.Name, GPUCount: 2, Model: m.Name, Engine: label, Topology: topo, Settings: placement},
				Workload: results.Workload{ISL: float64(sh[0]), OSL: float64(sh[1]), ISLMax: sh[0], OSLMax: sh[1],
					Load: model.Closed(c), NumPrompts: max(100, 5*c)},
				// No completed count: the simulated outputs were spread around
				// OSL, and a counted mean equal to the cap would say they ran
				// to exactly OSL (workload.Workload.ExactOutput).
				Metrics: mt,
			})
		}
	}
	return recs
}

func itoa(n int) string { return strconv.Itoa(n) }

// Records measured across two nodes and saying so are fitted on the node
// network: the comm and GEMM multipliers come out near the truth's and the
// records are reproduced. The same records without their placement are
// fitted on NVLink, which needs a GEMM or comm multiplier several times the
// truth's to explain them: costs that pooled pricing would carry elsewhere.
func TestFitCrossNodeRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("fits a synthetic sweep")
	}
	truth := model.PriorCoeffsFor(engine.OverheadFor("vllm-0.10.1.1"), false)
	truth.Weight, truth.Compute, truth.Comm = 1.3, 1.5, 1.4
	fitted := map[bool]model.Coeffs{}
	for _, stated := range []bool{true, false} {
		placement := map[string]string{"placement": "2 nodes"}
		if !stated {
			placement = nil
		}
		prof, rep, err := Fit(t.Context(), crossNodeRecords(t, truth, placement), Options{MaxEvals: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(prof.Groups) != 1 || len(prof.Groups[0].Entries) == 0 {
			t.Fatalf("groups %+v, want one fitted group", prof.Groups)
		}
		gr := prof.Groups[0]
		if want := map[bool]int{true: 2, false: 0}[stated]; gr.Settings.Nodes != want {
			t.Errorf("placement stated %v: group Nodes = %d, want %d", stated, gr.Settings.Nodes, want)
		}
		fitted[stated] = gr.Entries[0].Coeffs
		t.Logf("placement stated %v: %+v", stated, gr.Entries[0].Coeffs)
		if !stated {
			continue
		}
		for _, s := range rep.Series {
			if a := s.APE[model.MeanTPOT]; a.Median > 8 {
				t.Errorf("%g:%g: median APE of TPOT = %.1f%%, want ≤ 8%%", s.ISL, s.OSL, a.Median)
			}
			if a := s.APE[model.MeanTTFT]; a.Median > 8 {
				t.Errorf("%g:%g: median APE of TTFT = %.1f%%, want ≤ 8%%", s.ISL, s.OSL, a.Median)
			}
		}
	}
	near := func(got, want float64) bool { return got > want/1.5 && got < want*1.5 }
	if c := fitted[true]; !near(c.Comm, truth.Comm) || !near(c.Compute, truth.Compute) {
		t.Errorf("placement stated: comm %.2f and GEMM %.2f multipliers, want near the truth's %.2f and %.2f", c.Comm, c.Compute, truth.Comm, truth.Compute)
	}
	if c := fitted[false]; c.Comm < 2*truth.Comm && c.Compute < 2*truth.Compute {
		t.Errorf("placement not stated: comm %.2f and GEMM %.2f multipliers, want one driven far above the truth's (NVLink cannot carry the network's time)", c.Comm, c.Compute)
	}
}

// A placement that names no count, and a group whose records state
// different placements, are said in the fit's warnings.
func TestPlacementWarnings(t *testing.T) {
	rec := func(id, placement string) results.Record {
		return results.Record{ID: id, Source: results.Source{File: "p.md", Line: 1, Format: "markdown"},
			System: results.System{GPU: "A100-40GB", GPUCount: 2, Model: "Qwen/Qwen2-7B-Instruct", Engine: "vllm-0.10.1.1",
				Topology: mustTopo(t, "1xTP2"), Settings: map[string]string{"placement": placement}},
			Workload:  results.Workload{ISL: 1000, OSL: 100, Load: model.Closed(1), NumPrompts: 10},
			Metrics:   map[string]float64{model.RequestThroughput: 1, model.MeanTTFT: 100},
			Completed: 10}
	}
	tests := []struct {
		name string
		recs []results.Record
		want []string
	}{
		{"agreeing", []results.Record{rec("a", "2 nodes"), rec("b", "2 nodes, RoCE")}, nil},
		{"no count", []results.Record{rec("a", "same rack")}, []string{`record a: placement "same rack" names no count of nodes`}},
		{"disagreeing", []results.Record{rec("a", "1 node"), rec("b", "2 nodes")},
			[]string{"records state workers on [1 2] nodes; every record is priced on the widest, 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, warn := preparePoints(tt.recs, 0)
			got := strings.Join(warn, "\n")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("warnings %q, want one containing %q", got, w)
				}
			}
			if tt.want == nil && (strings.Contains(got, "placement") || strings.Contains(got, "nodes")) {
				t.Errorf("warnings %q, want none about placement", got)
			}
		})
	}
}

// SGLang's and TensorRT-LLM's own names for the batch limits, the memory
// share and the scheduling policy are read like vLLM's, over each
// engine's defaults (engine.Defaults).
func TestSettingsReadOtherEngines(t *testing.T) {
	for _, tt := range []struct {
		engine   string
		settings map[string]string
		want     engine.Settings
	}{
		{"sglang-0.5.5.post1", nil, engine.Settings{MaxNumSeqs: 4096, MaxNumBatchedTokens: 8192, GPUMemoryUtilization: 0.835, PrefillFirst: true}},
		{"sglang-0.5.5.post1", map[string]string{"max-running-requests": "512", "chunked-prefill-size": "4096", "mem-fraction-static": "0.8", "enable-mixed-chunk": "true"},
			engine.Settings{MaxNumSeqs: 512, MaxNumBatchedTokens: 4096, GPUMemoryUtilization: 0.8}},
		{"trtllm-1.2.0rc1", nil, engine.Settings{MaxNumSeqs: 2048, MaxNumBatchedTokens: 8192, ReserveOutput: true}},
		{"trtllm-1.2.0rc1", map[string]string{"max_batch_size": "256", "max_num_tokens": "16384", "capacity_scheduler_policy": "MAX_UTILIZATION"},
			engine.Settings{MaxNumSeqs: 256, MaxNumBatchedTokens: 16384}},
		{"vllm-0.11.0", map[string]string{"max-num-seqs": "128"}, engine.Settings{MaxNumSeqs: 128, MaxNumBatchedTokens: 8192}},
	} {
		r := &results.Record{ID: "x:1", System: results.System{GPU: "H100-SXM", Model: "Qwen/Qwen3-14B", Settings: tt.settings}}
		p := &point{rec: r, topo: model.Aggregated(model.Pool{Count: 1, TP: 1})}
		s := settingsFrom(tt.engine, []*point{p})
		got := engine.Settings{MaxNumSeqs: s.MaxNumSeqs, MaxNumBatchedTokens: s.MaxNumBatchedTokens, GPUMemoryUtilization: s.GPUMemoryUtilization,
			PrefillFirst: s.PrefillFirst, ReserveOutput: s.ReserveOutput}
		if got != tt.want {
			t.Errorf("%s %v: %+v, want %+v", tt.engine, tt.settings, got, tt.want)
		}
	}
}

// A vLLM V0 record that states a max-model-len of 32K or less runs without
// chunked prefill: a budget of the whole length, and prefills first.
func TestSettingsV0MaxModelLen(t *testing.T) {
	for _, tt := range []struct {
		settings map[string]string
		budget   int
		first    bool
	}{
		{nil, 2048, false}, // Llama-3.1's 128K context: chunked
		{map[string]string{"max-model-len": "8192"}, 8192, true},
		{map[string]string{"max-model-len": "8192", "max-num-batched-tokens": "16384"}, 16384, true},
		{map[string]string{"max-model-len": "8192", "max-num-batched-tokens": "4096"}, 4096, false}, // a budget below it: chunked prefill
	} {
		r := &results.Record{ID: "x:1", System: results.System{GPU: "H100-SXM", Model: "meta-llama/Llama-3.1-8B-Instruct", Settings: tt.settings}}
		p := &point{rec: r, topo: model.Aggregated(model.Pool{Count: 1, TP: 1})}
		if s := settingsFrom("vllm-0.6.3", []*point{p}); s.MaxNumBatchedTokens != tt.budget || s.PrefillFirst != tt.first {
			t.Errorf("%v: budget %d, prefill first %v; want %d, %v", tt.settings, s.MaxNumBatchedTokens, s.PrefillFirst, tt.budget, tt.first)
		}
	}
}

// A record that names its vLLM engine generation is scheduled as that
// generation: KubeAI's vLLM 0.7.2 with VLLM_USE_V1=1 mixes prompts into
// the decodes' steps; a 0.9 release run with VLLM_USE_V1=0 runs prefills
// first (no chunked prefill at 8K) and delays its output.
func TestSettingsVLLMGeneration(t *testing.T) {
	for _, tt := range []struct {
		engine         string
		settings       map[string]string
		first, delayed bool
	}{
		{"vllm-0.7.2", map[string]string{"max-model-len": "16384", "max-num-batched-tokens": "16384"}, true, true},
		{"vllm-0.7.2", map[string]string{"VLLM_USE_V1": "1", "max-model-len": "16384", "max-num-batched-tokens": "16384"}, false, false},
		{"vllm-0.9.0", map[string]string{"VLLM_USE_V1": "0", "max-model-len": "8192"}, true, true},
		{"vllm-0.9.0", map[string]string{"vllm-engine": "v0"}, false, true}, // Llama-3.1's 128K context: chunked
		{"vllm-0.9.0", nil, false, false},
	} {
		r := &results.Record{ID: "x:1", System: results.System{GPU: "H100-SXM", Model: "meta-llama/Llama-3.1-8B-Instruct", Settings: tt.settings}}
		p := &point{rec: r, topo: model.Aggregated(model.Pool{Count: 1, TP: 1})}
		if s := settingsFrom(tt.engine, []*point{p}); s.PrefillFirst != tt.first || s.DelayedOutput != tt.delayed {
			t.Errorf("%s %v: prefill first %v, delayed output %v; want %v, %v", tt.engine, tt.settings, s.PrefillFirst, s.DelayedOutput, tt.first, tt.delayed)
		}
	}
}

// A record's engine generation takes that generation's defaults, what it
// says of chunked prefill decides V0's scheduling and budget, and a stated
// disable-async-output-proc wins however the keys are spelled.
func TestSettingsVLLMStatedScheduling(t *testing.T) {
	for _, tt := range []struct {
		engine, gpu, llm string
		settings         map[string]string
		budget, seqs     int
		first, delayed   bool
	}{
		{"vllm-0.9.0", "L4", "meta-llama/Llama-3.1-8B-Instruct", map[string]string{"VLLM_USE_V1": "0", "max-model-len": "8192"}, 8192, 256, true, true},
		{"vllm-0.7.2", "L4", "meta-llama/Llama-3.1-8B-Instruct", map[string]string{"VLLM_USE_V1": "1", "max-model-len": "16384"}, 2048, 256, false, false},
		{"vllm-0.6.3", "MI300X", "meta-llama/Llama-3.1-405B-Instruct", map[string]string{"enable-chunked-prefill": "False"}, 131072, 256, true, true},
		{"vllm-0.6.3", "MI300X", "meta-llama/Llama-3.1-405B-Instruct", nil, 2048, 256, false, true},
		{"vllm-0.6.3", "H100-SXM", "meta-llama/Llama-3.1-8B-Instruct", map[string]string{"enable-chunked-prefill": "true", "max-model-len": "8192"}, 2048, 256, false, true},
		{"vllm-0.7.3", "H100-SXM", "meta-llama/Llama-3.1-8B-Instruct", map[string]string{"vllm-engine": "v0", "disable-async-output-proc": "true"}, 2048, 256, false, false},
		{"vllm-0.9.0", "H100-SXM", "meta-llama/Llama-3.1-8B-Instruct", map[string]string{"vllm_use_v1": "0", "disable_async_output_proc": "true"}, 2048, 256, false, false},
		{"vllm-0.9.0", "H100-SXM", "meta-llama/Llama-3.1-8B-Instruct", map[string]string{"enable-chunked-prefill": "false", "max-model-len": "16384"}, 8192, 1024, false, false}, // V1 always chunks
		{"vllm-0.9.0", "H100-SXM", "meta-llama/Llama-3.1-8B-Instruct", map[string]string{"VLLM_USE_V1": "1", "vllm-engine": "v0"}, 2048, 256, false, true},                       // the engine's own name wins
		{"vllm", "H100-SXM", "meta-llama/Llama-3.1-8B-Instruct", map[string]string{"VLLM_USE_V1": "false", "max-model-len": "8192"}, 8192, 256, true, true},
	} {
		r := &results.Record{ID: "x:1", System: results.System{GPU: tt.gpu, Model: tt.llm, Settings: tt.settings}}
		p := &point{rec: r, topo: model.Aggregated(model.Pool{Count: 1, TP: 1})}
		s := settingsFrom(tt.engine, []*point{p})
		if s.MaxNumBatchedTokens != tt.budget || s.MaxNumSeqs != tt.seqs || s.PrefillFirst != tt.first || s.DelayedOutput != tt.delayed {
			t.Errorf("%s on %s %v: budget %d, %d seqs, prefill first %v, delayed %v; want %d, %d, %v, %v",
				tt.engine, tt.gpu, tt.settings, s.MaxNumBatchedTokens, s.MaxNumSeqs, s.PrefillFirst, s.DelayedOutput, tt.budget, tt.seqs, tt.first, tt.delayed)
		}
	}
}

// SGLang's data-parallel attention: --dp N, or one group per TP rank in
// the releases that set it so themselves (0.4.0–0.4.3, whatever --dp
// said); a later release without --dp runs plain TP attention, and
// another engine family has no such setting. The chunked-prefill budget
// stays the worker's. A group whose records disagree states none (in
// either order); each record keeps its own.
func TestSettingsReadDPAttention(t *testing.T) {
	on := map[string]string{"enable-dp-attention": "true"}
	for _, tt := range []struct {
		engine   string
		settings map[string]string
		dp       int
	}{
		{"sglang-0.4.3.post2", on, 8},
		{"sglang-0.4.3.post2", map[string]string{"enable-dp-attention": "true", "dp": "2"}, 8},
		{"sglang-0.5.3", on, 0},
		{"sglang-0.5.7", map[string]string{"enable_dp_attention": "True", "dp": "8"}, 8},
		{"sglang-0.5.7", map[string]string{"enable-dp-attention": "1", "dp-size": "2"}, 2},
		{"sglang-0.5.7", map[string]string{"dp": "8"}, 0},
		{"sglang-0.5.7", map[string]string{"decode.enable-dp-attention": "true", "prefill.enable-dp-attention": "false", "dp": "4"}, 4},
		{"sglang-0.5.7", map[string]string{"decode.enable-dp-attention": "true", "enable-dp-attention": "false", "dp": "4"}, 0},
		{"sglang-0.4.3.post2", map[string]string{"enable-dp-attention": "false"}, 0},
		{"vllm-0.11.0", map[string]string{"enable-dp-attention": "true", "dp": "8"}, 0},
	} {
		r := &results.Record{ID: "x:1", System: results.System{GPU: "H200", Model: "deepseek-ai/DeepSeek-R1", Engine: tt.engine, Settings: tt.settings}}
		topo := model.Aggregated(model.Pool{Count: 1, TP: 8})
		for i := 0; i < 20; i++ { // map order must not matter
			s := settingsFrom(tt.engine, []*point{{rec: r, topo: topo}})
			rs := recordSettings(tt.engine, r, topo)
			if s.DPAttention != tt.dp || rs.DPAttention != tt.dp || s.MaxNumBatchedTokens != 8192 {
				t.Fatalf("%s %v: group dp %d, record dp %d, budget %d; want dp %d, budget 8192",
					tt.engine, tt.settings, s.DPAttention, rs.DPAttention, s.MaxNumBatchedTokens, tt.dp)
			}
		}
	}
	// Simulated as another engine, a record keeps its own release's rule
	// where the family has the setting.
	old := &results.Record{ID: "x:1", System: results.System{Engine: "sglang-0.4.3.post2", Settings: on}}
	topo := model.Aggregated(model.Pool{Count: 1, TP: 8})
	if rs := recordSettings("sglang-0.5.7", old, topo); rs.DPAttention != 8 {
		t.Errorf("an SGLang 0.4.3 record simulated as 0.5.7: dp %d, want its own 8", rs.DPAttention)
	}
	if rs := recordSettings("vllm-0.11.0", old, topo); rs.DPAttention != 0 {
		t.Errorf("an SGLang record simulated as vLLM: dp %d, want 0", rs.DPAttention)
	}
	// GPUStack's H200 page runs some blocks with DP attention and some without.
	with := &point{rec: &results.Record{ID: "x:1", System: results.System{Settings: map[string]string{"enable-dp-attention": "true", "dp": "8"}}}, topo: topo}
	without := &point{rec: &results.Record{ID: "x:2"}, topo: topo}
	for _, pts := range [][]*point{{without, with}, {with, without}} {
		if s := settingsFrom("sglang-0.5.3", pts); s.DPAttention != 0 {
			t.Errorf("mixed group: dp %d, want 0 (each record priced with its own)", s.DPAttention)
		}
	}
	e := env{llm: mustLLM(t, "DeepSeek-R1"), settings: settingsFrom("sglang-0.5.3", []*point{without, with})}
	with.stated = recordSettings("sglang-0.5.3", with.rec, topo)
	if got := e.forPoint(with).llm.AttentionDP; got != 8 {
		t.Errorf("forPoint: the record's attention DP %d, want 8", got)
	}
}
