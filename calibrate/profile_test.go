package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capsim/capsim/internal/catalogtest"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// testProfile is a small hand-made profile: Dynamo with prefill at TP1 and
// TP4 and decode at TP4 on H20, and two vLLM versions aggregated at TP4.
func testProfile() *Profile {
	sig := map[string]float64{}
	for _, n := range model.CoeffNames {
		sig[n] = 0.1
	}
	pre := model.PriorCoeffs(true)
	pre.Compute = 1.3
	dec := model.PriorCoeffs(false)
	dec.Overhead = 0.008
	agg := model.PriorCoeffs(false)
	entry := func(role string, tp int, c model.Coeffs) Entry {
		return Entry{Role: role, TP: tp, PP: 1, Source: SourceFitted, Coeffs: c, RelSigma: sig, Fitted: []string{"compute"}, Records: []string{"x"}, Eager: role == RolePrefill}
	}
	return &Profile{Schema: SchemaV1, Groups: []Group{
		{GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "dynamo-0.3.0", Settings: defaultSettings(engine.Parse("dynamo"), model.GPU{}, 0),
			Transfer: TransferFit{LatencyS: 0.01, PerTokenS: 1e-5, Source: SourceFitted, RelSigma: 0.2},
			Entries:  []Entry{entry(RolePrefill, 1, pre), entry(RolePrefill, 4, pre), entry(RoleDecode, 4, dec)}, Records: []string{"a", "b"}},
		{GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "vllm-0.8.4", Settings: defaultSettings(engine.Parse("vllm"), model.GPU{}, 0),
			Entries: []Entry{entry(RoleAggregated, 4, agg)}, Records: []string{"c"}},
		{GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "vllm-0.9.0.1", Settings: defaultSettings(engine.Parse("vllm"), model.GPU{}, 0),
			Entries: []Entry{entry(RoleAggregated, 4, agg)}, Records: []string{"d"}},
	}, Calibrated: []SeriesInfo{{Key: "k", GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "vllm-0.8.4", ISL: 1000, OSL: 1000, LoadKind: model.ClosedLoop, Loads: []float64{1, 8}}}}
}

func mustGPU(t testing.TB, name string) model.GPU { t.Helper(); return catalogtest.GPU(t, name) }

func mustLLM(t testing.TB, name string) model.LLM { t.Helper(); return catalogtest.LLM(t, name) }

func mustTopo(t *testing.T, s string) model.Topology {
	t.Helper()
	tp, err := model.ParseTopology(s)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestConfigureDerivations(t *testing.T) {
	p := testProfile()
	tests := []struct {
		name       string
		target     Target
		wantEngine string
		want       []string // "role source" per pool
		wantFrom   string   // substring of the first derivation's From
	}{
		{"fitted disaggregated", Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Topology: mustTopo(t, "3P(TP4) 1D(TP4)")},
			"dynamo-0.3.0", []string{"prefill fitted", "decode fitted"}, "prefill TP4"},
		{"other TP is derived", Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Topology: mustTopo(t, "prefill 6xTP2 + decode 1xTP8")},
			"dynamo-0.3.0", []string{"prefill derived", "decode derived"}, "prefill TP1"},
		{"aggregated defaults to newest vLLM", Target{GPU: mustGPU(t, "h20"), LLM: mustLLM(t, "qwen/qwen3-32b"), Topology: mustTopo(t, "4xTP4")},
			"vllm-0.9.0.1", []string{"aggregated fitted"}, "vllm-0.9.0.1"},
		{"engine prefix", Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("VLLM-0.8"), Topology: mustTopo(t, "2xTP4")},
			"vllm-0.8.4", []string{"aggregated fitted"}, "vllm-0.8.4"},
		{"other GPU is derived", Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("dynamo"), Topology: mustTopo(t, "3P(TP2) 1D(TP2)")},
			"dynamo-0.3.0", []string{"prefill derived", "decode derived"}, "another GPU"},
		{"other model is derived", Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("vllm"), Topology: mustTopo(t, "1xTP1")},
			"vllm-0.9.0.1", []string{"aggregated derived"}, "another model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := p.Configure(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if d.Engine.Label != tt.wantEngine {
				t.Errorf("engine %q, want %q", d.Engine, tt.wantEngine)
			}
			var got []string
			for _, dv := range d.Derived {
				got = append(got, dv.Role+" "+dv.Source)
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("derivations %v, want %v", got, tt.want)
			}
			if !strings.Contains(d.Derived[0].From, tt.wantFrom) {
				t.Errorf("From %q, want it to mention %q", d.Derived[0].From, tt.wantFrom)
			}
			pools := []sim.PoolConfig{d.Config.Replicas}
			if tt.target.Topology.Disaggregated() {
				pools = []sim.PoolConfig{d.Config.Prefill, d.Config.Decode}
			}
			for _, pc := range pools {
				if pc.Workers == 0 || pc.Cost == nil || pc.KVCapacity <= 0 {
					t.Errorf("pool not filled: %+v", pc)
				}
			}
		})
	}
}

func TestConfigureKVAndSettings(t *testing.T) {
	d, err := testProfile().Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Topology: mustTopo(t, "3P(TP4) 1D(TP4)")})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := model.LookupGPU("H20")
	m, _ := model.LookupLLM("Qwen3-32B")
	mem, _ := model.WorkerMemory(g, m, model.Pool{Count: 1, TP: 4}, model.MemoryOptions{})
	if d.Config.Decode.KVCapacity != mem.KVTokens {
		t.Errorf("decode KV %d, want %d from WorkerMemory", d.Config.Decode.KVCapacity, mem.KVTokens)
	}
	if d.Config.Decode.BlockSize != 128 || d.Config.Prefill.MaxBatchedTokens != 4096 || d.MaxModelLen != 4096 {
		t.Errorf("Dynamo settings not carried: block %d, mbt %d, max model len %d", d.Config.Decode.BlockSize, d.Config.Prefill.MaxBatchedTokens, d.MaxModelLen)
	}
	if d.Config.PrefillRouter != sim.SharedQueue || d.Config.Router != sim.RoundRobin {
		t.Errorf("routers %q / %q", d.Config.Router, d.Config.PrefillRouter)
	}
	if d.Config.Transfer.Latency != 0.01 {
		t.Errorf("transfer latency %v, want the fitted 0.01", d.Config.Transfer.Latency)
	}
	// Prefill workers run eager: no CUDA-graph padding.
	if sc := d.Config.Prefill.Cost.(model.StepCost); len(sc.GraphSizes) != 0 {
		t.Errorf("prefill graph sizes %v, want none (eager)", sc.GraphSizes)
	}
	if sc := d.Config.Decode.Cost.(model.StepCost); sc.GraphSizes[len(sc.GraphSizes)-1] != 128 {
		t.Errorf("decode graphs up to %d, want 128", sc.GraphSizes[len(sc.GraphSizes)-1])
	}
}

// Configure prices a deployment with data-parallel attention as the fit
// does: the model's KV cache and weights with the stated degree.
func TestConfigureDPAttention(t *testing.T) {
	g, _ := model.LookupGPU("H200")
	m, _ := model.LookupLLM("deepseek-ai/DeepSeek-R1")
	for _, dp := range []int{0, 8} {
		s := defaultSettings(engine.Parse("sglang-0.5.7"), g, m.MaxContext)
		s.DPAttention = dp
		d, err := testProfile().Configure(Target{GPU: mustGPU(t, "H200"), LLM: mustLLM(t, m.Name), Engine: engine.Parse("sglang-0.5.7"), Topology: mustTopo(t, "1xTP8"), Settings: &s})
		if err != nil {
			t.Fatal(err)
		}
		mem, err := model.WorkerMemory(g, m.WithAttentionDP(dp), model.Pool{Count: 1, TP: 8}, memoryOptions(engine.Parse("sglang-0.5.7"), s))
		if err != nil || d.Config.Replicas.KVCapacity != mem.KVTokens || d.LLM.AttentionDP != dp {
			t.Errorf("dp %d: KV capacity %d, model's DP %d; want %d tokens (%v) and DP %d", dp, d.Config.Replicas.KVCapacity, d.LLM.AttentionDP, mem.KVTokens, err, dp)
		}
	}
}

// A calibrated group's data-parallel attention prices its deployment; a
// record that ran without it is priced without it.
func TestConfigureGroupDPAttention(t *testing.T) {
	g, _ := model.LookupGPU("H200")
	m, _ := model.LookupLLM("deepseek-ai/DeepSeek-R1")
	s := defaultSettings(engine.Parse("sglang-0.4.3.post2"), g, m.MaxContext)
	s.DPAttention = 8
	c := model.PriorCoeffsFor(engine.OverheadFor("sglang-0.4.3.post2"), false)
	p := &Profile{Schema: SchemaV1, Groups: []Group{{GPU: g.Name, Model: m.Name, Engine: "sglang-0.4.3.post2", Settings: s,
		Entries: []Entry{{Role: RoleAggregated, TP: 8, PP: 1, Source: SourceFitted, Coeffs: c}}}}}
	for _, tt := range []struct {
		topology string
		record   *engine.Settings
		want     int
	}{{"1xTP8", nil, 8}, {"1xTP8", &engine.Settings{}, 0}, {"1xTP8", &engine.Settings{DPAttention: 8}, 8}} {
		topo := mustTopo(t, tt.topology)
		d, err := p.Configure(Target{GPU: mustGPU(t, g.Name), LLM: mustLLM(t, m.Name), Engine: engine.Parse("sglang-0.4.3.post2"), Topology: topo, Record: tt.record})
		if err != nil {
			t.Fatal(err)
		}
		mem, _ := model.WorkerMemory(g, m.WithAttentionDP(tt.want), topo.Replicas, memoryOptions(d.Engine, d.Settings))
		if d.LLM.AttentionDP != tt.want || d.Config.Replicas.KVCapacity != mem.KVTokens {
			t.Errorf("record %+v: DP %d, KV %d; want DP %d, KV %d", tt.record, d.LLM.AttentionDP, d.Config.Replicas.KVCapacity, tt.want, mem.KVTokens)
		}
	}
}

// sglangR1Label is sglangR1Profile's engine, a label whose ".post2" the
// version numbers drop.
const sglangR1Label = "sglang-0.4.3.post2"

// sglangR1Profile is one group of DeepSeek-R1 on an H200 TP8 worker of
// sglangR1Label at the roofline prior.
func sglangR1Profile(t *testing.T) (*Profile, model.GPU, model.LLM) {
	g, m := mustGPU(t, "H200"), mustLLM(t, "deepseek-ai/DeepSeek-R1")
	c := model.PriorCoeffsFor(engine.OverheadFor(sglangR1Label), false)
	return &Profile{Schema: SchemaV1, Groups: []Group{{GPU: g.Name, Model: m.Name, Engine: sglangR1Label, Settings: defaultSettings(engine.Parse(sglangR1Label), g, m.MaxContext),
		Entries: []Entry{{Role: RoleAggregated, TP: 8, PP: 1, Source: SourceFitted, Coeffs: c}}}}}, g, m
}

// Resolve parses the engine once: the Target and its Deployment carry the
// profile's label as written (a ".post2" suffix that the version numbers
// drop included) with its family and version, for callers to read.
func TestResolveParsesEngineOnce(t *testing.T) {
	p, _, _ := sglangR1Profile(t)
	tg, err := p.Resolve("H200", "DeepSeek-R1", "sglang-0.4", mustTopo(t, "1xTP8"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Configure(tg)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []engine.ID{tg.Engine, d.Engine} {
		if e.Label != sglangR1Label || e.Family != engine.SGLang || !slices.Equal(e.Version, []int{0, 4, 3}) {
			t.Errorf("engine %+v, want %s parsed as sglang [0 4 3]", e, sglangR1Label)
		}
	}
}

// validate --dp-attention: Override.DPAttention prices a record's
// deployment with that many attention groups, over what the record states.
func TestRecordTargetDPAttention(t *testing.T) {
	p, g, m := sglangR1Profile(t)
	r := &results.Record{ID: "r:1", System: results.System{GPU: g.Name, Model: m.Name, Engine: sglangR1Label, Topology: mustTopo(t, "1xTP8")}}
	for _, tt := range []struct{ over, want int }{{0, 1}, {4, 4}} {
		tg, _, err := p.RecordTarget(r, Override{DPAttention: tt.over})
		if err != nil {
			t.Fatal(err)
		}
		d, err := p.Configure(tg)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.LLM.AttentionDPAt(8); got != tt.want {
			t.Errorf("override %d: %d attention groups, want %d", tt.over, got, tt.want)
		}
	}
}

// SGLang 0.4.0–0.4.3 ran an attention group per TP rank whatever --dp
// said: a TP8 group's eight groups are four at TP4, and a later release's
// stated --dp 8 does not divide TP4 (attention split by TP).
func TestConfigureAutoDPAttentionAtOtherTP(t *testing.T) {
	g, _ := model.LookupGPU("H200")
	m, _ := model.LookupLLM("Qwen/Qwen3-30B-A3B")
	for _, tt := range []struct {
		engine string
		want   int
	}{{"sglang-0.4.3.post2", 4}, {"sglang-0.5.6", 1}} {
		s := defaultSettings(engine.Parse(tt.engine), g, m.MaxContext)
		s.DPAttention = 8
		c := model.PriorCoeffsFor(engine.OverheadFor(tt.engine), false)
		p := &Profile{Schema: SchemaV1, Groups: []Group{{GPU: g.Name, Model: m.Name, Engine: tt.engine, Settings: s,
			Entries: []Entry{{Role: RoleAggregated, TP: 8, PP: 1, Source: SourceFitted, Coeffs: c}}}}}
		d, err := p.Configure(Target{GPU: mustGPU(t, g.Name), LLM: mustLLM(t, m.Name), Engine: engine.Parse(tt.engine), Topology: mustTopo(t, "2xTP4")})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.LLM.AttentionDPAt(4); got != tt.want {
			t.Errorf("%s at TP4 from a TP8 DP8 group: %d attention groups, want %d", tt.engine, got, tt.want)
		}
	}
}

func TestConfigureBand(t *testing.T) {
	p := testProfile()
	step := model.Step{DecodeSeqs: 16, DecodeKV: 16000}
	bandSigma := func(topology string) float64 {
		var times []float64
		var sigma float64
		for _, band := range []float64{-1, 0, 1} {
			d, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Topology: mustTopo(t, topology), Band: band})
			if err != nil {
				t.Fatal(err)
			}
			// The measured kernel floor is not a fitted cost: the band leaves it.
			c := d.Config.Replicas.Cost.(model.StepCost)
			times = append(times, c.StepTime(step)-c.KernelFloor())
			sigma = d.Derived[0].RelSigma
		}
		if !(times[0] < times[1] && times[1] < times[2]) {
			t.Errorf("%s: step times at bands −1, 0, +1 = %v, want increasing", topology, times)
		}
		// The band moves every step's priced part by exactly the pool's reported uncertainty.
		if r := times[2] / times[1]; math.Abs(r-math.Exp(sigma)) > 1e-9 {
			t.Errorf("%s: +1σ ratio %v, want e^%v (the pool's RelSigma)", topology, r, sigma)
		}
		if r := times[1] / times[0]; math.Abs(r-math.Exp(sigma)) > 1e-9 {
			t.Errorf("%s: −1σ ratio %v, want e^%v", topology, 1/r, -sigma)
		}
		return sigma
	}
	// Every coefficient has rel σ 0.1: terms combine in quadrature, so a step is known to within 10%.
	fitted := bandSigma("4xTP4")
	if fitted <= 0 || fitted > 0.1+1e-12 {
		t.Errorf("fitted rel σ %v, want within (0, 0.1]", fitted)
	}
	// Carried to another TP, the step gains the systematic sigmaOtherTP in quadrature.
	if derived := bandSigma("4xTP2"); derived <= fitted || derived < sigmaOtherTP {
		t.Errorf("derived TP2 rel σ %v, want above the fitted %v and at least %v", derived, fitted, sigmaOtherTP)
	}
}

func TestConfigureErrors(t *testing.T) {
	p := testProfile()
	tests := []struct {
		name   string
		target Target
		want   string
	}{
		{"no GPU", Target{LLM: mustLLM(t, "Qwen3-32B"), Topology: mustTopo(t, "1xTP1")}, "calibrate: no GPU named (known: "},
		{"no model", Target{GPU: mustGPU(t, "H20"), Topology: mustTopo(t, "1xTP1")}, "calibrate: no model named (known: "},
		{"does not fit", Target{GPU: mustGPU(t, "L4"), LLM: mustLLM(t, "Llama-3.1-70B-Instruct"), Topology: mustTopo(t, "1xTP1")}, "does not fit on L4"},
		{"no such engine", Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("tgi"), Topology: mustTopo(t, "1xTP4")},
			`calibrate: no engine matching "tgi" for H20 / Qwen3-32B (have: dynamo-0.3.0, vllm-0.8.4, vllm-0.9.0.1)`},
		{"empty topology", Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B")}, "topology is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Configure(tt.target)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestResolveLooksUpOnce: names are looked up where they enter, and the
// Target carries the catalog entries (Configure no longer takes names).
func TestResolveLooksUpOnce(t *testing.T) {
	p := testProfile()
	tg, err := p.Resolve("h20", "qwen/qwen3-32b", "", mustTopo(t, "4xTP4"))
	if err != nil {
		t.Fatal(err)
	}
	if tg.GPU.Name != "H20" || tg.LLM.Name != "Qwen/Qwen3-32B" || tg.GPU.MemoryGB == 0 || tg.LLM.Layers == 0 {
		t.Errorf("Resolve gave GPU %+v, model %+v; want the catalog's H20 and Qwen/Qwen3-32B", tg.GPU.Name, tg.LLM.Name)
	}
	if _, err := p.Resolve("Z100", "Qwen3-32B", "", mustTopo(t, "1xTP1")); err == nil || !strings.Contains(err.Error(), `unknown GPU "Z100"`) {
		t.Errorf("Resolve(Z100): %v", err)
	}
}

func TestSourceKindString(t *testing.T) {
	seen := map[string]sourceKind{}
	for k := sourceExact; k <= sourceNone; k++ {
		s := k.String()
		if strings.HasPrefix(s, "sourceKind(") {
			t.Errorf("%d has no words", int(k))
		}
		if o, ok := seen[s]; ok {
			t.Errorf("%d and %d both read %q", int(o), int(k), s)
		}
		seen[s] = k
	}
	if got := sourceOtherGPUAndModel.String(); got != "another GPU and model" {
		t.Errorf("sourceOtherGPUAndModel reads %q", got)
	}
}

func TestConfigurePriorOnly(t *testing.T) {
	p := &Profile{Schema: SchemaV1}
	d, err := p.Configure(Target{GPU: mustGPU(t, "A100-80GB"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Topology: mustTopo(t, "prefill 2xTP1 + decode 1xTP2")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Engine.Label != "dynamo" || d.Derived[0].Source != SourcePrior || d.Derived[1].Source != SourcePrior {
		t.Errorf("engine %q derivations %+v, want dynamo from the prior", d.Engine, d.Derived)
	}
	if d.Derived[0].RelSigma < 0.3 {
		t.Errorf("prior rel sigma %v, want a wide band", d.Derived[0].RelSigma)
	}
}

func TestLookups(t *testing.T) {
	p := testProfile()
	if got := strings.Join(p.Engines("H20", "Qwen3-32B"), ","); got != "dynamo-0.3.0,vllm-0.8.4,vllm-0.9.0.1" {
		t.Errorf("Engines = %s", got)
	}
	if got := p.Models("H20"); len(got) != 1 || got[0] != "Qwen/Qwen3-32B" {
		t.Errorf("Models = %v", got)
	}
	if got := p.Models("L40S"); len(got) != 0 {
		t.Errorf("Models(L40S) = %v, want none", got)
	}
	if got := p.Series("H20", "Qwen3-32B", "vllm-0.8.4"); len(got) != 1 {
		t.Errorf("Series = %v", got)
	}
	for _, tt := range []struct {
		prefix string
		disagg bool
		want   string
	}{{"", true, "dynamo-0.3.0"}, {"", false, "vllm-0.9.0.1"}, {"vllm", true, "vllm-0.9.0.1"}, {"DYN", false, "dynamo-0.3.0"}} {
		got, err := p.ResolveEngine("H20", "Qwen3-32B", tt.prefix, tt.disagg)
		if err != nil || got.Label != tt.want {
			t.Errorf("ResolveEngine(%q, %v) = %q, %v; want %q", tt.prefix, tt.disagg, got, err, tt.want)
		}
	}
}

// TestResolveEngineElsewhere: an engine a GPU and model were never
// calibrated with, though they were with another, resolves as it would
// for a GPU and model with no groups at all (the newest matching label
// anywhere), not to an error; an engine the profile has nowhere still
// errs, naming what the GPU and model have.
func TestResolveEngineElsewhere(t *testing.T) {
	p := testProfile()
	// addCopy adds a copy of the group of engine label from, changed by edit.
	addCopy := func(from string, edit func(*Group)) {
		i := slices.IndexFunc(p.Groups, func(g Group) bool { return g.Engine == from })
		g := p.Groups[i]
		edit(&g)
		p.Groups = append(p.Groups, g)
	}
	addCopy("dynamo-0.3.0", func(g *Group) { g.GPU = "B200" })
	for _, prefix := range []string{"vllm", "vllm-0.8"} {
		want := map[string]string{"vllm": "vllm-0.9.0.1", "vllm-0.8": "vllm-0.8.4"}[prefix]
		if got, err := p.ResolveEngine("B200", "Qwen3-32B", prefix, false); err != nil || got.Label != want {
			t.Errorf("ResolveEngine(B200, %q) = %q, %v; want %q", prefix, got.Label, err, want)
		}
	}
	// An exact label elsewhere wins over newer versions it prefixes, as it does locally.
	addCopy("vllm-0.9.0.1", func(g *Group) { g.Engine = "vllm-0.9" })
	if got, err := p.ResolveEngine("B200", "Qwen3-32B", "vllm-0.9", false); err != nil || got.Label != "vllm-0.9" {
		t.Errorf("ResolveEngine(B200, vllm-0.9) = %q, %v; want the exact label elsewhere", got.Label, err)
	}
	if _, err := p.ResolveEngine("B200", "Qwen3-32B", "tgi", false); err == nil || !strings.Contains(err.Error(), `no engine matching "tgi" for B200 / Qwen3-32B (have: dynamo-0.3.0)`) {
		t.Errorf("ResolveEngine(B200, tgi) error %v", err)
	}
}

func TestParseProfile(t *testing.T) {
	b, err := testProfile().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := p.Marshal()
	if string(b) != string(b2) {
		t.Errorf("round trip changed the profile")
	}
	bad := []struct {
		name, text, want string
	}{
		{"schema", `{"schema":"capsim.profile/v0","groups":[],"series":[]}`, `schema "capsim.profile/v0", want "capsim.profile/v1"`},
		{"unknown field", `{"schema":"capsim.profile/v1","groups":[],"series":[],"extra":1}`, `unknown field "extra"`},
		{"truncated", `{"schema":`, "calibrate: profile: line 1: truncated JSON: the file ends before the document does"},
		{"empty", " \n", "calibrate: profile: the file is empty"},
		{"syntax", "{\"schema\": \"capsim.profile/v1\",\n \"groups\": [}", "calibrate: profile: line 2: invalid JSON: invalid character '}' looking for beginning of value"},
		{"type", "{\"schema\": \"capsim.profile/v1\",\n \"groups\": 3}", "calibrate: profile: line 2: field groups: number where a list was expected"},
		{"trailing", "{\"schema\": \"capsim.profile/v1\", \"groups\": []}\ngarbage", "calibrate: profile: line 2: more after the document's closing brace"},
		{"negative coefficient", strings.Replace(string(b), `"attn": 2,`, `"attn": -2,`, 1), "coeffs.attn is -2"},
		{"faster than peak", strings.Replace(string(b), `"attn": 2,`, `"attn": 0.5,`, 1), "cost coefficient attn is 0.5: faster than the hardware's peak"},
		{"bad role", strings.Replace(string(b), `"role": "decode"`, `"role": "encode"`, 1), `unknown role "encode"`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProfile([]byte(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func ExampleProfile_Configure() {
	p := testProfile()
	topo, _ := model.ParseTopology("prefill 6xTP2 + decode 1xTP4")
	gpu, _ := model.LookupGPU("H20")
	llm, _ := model.LookupLLM("Qwen3-32B")
	d, err := p.Configure(Target{GPU: gpu, LLM: llm, Topology: topo})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Engine)
	for _, dv := range d.Derived {
		fmt.Printf("%s %s: %s from %s\n", dv.Role, dv.Pool, dv.Source, dv.From)
	}
	// Output:
	// dynamo-0.3.0
	// prefill 6xTP2: derived from dynamo-0.3.0 on H20 / Qwen3-32B prefill TP1; unexplained: 1.0 ms/step beyond the engine table's Dynamo with vLLM V0 workers row, this deployment's own
	// decode 1xTP4: fitted from dynamo-0.3.0 on H20 / Qwen3-32B decode TP4; unexplained: 6.0 ms/step beyond the engine table's Dynamo with vLLM V0 workers row, this deployment's own
}

func TestConfigureCarriesFrontendLatency(t *testing.T) {
	p := testProfile()
	p.Groups[2].Frontend = &FrontendFit{LatencyS: 0.05, Source: SourceFitted, RelSigma: 0.2}
	d, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("vllm-0.9"), Topology: mustTopo(t, "4xTP4")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Config.FrontendLatency != 0.05 {
		t.Fatalf("FrontendLatency %v, want the fitted 0.05", d.Config.FrontendLatency)
	}
	hi, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("vllm-0.9"), Topology: mustTopo(t, "4xTP4"), Band: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.05 * math.Exp(0.2); math.Abs(hi.Config.FrontendLatency-want) > 1e-12 {
		t.Errorf("pessimistic band: FrontendLatency %v, want %v", hi.Config.FrontendLatency, want)
	}
	// Disaggregated deployments carry their per-request latency in the KV transfer instead.
	dd, _ := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Topology: mustTopo(t, "3P(TP4) 1D(TP4)")})
	if dd.Config.FrontendLatency != 0 {
		t.Errorf("disaggregated FrontendLatency %v, want 0", dd.Config.FrontendLatency)
	}
}

// TestAssumedGroup: a group fitted on a source that named no GPU or model
// prices its assumed pair only when the target asks for it, and an exact
// engine label wins over the newer versions it prefixes.
func TestAssumedGroup(t *testing.T) {
	p := testProfile()
	c := model.PriorCoeffs(false)
	c.Overhead = 0.05 // far from the prior, to tell which group priced the step
	p.Groups = append(p.Groups, Group{Engine: "vllm", Settings: defaultSettings(engine.Parse("vllm"), model.GPU{}, 0),
		Assumed: &Assumption{GPU: "H20", Model: "meta-llama/Llama-3.1-8B-Instruct"},
		Entries: []Entry{{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: c, Records: []string{"e"}}}, Records: []string{"e"}})
	eng, err := p.ResolveEngine("H20", "Llama-3.1-8B-Instruct", "vllm", false)
	if err != nil || eng.Label != "vllm" {
		t.Fatalf("ResolveEngine(vllm) = %q, %v; want the exact label", eng, err)
	}
	step := func(assumed bool) float64 {
		d, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: eng, Topology: mustTopo(t, "1xTP1"), Assumed: assumed})
		if err != nil {
			t.Fatal(err)
		}
		return d.Config.Replicas.Cost.StepTime(model.Step{DecodeSeqs: 1})
	}
	if with, without := step(true), step(false); with < 0.05 || without >= 0.05 {
		t.Errorf("decode step with the assumed group %.4f s, without %.4f s; want only the first to carry its 50 ms overhead", with, without)
	}
}

// Pipeline parallelism: a lone request gains nothing (its step passes every
// stage), a loaded worker keeps PP microbatches in flight and serves more.
func TestPipelineThroughput(t *testing.T) {
	p := testProfile()
	run := func(topo string, c int) map[string]float64 {
		d, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("vllm-0.8.4"), Topology: mustTopo(t, topo)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := d.Simulate(context.Background(), workload.Workload{Load: model.Closed(c), ISL: 1000, OSL: 200, NumPrompts: 10 * c, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res.Metrics
	}
	tp1, pp1 := run("1xTP4", 1), run("1xTP4PP2", 1)
	if r := pp1[model.MeanTPOT] / tp1[model.MeanTPOT]; r < 1 || r > 1.1 {
		t.Errorf("lone request TPOT TP4PP2/TP4 = %.3f, want 1–1.1 (hand-offs only)", r)
	}
	tpN, ppN := run("1xTP4", 96), run("1xTP4PP2", 96)
	t.Logf("TPOT at c=1: TP4 %.1f ms, TP4PP2 %.1f ms; req/s at c=96: TP4 %.2f, TP4PP2 %.2f",
		tp1[model.MeanTPOT], pp1[model.MeanTPOT], tpN[model.RequestThroughput], ppN[model.RequestThroughput])
	if r := ppN[model.RequestThroughput] / tpN[model.RequestThroughput]; r < 1.2 {
		t.Errorf("throughput at concurrency 96 TP4PP2/TP4 = %.2f, want ≥ 1.2 (two microbatches in flight)", r)
	}
}

// An engine's scheduling policy reaches the simulator's replicas: SGLang
// runs prompts first, TensorRT-LLM reserves each request's output, vLLM
// does neither; each with its own batch limits and page size.
func TestConfigureEnginePolicies(t *testing.T) {
	for _, tt := range []struct {
		engine                string
		prefillFirst, reserve bool
		seqs, budget, block   int
	}{
		{"sglang-0.5.5.post1", true, false, 4096, 8192, 1},
		{"trtllm-1.2.0rc1", false, true, 2048, 8192, 16},
		{"vllm-0.11.0", false, false, 1024, 8192, 16},
	} {
		d, err := testProfile().Configure(Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Qwen3-14B"), Engine: engine.Parse(tt.engine), Topology: mustTopo(t, "1xTP1")})
		if err != nil {
			t.Fatal(err)
		}
		if from := d.Derived[0].From; strings.HasPrefix(from, "none") {
			t.Errorf("%s: derivation %q names no reason", tt.engine, from)
		}
		r := d.Config.Replicas
		if r.PrefillFirst != tt.prefillFirst || r.ReserveOutput != tt.reserve || r.MaxNumSeqs != tt.seqs || r.MaxBatchedTokens != tt.budget || r.BlockSize != tt.block {
			t.Errorf("%s: replicas prefill first %v, reserve %v, %d seqs, budget %d, block %d; want %v, %v, %d, %d, %d",
				tt.engine, r.PrefillFirst, r.ReserveOutput, r.MaxNumSeqs, r.MaxBatchedTokens, r.BlockSize, tt.prefillFirst, tt.reserve, tt.seqs, tt.budget, tt.block)
		}
	}
}

// A deployment's KV cache is sized by its engine's rule from the memory CUDA
// reports (model.GPU.CUDAMemoryBytes): vLLM less the
// peak of its profiling run for the limits it runs with (1024 sequences
// and 8192 tokens for vLLM 0.10 on H100, so the sampler's peak is four
// times 256 sequences'), SGLang and TensorRT-LLM less a fixed 2 GB; and
// WithBatchLimits resizes it with the limits.
func TestConfigureSizesKVByTheEnginesRule(t *testing.T) {
	h100, qwen := mustGPU(t, "H100-SXM"), mustLLM(t, "Qwen3-32B")
	perToken := qwen.KVBytesPerToken(1, qwen.KVElemBytes())
	tokens := func(utilization, reserve float64) int {
		return int(math.Floor((utilization*h100.CUDAMemoryBytes() - qwen.StoredWeightBytes() - reserve) / perToken))
	}
	p := testProfile()
	for _, c := range []struct {
		engine string
		want   int
	}{
		{"vllm-0.10.1", tokens(0.9, 1024*151936*model.SamplerBytesPerLogit)},
		{"trtllm-1.2.0rc1", tokens(0.9, 2e9)},
		{"sglang-0.5.5.post1", tokens(0.835, 2e9)}, // mem-fraction-static for 81,559 MiB (engine.Defaults)
	} {
		d, err := p.Configure(Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse(c.engine), Topology: mustTopo(t, "1xTP1")})
		if err != nil {
			t.Fatalf("%s: %v", c.engine, err)
		}
		if got := d.Config.Replicas.KVCapacity; math.Abs(float64(got-c.want)) > 2 {
			t.Errorf("%s: KV capacity %d tokens, want %d", c.engine, got, c.want)
		}
	}
	d, err := p.Configure(Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("vllm-0.10.1"), Topology: mustTopo(t, "1xTP1")})
	if err != nil {
		t.Fatal(err)
	}
	fewer, err := d.WithBatchLimits(RoleAggregated, 768, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fewer.Config.Replicas.KVCapacity, tokens(0.9, 768*151936*model.SamplerBytesPerLogit); math.Abs(float64(got-want)) > 2 || fewer.Config.Replicas.MaxNumSeqs != 768 {
		t.Errorf("at 768 sequences: %d tokens and %d sequences, want %d and 768", got, fewer.Config.Replicas.MaxNumSeqs, want)
	}
	// At 256 the forward pass over 8192 tokens is the larger peak.
	if got, want := mustLimits(t, d, 256).Config.Replicas.KVCapacity, tokens(0.9, 8192*(3*25600+4*5120)*2); math.Abs(float64(got-want)) > 2 {
		t.Errorf("at 256 sequences: %d tokens, want %d", got, want)
	}
	if _, err := d.WithBatchLimits("replicas", 512, 0); err == nil {
		t.Error(`WithBatchLimits("replicas"): want an error naming the unknown role`)
	}
}

// A sliding-window model's windowed layers take their KV as their
// engine does: vLLM from the one block pool, each running request holding
// a window and a block (gpt-oss: 128 + 16 tokens); SGLang from a pool of
// its own beside the full cache, sized as 0.8 of its slots; a model
// without windows neither.
func TestConfigureSlidingWindowKV(t *testing.T) {
	p := testProfile()
	for _, c := range []struct {
		engine, model string
		window        int
		pool          float64
	}{
		{"vllm-0.10.2", "openai/gpt-oss-120b", 144, 0},
		{"sglang-0.5.4.post2", "openai/gpt-oss-120b", 0, 0.8},
		{"vllm-0.10.2", "Qwen3-32B", 0, 0},
	} {
		d, err := p.Configure(Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, c.model), Engine: engine.Parse(c.engine), Topology: mustTopo(t, "1xTP2")})
		if err != nil {
			t.Fatalf("%s %s: %v", c.engine, c.model, err)
		}
		if got := d.Config.Replicas.WindowTokens; got != c.window || d.Settings.WindowPool != c.pool {
			t.Errorf("%s %s: window tokens %d, window pool %v; want %d and %v", c.engine, c.model, got, d.Settings.WindowPool, c.window, c.pool)
		}
	}
}

func mustLimits(t *testing.T, d Deployment, seqs int) Deployment {
	t.Helper()
	d, err := d.WithBatchLimits(RoleAggregated, seqs, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A profile written before reserve_gb existed prices its SGLang and
// TensorRT-LLM groups with their engines' 2 GB, not with vLLM's rule at
// SGLang's 4096 sequences; one written before window_pool existed sizes
// SGLang's sliding-window pool as SGLang does.
func TestParseProfileFillsMissingEngineSettings(t *testing.T) {
	p := testProfile()
	g := p.Groups[1]
	g.Engine, g.Settings.ReserveGB, g.Settings.WindowPool = "sglang-0.5.5.post1", 0, 0
	p.Groups = append(p.Groups, g)
	g.Engine = "trtllm-1.2.0rc1"
	p.Groups = append(p.Groups, g)
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseProfile(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range q.Groups {
		reserve, window := 0.0, 0.0
		switch {
		case strings.HasPrefix(g.Engine, "sglang"):
			reserve, window = 2, 0.8
		case strings.HasPrefix(g.Engine, "trtllm"):
			reserve = 2
		}
		if g.Settings.ReserveGB != reserve || g.Settings.WindowPool != window {
			t.Errorf("%s: reserve_gb %v, window_pool %v; want %v and %v", g.Engine, g.Settings.ReserveGB, g.Settings.WindowPool, reserve, window)
		}
	}
}

// A calibrated deployment keeps its own frontend latency and its fitted
// spread. Any other (another version, GPU or engine) takes its engine's
// prior, never another source's client and host, with the spread of the
// calibrated frontends as its band (√records weights, groups and pool with
// a GPU, latencies floored at 1 ms) scaled for its GPU class, a
// disaggregated one too.
func TestConfigureFrontendOwnOrEnginePrior(t *testing.T) {
	c := model.PriorCoeffsFor(engine.OverheadFor("vllm-0.9.0.1"), false)
	group := func(gpu, llm, engine string, latency float64, records int) Group {
		return Group{GPU: gpu, Model: llm, Engine: engine, Records: make([]string, records),
			Frontend: &FrontendFit{LatencyS: latency, Source: SourceFitted, RelSigma: 0.1},
			Entries:  []Entry{{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: c, Records: make([]string, records)}}}
	}
	p := &Profile{Schema: SchemaV1, Groups: []Group{
		group("L40S", "meta-llama/Llama-3.1-8B-Instruct", "vllm-0.9.0.1", 0.010, 4),
		group("", "meta-llama/Llama-3.1-8B-Instruct", "vllm-0.9.0.1", 50, 100), // an assumed GPU: not a frontend measurement
	}, Pool: []Group{
		group("H20", "Qwen/Qwen3-32B", "vllm-0.9.0.1", 0.100, 16),
		group("A100-80GB", "Qwen/Qwen3-32B", "vllm-0.9.0.1", 1e-5, 4), // floored at 1 ms
	}}
	// Logs of 10, 100 and 1 ms at weights 2, 4 and 2.
	l := []float64{math.Log(0.010), math.Log(0.100), math.Log(0.001)}
	w := []float64{2, 4, 2}
	mean := (w[0]*l[0] + w[1]*l[1] + w[2]*l[2]) / 8
	spread := math.Sqrt((w[0]*(l[0]-mean)*(l[0]-mean) + w[1]*(l[1]-mean)*(l[1]-mean) + w[2]*(l[2]-mean)*(l[2]-mean)) / 8)
	if got := p.frontendSpread(); math.Abs(got-spread) > 1e-12 {
		t.Fatalf("frontend spread %v, want %v", got, spread)
	}
	prior := engine.FrontendFor("vllm-0.10.1")
	// Where nothing calibrated the deployment, its band is scaled for its GPU's class.
	pcie, hopper := DerivedBandScale(mustGPU(t, "L40S")), DerivedBandScale(mustGPU(t, "H100-SXM"))
	for _, tt := range []struct {
		gpu, model, engine, topology string
		latency, sigma               float64
		said                         bool
	}{
		{"L40S", "Llama-3.1-8B-Instruct", "vllm-0.9.0.1", "1xTP1", 0.010, 0.1, false},                         // its own deployment
		{"L40S", "Llama-3.1-8B-Instruct", "vllm-0.10.1", "1xTP1", prior.LatencyS, spread * pcie, true},        // another version: the engine's prior
		{"H100-SXM", "Llama-3.1-8B-Instruct", "vllm-0.9.0.1", "1xTP1", prior.LatencyS, spread * hopper, true}, // another GPU: never L40S's host
		{"H100-SXM", "Llama-3.1-8B-Instruct", "sglang-0.5.5", "1xTP1", prior.LatencyS, spread * hopper, true}, // no SGLang group: the engine's prior
	} {
		var fe [2]float64
		var d Deployment
		for i, band := range []float64{0, 1} {
			var err error
			d, err = p.Configure(Target{GPU: mustGPU(t, tt.gpu), LLM: mustLLM(t, tt.model), Engine: engine.Parse(tt.engine), Topology: mustTopo(t, tt.topology), Band: band})
			if err != nil {
				t.Fatal(err)
			}
			fe[i] = d.Config.FrontendLatency
		}
		if math.Abs(fe[0]-tt.latency) > 1e-12 {
			t.Errorf("%s %s: frontend %v, want %v", tt.gpu, tt.engine, fe[0], tt.latency)
		}
		if r := fe[1] / fe[0]; math.Abs(r-math.Exp(tt.sigma)) > 1e-9 {
			t.Errorf("%s %s: frontend at +1σ is %v× the centre, want e^%v", tt.gpu, tt.engine, r, tt.sigma)
		}
		if (d.FrontendFrom != "") != tt.said || (tt.said && !strings.Contains(d.FrontendFrom, "frontend prior")) {
			t.Errorf("%s %s: FrontendFrom %q; want the engine's prior named where it prices the deployment", tt.gpu, tt.engine, d.FrontendFrom)
		}
	}
	d, err := p.Configure(Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("dynamo-0.3.0"), Topology: mustTopo(t, "1P(TP1) 1D(TP1)"), Band: 1})
	if err != nil || d.Config.FrontendLatency <= prior.LatencyS || !strings.Contains(d.FrontendFrom, "dynamo-0.3.0 engine's frontend prior") {
		t.Errorf("disaggregated, not calibrated: frontend %v at +1σ (%q, %v), want the engine's prior widened", d.Config.FrontendLatency, d.FrontendFrom, err)
	}
}

// A deployment without a calibration of its own takes its engine's frontend
// prior, never another engine's or the transfer pool's host; a
// disaggregated one also prices its KV transfer on its own path, never
// another group's.
func TestConfigureFrontendNoStandIn(t *testing.T) {
	c := model.PriorCoeffsFor(engine.OverheadFor("vllm-0.9.0.1"), false)
	group := func(gpu, llm, engine string, latency float64, records int) Group {
		return Group{GPU: gpu, Model: llm, Engine: engine, Records: make([]string, records),
			Frontend: &FrontendFit{LatencyS: latency, Source: SourceFitted, RelSigma: 0.1},
			Transfer: TransferFit{LatencyS: 0.5, PerTokenS: 1e-3, Source: SourceFitted, RelSigma: 0.1},
			Entries:  []Entry{{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: c, Records: make([]string, records)}}}
	}
	p := &Profile{Schema: SchemaV1, Groups: []Group{
		group("H100-SXM", "meta-llama/Llama-3.1-8B-Instruct", "vllm-0.5.4", 0.005, 2),
		group("L40S", "meta-llama/Llama-3.1-8B-Instruct", "vllm-0.9.0.1", 0.010, 50),
	}, Pool: []Group{group("H200", "meta-llama/Llama-3.3-70B-Instruct", "sglang-0.4", 0.030, 4)}}
	want := engine.FrontendFor("sglang-0.5.5").LatencyS
	for _, gpu := range []string{"H100-SXM", "A100-80GB", "H200"} {
		d, err := p.Configure(Target{GPU: mustGPU(t, gpu), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("sglang-0.5.5"), Topology: mustTopo(t, "1xTP1")})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Config.FrontendLatency; got != want || !strings.Contains(d.FrontendFrom, "sglang-0.5.5 engine's frontend prior") {
			t.Errorf("%s: frontend %v (%q), want the engine's prior %v", gpu, got, d.FrontendFrom, want)
		}
	}
	d, err := p.Configure(Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("trtllm-1.0"), Topology: mustTopo(t, "1P(TP1) 1D(TP1)")})
	if err != nil {
		t.Fatal(err)
	}
	path := mustGPU(t, "H100-SXM").KVTransferPath(2)
	wantTr := sim.Transfer{Latency: path.LatencyS, PerToken: path.PerTokenS(mustLLM(t, "Llama-3.1-8B-Instruct"), 1)}
	if d.Config.Transfer != wantTr || d.Config.FrontendLatency != engine.FrontendFor("trtllm-1.0").LatencyS {
		t.Errorf("disaggregated: transfer %+v, frontend %v; want the path's %+v and the engine's frontend prior", d.Config.Transfer, d.Config.FrontendLatency, wantTr)
	}
}

// A deployment's own API-server serial work keeps its band when its data
// fitted it, not the frontends' spread across hosts; a work that is the
// prior adds the fitted works' spread.
func TestConfigureServiceBand(t *testing.T) {
	c := model.PriorCoeffsFor(engine.OverheadFor("vllm-0.9.0.1"), false)
	group := func(gpu string, latency, service float64, fitted bool) Group {
		return Group{GPU: gpu, Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: "vllm-0.9.0.1", Records: make([]string, 4),
			Frontend: &FrontendFit{LatencyS: latency, ServiceS: service, ServiceFitted: fitted, Source: SourceFitted, RelSigma: 0.1},
			Entries:  []Entry{{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: c, Records: make([]string, 4)}}}
	}
	for _, fitted := range []bool{true, false} {
		p := &Profile{Schema: SchemaV1, Groups: []Group{group("L40S", 0.05, 0.01, fitted)},
			Pool: []Group{group("A100-80GB", 0.05, 0.004, true), group("H20", 0.05, 0.016, true)}}
		want := 0.1
		if !fitted {
			want = math.Hypot(0.1, p.serviceSpread())
			if s := p.serviceSpread(); math.Abs(s-math.Log(2)) > 1e-12 { // logs of 4 and 16 ms, equal weights
				t.Fatalf("service spread %v, want ln 2", s)
			}
		}
		var work [2]float64
		for i, band := range []float64{0, 1} {
			d, err := p.Configure(Target{GPU: mustGPU(t, "L40S"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("vllm-0.9.0.1"), Topology: mustTopo(t, "2xTP1"), Band: band})
			if err != nil {
				t.Fatal(err)
			}
			work[i] = d.Config.FrontendService
		}
		if r := work[1] / work[0]; math.Abs(r-math.Exp(want)) > 1e-9 {
			t.Errorf("fitted %v: work at +1σ is %v× the centre, want e^%v", fitted, r, want)
		}
	}
}

// A stated frontend latency (Target.Frontend) replaces the calibrated one
// and the engine's prior, at every band edge; the API server's serial work
// stays the deployment's own or the engine's prior, never above it; a disaggregated deployment or a latency
// out of range is refused.
func TestConfigureStatedFrontend(t *testing.T) {
	c := model.PriorCoeffsFor(engine.OverheadFor("vllm-0.9.0.1"), false)
	p := &Profile{Schema: SchemaV1, Groups: []Group{{GPU: "L40S", Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: "vllm-0.9.0.1", Records: make([]string, 4),
		Frontend: &FrontendFit{LatencyS: 0.040, ServiceS: 0.010, ServiceFitted: true, Source: SourceFitted, RelSigma: 0.3},
		Entries:  []Entry{{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: c, Records: make([]string, 4)}}}}}
	ms := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		name    string
		gpu     string
		stated  *float64
		latency float64 // at band 0, and at ±1 when stated
		service float64 // at band 0
		from    string  // in FrontendFrom; "" for none
	}{
		{"its own, not stated", "L40S", nil, 0.040, 0.010, ""},
		{"another GPU, not stated", "H100-SXM", nil, 0.005, 0.005, "vllm-0.9.0.1 engine's frontend prior"},
		{"its own, stated below the work", "L40S", ms(0.003), 0.003, 0.003, "3.0 ms a request, stated (no band), 3.0 ms of it serial in the API server (the deployment's own; at most the stated latency)"},
		{"another GPU, stated above the work", "H100-SXM", ms(0.020), 0.020, 0.005, "20.0 ms a request, stated (no band), 5.0 ms of it serial in the API server (the engine's prior; at most the stated latency)"},
		{"another GPU, stated below the work", "H100-SXM", ms(0.002), 0.002, 0.002, "2.0 ms a request, stated (no band), 2.0 ms of it serial in the API server (the engine's prior; at most the stated latency)"},
		{"stated zero", "H100-SXM", ms(0), 0, 0, "0.0 ms a request, stated (no band)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, band := range []float64{0, -1, 1} {
				d, err := p.Configure(Target{GPU: mustGPU(t, tt.gpu), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("vllm-0.9.0.1"), Topology: mustTopo(t, "2xTP1"), Band: band, Frontend: tt.stated})
				if err != nil {
					t.Fatal(err)
				}
				fe := d.Config.FrontendLatency
				if band != 0 && tt.stated == nil {
					if fe == tt.latency {
						t.Errorf("band %v: frontend %v, the centre's; a carried or fitted one has a band", band, fe)
					}
					continue
				}
				if math.Abs(fe-tt.latency) > 1e-12 || d.Config.FrontendService > fe+1e-12 {
					t.Errorf("band %v: frontend %v, serial work %v; want %v and the work no more than it", band, fe, d.Config.FrontendService, tt.latency)
				}
				if band == 0 && math.Abs(d.Config.FrontendService-tt.service) > 1e-12 {
					t.Errorf("serial work %v, want %v", d.Config.FrontendService, tt.service)
				}
				if band == 0 && ((d.FrontendFrom == "") != (tt.from == "") || !strings.Contains(d.FrontendFrom, tt.from)) {
					t.Errorf("FrontendFrom %q, want one containing %q", d.FrontendFrom, tt.from)
				}
			}
		})
	}
	for _, tt := range []struct {
		topology string
		stated   float64
		want     string
	}{
		{"2xTP1", -0.001, "calibrate: a stated frontend latency out of range: 0 to 60 s, got -0.001"},
		{"2xTP1", math.NaN(), "calibrate: a stated frontend latency out of range: 0 to 60 s, got NaN"},
		{"2xTP1", 61, "calibrate: a stated frontend latency out of range: 0 to 60 s, got 61"},
		{"1P(TP1) 1D(TP1)", 0.003, "calibrate: a stated frontend latency applies to aggregated deployments: a disaggregated deployment's frontend is priced with its KV transfer (its own fitted costs, or the engine's prior)"},
	} {
		_, err := p.Configure(Target{GPU: mustGPU(t, "L40S"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("vllm-0.9.0.1"), Topology: mustTopo(t, tt.topology), Frontend: &tt.stated})
		if err == nil || err.Error() != tt.want || !errors.Is(err, ErrStatedFrontend) {
			t.Errorf("%s, %v s: error %v, want %q", tt.topology, tt.stated, err, tt.want)
		}
	}
}

// A profile fitted for another step-cost form loads, and says so: its
// coefficients price other times now. capsim fit writes the current one.
func TestCostModelWarning(t *testing.T) {
	p := &Profile{Schema: SchemaV1}
	want := "old.json was fitted for cost model 0 and this capsim prices steps with cost model 2 (since 2: the activation traffic between the GEMMs, priced by the weight coefficient): refit it with capsim fit for predictions consistent with its data"
	if got := p.CostModelWarning("old.json"); got != want {
		t.Errorf("warning %q, want %q", got, want)
	}
	p.CostModel = CostModel
	if got := p.CostModelWarning("new.json"); got != "" {
		t.Errorf("a profile of the current cost model warns %q", got)
	}
	prof, err := ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	if prof.CostModel != CostModel {
		t.Errorf("the embedded profile is of cost model %d, want %d: refit it", prof.CostModel, CostModel)
	}
}

// Every pool's derivation carries the costs that priced it: fitted ones
// as the profile holds them, derived ones as carried.
func TestDerivationCoeffs(t *testing.T) {
	p := testProfile()
	topo, _ := model.ParseTopology("prefill 6xTP2 + decode 1xTP4")
	d, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	for _, dv := range d.Derived {
		if err := dv.Coeffs.Validate(); err != nil || dv.Coeffs.Weight == 0 {
			t.Errorf("%s %s: coeffs %+v: %v", dv.Role, dv.Pool, dv.Coeffs, err)
		}
		if dv.Source == SourceFitted && dv.Role == RoleDecode && dv.Coeffs != p.Groups[0].Entries[2].Coeffs {
			t.Errorf("decode: coeffs %+v, want the fitted entry's %+v", dv.Coeffs, p.Groups[0].Entries[2].Coeffs)
		}
	}
}

// TestParseProfileRefusesHostileValues (issue 37): a series' length beyond
// model.MaxSequenceTokens (a fit once wrote "isl": 5e297, which predict read
// as ISL -9223372036854775808) and a corr that is no correlation matrix are
// refused when read; every corr of the default profile is one.
func TestParseProfileRefusesHostileValues(t *testing.T) {
	if _, err := ParseProfile(fixtures.DefaultProfile()); err != nil {
		t.Fatalf("the default profile: %v", err)
	}
	edit := func(f func(p *Profile)) []byte {
		p := testProfile()
		f(p)
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	corr := func(c [][]float64) func(p *Profile) {
		return func(p *Profile) { p.Groups[1].Entries[0].Corr = c }
	}
	unit := func(i, j int, v float64) [][]float64 {
		n := len(model.CoeffNames)
		c := make([][]float64, n)
		for k := range c {
			c[k] = make([]float64, n)
			c[k][k] = 1
		}
		c[i][j], c[j][i] = v, v
		return c
	}
	// Three coefficients pairwise correlated -0.9: each pair is a correlation,
	// the three together are not.
	notPSD := unit(0, 1, -0.9)
	notPSD[0][2], notPSD[2][0], notPSD[1][2], notPSD[2][1] = -0.9, -0.9, -0.9, -0.9
	asym := unit(0, 1, 0.5)
	asym[1][0] = -0.5
	fixed := unit(0, 1, 0.3)
	fixed[6] = make([]float64, len(model.CoeffNames))
	for i := range fixed {
		fixed[i][6] = 0
	}
	if _, err := ParseProfile(edit(corr(fixed))); err != nil {
		t.Errorf("a correlation with a fixed coefficient: %v", err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"huge isl", edit(func(p *Profile) { p.Calibrated[0].ISL = 5e297 }), "calibrate: profile: series 0 (k): isl is 5e+297; want a token count from 0 to 10000000"},
		{"negative osl_max", edit(func(p *Profile) { p.Calibrated[0].OSLMax = -1 }), "calibrate: profile: series 0 (k): osl_max is -1; want a token count from 0 to 10000000"},
		{"not PSD", edit(corr(notPSD)), "calibrate: profile: group 1 entry 0: corr is not positive semi-definite (its least eigenvalue is -0.8), so it is not a correlation matrix"},
		{"not symmetric", edit(corr(asym)), "calibrate: profile: group 1 entry 0: corr is not symmetric: [1][0] is -0.5 and [0][1] is 0.5"},
		{"diagonal", edit(corr(unit(2, 2, 0.5))), "calibrate: profile: group 1 entry 0: corr [2][2] is 0.5; want 1 on the diagonal (or a row of zeros for a coefficient held fixed)"},
	} {
		if _, err := ParseProfile(tc.data); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

// TestParseProfileRefusesUnknownKeyCheaply (issue 37): a profile whose
// first key is unknown is refused by the decoder before the duplicate-key
// walk, which allocates per token (a 200 MB file took 1.1 GB and 12.7 s).
func TestParseProfileRefusesUnknownKeyCheaply(t *testing.T) {
	data := []byte(`{"x": [` + strings.Repeat("1,", 1_000_000) + `1]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ParseProfile(data)
	runtime.ReadMemStats(&after)
	if err == nil || err.Error() != `calibrate: profile: unknown field "x"` {
		t.Errorf("err = %v", err)
	}
	if n := after.Mallocs - before.Mallocs; n > 10_000 {
		t.Errorf("refusing the profile took %d allocations, want under 10,000", n)
	}
}

func TestRoundSignificant(t *testing.T) {
	for _, c := range [][3]float64{{123456, 3, 123000}, {0.00123456, 2, 0.0012}, {-9.876, 2, -9.9}, {0, 3, 0}} {
		if got := roundSignificant(c[0], int(c[1])); got != c[2] {
			t.Errorf("roundSignificant(%v, %v) = %v, want %v", c[0], c[1], got, c[2])
		}
	}
}

// Seed 004's vLLM 0.8.4 records ran the V0 engine (vllm-engine: V0): the
// embedded profile keeps that generation with the group, which prices it
// by the V0 row of the CPU table and names V0's defaults and the variable
// that runs it; its 0.9.0.1 group, V1 as released, keeps neither.
func TestStatedEngineGenerationPrices(t *testing.T) {
	prof, err := ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		label string
		gen   engine.Generation
		row   string
		rule  string
	}{
		{"vllm-0.8.4", "v0", "V0 async output", "VLLM_USE_V1=0"},
		{"vllm-0.9.0.1", "", "V1", ""},
	} {
		d, err := prof.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse(tt.label), Topology: mustTopo(t, "4xTP4")})
		if err != nil {
			t.Fatal(err)
		}
		if d.Settings.Generation != tt.gen {
			t.Errorf("%s: generation %q, want %q", tt.label, d.Settings.Generation, tt.gen)
		}
		if row := engine.OverheadWith(tt.label, d.Settings).Generation; row != tt.row {
			t.Errorf("%s: CPU row %q, want %q", tt.label, row, tt.row)
		}
		if got := strings.Contains(d.DefaultsRule, "VLLM_USE_V1"); got != (tt.rule != "") || !strings.Contains(d.DefaultsRule, tt.rule) {
			t.Errorf("%s: defaults rule %q, want it to name %q", tt.label, d.DefaultsRule, tt.rule)
		}
	}
}

// A record that ran vLLM's V0 engine (seed 004's vLLM 0.8.4), validated
// as run on its H20 or on a GPU the profile has no such group of, is
// priced as it ran: V0's CPU row and defaults, not those of whichever
// group priced it.
func TestRecordTargetKeepsItsGeneration(t *testing.T) {
	prof, err := ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(recs, func(r results.Record) bool { return r.System.Engine == "vllm-0.8.4" })
	if i < 0 {
		t.Fatal("no vllm-0.8.4 record in the seeds")
	}
	for _, gpu := range []string{"H20", "H100-SXM"} {
		r := recs[i]
		r.System.GPU = gpu // as if it ran there: the record's own settings hold
		tg, _, err := prof.RecordTarget(&r, Override{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := prof.Configure(tg)
		if err != nil {
			t.Fatal(err)
		}
		if d.Settings.Generation != engine.GenV0 || !d.Settings.DelayedOutput {
			t.Errorf("%s: generation %q, delayed output %v; want V0's", gpu, d.Settings.Generation, d.Settings.DelayedOutput)
		}
		if row := engine.OverheadWith(r.System.Engine, d.Settings).Generation; row != "V0 async output" {
			t.Errorf("%s: CPU row %q, want V0's", gpu, row)
		}
		if !strings.Contains(d.DefaultsRule, "VLLM_USE_V1=0") {
			t.Errorf("%s: defaults rule %q does not name the V0 engine", gpu, d.DefaultsRule)
		}
	}
}

// A profile's engine generation is v0, v1 or absent: anything else is
// refused naming the group and the field.
func TestProfileRefusesUnknownGeneration(t *testing.T) {
	prof, err := ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	prof.Groups[0].Settings.Generation = "v2"
	b, err := prof.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseProfile(b); err == nil || !strings.Contains(err.Error(), "group 0") || !strings.Contains(err.Error(), "engine_generation") {
		t.Errorf("a profile with engine_generation v2: %v, want an error naming group 0 and the field", err)
	}
}
