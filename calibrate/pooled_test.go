package calibrate

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// pooledProfile has two fitted vLLM 0.9 groups on different GPUs and
// models, one SGLang group, and one group whose GPU the source never named.
func pooledProfile() *Profile {
	entry := func(c model.Coeffs, n int) Entry {
		recs := make([]string, n)
		return Entry{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: c, Records: recs}
	}
	v1 := model.PriorCoeffsFor(engine.OverheadFor("vllm-0.9.0.1"), false)
	a, b, s, u := v1, v1, v1, v1
	a.Weight, a.Compute, a.Overhead = 1.1, 1.1, 2*v1.Overhead
	b.Weight, b.Compute, b.Overhead = 1.6, 1.6, 8*v1.Overhead
	s.Weight, s.Compute = 3, 3
	u.Weight, u.Compute = 9, 9
	group := func(gpu, llm, engine string, c model.Coeffs, n int) Group {
		g := Group{GPU: gpu, Model: llm, Engine: engine, Entries: []Entry{entry(c, n)}}
		g.Records = make([]string, n)
		return g
	}
	return &Profile{Schema: SchemaV1, Groups: []Group{
		group("L40S", "meta-llama/Llama-3.1-8B-Instruct", "vllm-0.9.0.1", a, 16),
		group("H20", "Qwen/Qwen3-32B", "vllm-0.9.0.1", b, 4),
		group("H20", "Qwen/Qwen3-32B", "sglang-0.5.5", s, 4),
		group("", "meta-llama/Llama-3.1-8B-Instruct", "vllm-0.9.0.1", u, 100),
	}}
}

func TestPooledCoeffs(t *testing.T) {
	p := pooledProfile()
	gpu, llm := mustGPU(t, "H100-SXM"), mustLLM(t, "Llama-3.1-8B-Instruct")
	pool := model.Pool{Count: 1, TP: 1}
	pc, ok := p.pooledCoeffs(gpu, llm, pool, nil, "vllm-0.10.1", engine.Settings{}, RoleAggregated, sourceOtherGPU, false)
	if !ok {
		t.Fatal("no pooled price")
	}
	// Weights: √16·3·3 (same family and model), √4·3 (same family), √4
	// (SGLang); the group with no GPU is not a measurement and is left out.
	// Each GEMM efficiency is carried by its GPU's matmul share over the
	// target's (the dense target's weight reads stream at its bandwidth
	// share: TestPooledDenseStreams).
	wa, wb, ws := 4.0*9, 2.0*3, 2.0
	l40s, h20 := mustGPU(t, "L40S").AchievableMatmulShare(llm.Quant)/gpu.AchievableMatmulShare(llm.Quant), mustGPU(t, "H20").AchievableMatmulShare(llm.Quant)/gpu.AchievableMatmulShare(llm.Quant)
	want := math.Exp((wa*math.Log(1.1*l40s) + wb*math.Log(1.6*h20) + ws*math.Log(3*h20)) / (wa + wb + ws))
	if math.Abs(pc.coeffs.Compute/want-1) > 1e-9 {
		t.Errorf("pooled compute coefficient %v, want the weighted geometric mean %v", pc.coeffs.Compute, want)
	}
	if pc.groups != 3 {
		t.Errorf("%d groups pooled, want 3", pc.groups)
	}
	// CPU overheads: the target version's table row, whatever the groups
	// fitted (2 and 8 times their rows for the vLLM groups): what a group
	// spends beyond its row is that deployment's own.
	target := model.PriorCoeffsFor(engine.OverheadFor("vllm-0.10.1"), false)
	if pc.coeffs.Overhead != target.Overhead || pc.coeffs.PerSeq != target.PerSeq {
		t.Errorf("pooled CPU costs %v s and %v s a sequence, want the table row's %v and %v", pc.coeffs.Overhead, pc.coeffs.PerSeq, target.Overhead, target.PerSeq)
	}
	if err := pc.coeffs.Validate(); err != nil {
		t.Errorf("pooled coefficients are not physical: %v", err)
	}
	if floor := math.Hypot(sigmaOtherGroup, sigmaOtherVersion); pc.relSigma < floor {
		t.Errorf("pooled σ %v below the carrying error %v", pc.relSigma, floor)
	}
	for _, s := range []string{"another GPU", "3 fitted groups pooled", "vllm-0.9.0.1 on L40S / Llama-3.1-8B-Instruct"} {
		if !strings.Contains(pc.from, s) {
			t.Errorf("derivation %q does not mention %q", pc.from, s)
		}
	}
	// Through Configure, the pool says it was pooled and names the target engine.
	d, err := p.Configure(Target{GPU: mustGPU(t, "H100-SXM"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("vllm-0.9.0.1"), Topology: mustTopo(t, "1xTP1")})
	if err != nil {
		t.Fatal(err)
	}
	if der := d.Derived[0]; der.Source != SourceDerived || !strings.Contains(der.From, "pooled") || der.Engine != "vllm-0.9.0.1" {
		t.Errorf("derivation %+v, want derived from pooled groups for vllm-0.9.0.1", der)
	}
	// No group names a GPU and model: nothing to pool.
	empty := &Profile{Schema: SchemaV1, Groups: p.Groups[3:]}
	if _, ok := empty.pooledCoeffs(gpu, llm, pool, nil, "vllm-0.9.0.1", engine.Settings{}, RoleAggregated, sourceOtherGPU, false); ok {
		t.Error("pooled a profile whose only group names no GPU")
	}
}

// A pooled price's band follows how far the target lies from the groups
// that priced it: a model measured on another GPU is carried across GPUs
// alone, a model measured nowhere across models too (pooledBandScale).
// The transfer pool's groups count, since they are pooled too.
func TestPooledBandByKind(t *testing.T) {
	inPool := pooledProfile() // the L40S Llama-3.1-8B group only in the transfer pool
	inPool.Pool, inPool.Groups = inPool.Groups[:1], inPool.Groups[1:3]
	gpu := mustGPU(t, "H100-SXM")
	for _, tt := range []struct {
		p     *Profile
		model string
		kind  sourceKind
		wider bool // than the pooled σ with the class's scale alone
	}{
		{pooledProfile(), "Llama-3.1-8B-Instruct", sourceOtherGPU, false}, // measured on an L40S
		{pooledProfile(), "Qwen3-8B", sourceOtherGPUAndModel, true},       // measured nowhere
		{inPool, "Llama-3.1-8B-Instruct", sourceOtherGPU, false},          // on an L40S, in the transfer pool
	} {
		llm := mustLLM(t, tt.model)
		d, err := tt.p.Configure(Target{GPU: gpu, LLM: llm, Engine: engine.Parse("vllm-0.9.0.1"), Topology: mustTopo(t, "1xTP1")})
		if err != nil {
			t.Fatal(err)
		}
		_, groupsKind := tt.p.sourceGroup(gpu.Name, llm.Name, engine.Parse("vllm-0.9.0.1"))
		if kind := tt.p.pooledKind(groupsKind, gpu.Name, llm.Name, engine.Parse("vllm-0.9.0.1")); kind != tt.kind {
			t.Fatalf("%s: priced as %v, want %v", tt.model, kind, tt.kind)
		}
		der := d.Derived[0]
		if !strings.Contains(der.From, tt.kind.String()+":") {
			t.Errorf("%s: derivation %q does not say %q", tt.model, der.From, tt.kind)
		}
		graphs := d.Settings.CUDAGraphs(false)
		pc, ok := tt.p.pooledCoeffs(gpu, llm, model.Pool{Count: 1, TP: 1}, graphs, "vllm-0.9.0.1", d.Settings, RoleAggregated, tt.kind, graphs == nil)
		if !ok {
			t.Fatalf("%s: no pooled price", tt.model)
		}
		classOnly := pc.relSigma * DerivedBandScale(gpu)
		if math.Abs(der.RelSigma-classOnly*pooledBandScale[tt.kind]) > 1e-12 {
			t.Errorf("%s: band ±%v, want the pooled ±%v × the class's %v × the kind's %v", tt.model, der.RelSigma, pc.relSigma, DerivedBandScale(gpu), pooledBandScale[tt.kind])
		}
		if (der.RelSigma > classOnly) != tt.wider {
			t.Errorf("%s (%v): band ±%v against ±%v with the class's scale alone, want wider: %v", tt.model, tt.kind, der.RelSigma, classOnly, tt.wider)
		}
	}
	// A kind the table does not name keeps its band.
	if got := pooledBand(gpu, sourceNone, 0.4); got != 0.4*DerivedBandScale(gpu) {
		t.Errorf("no group of the family: band ±%v, want ±%v", got, 0.4*DerivedBandScale(gpu))
	}
}

// A transfer-pool group helps price a GPU without its own group, but never
// prices a target as its own fit nor chooses its engine.
func TestTransferPool(t *testing.T) {
	p := pooledProfile()
	pool := p.Groups[:1] // L40S / Llama-3.1-8B / vllm-0.9.0.1
	main := &Profile{Schema: SchemaV1, Groups: p.Groups[1:3]}
	withPool := &Profile{Schema: SchemaV1, Groups: main.Groups, Pool: pool}
	tgt := Target{GPU: mustGPU(t, "L40S"), LLM: mustLLM(t, "Llama-3.1-8B-Instruct"), Engine: engine.Parse("vllm-0.9.0.1"), Topology: mustTopo(t, "1xTP1")}
	d, err := withPool.Configure(tgt)
	if err != nil {
		t.Fatal(err)
	}
	der := d.Derived[0]
	if der.Source != SourceDerived || !strings.Contains(der.From, "3 fitted groups pooled") {
		t.Errorf("with the L40S group only in the pool, costs are %s from %q; want derived from 3 pooled groups", der.Source, der.From)
	}
	d0, err := main.Configure(tgt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d0.Derived[0].From, "2 fitted groups pooled") {
		t.Errorf("without the pool: %q, want 2 pooled groups", d0.Derived[0].From)
	}
	if e, err := withPool.ResolveEngine("L40S", "meta-llama/Llama-3.1-8B-Instruct", "", false); err != nil || e.Label != "vllm-0.9.0.1" {
		t.Errorf("default engine %q (%v): the pool must not choose it", e.Label, err)
	}
	// The pool is read back and checked like the groups.
	b, err := withPool.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Pool) != 1 || back.Pool[0].GPU != "L40S" {
		t.Errorf("pool read back as %+v", back.Pool)
	}
	back.Pool[0].Engine = ""
	bad, err := back.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseProfile(bad); err == nil || !strings.Contains(err.Error(), "pool group 0: engine is required") {
		t.Errorf("a pool group without an engine: %v", err)
	}
}

// Two fixed per-step costs the data know only as a sum: anti-correlated,
// their errors cancel in the step's band instead of adding up.
func TestStepSigmaUsesCorrelation(t *testing.T) {
	gpu, llm := mustGPU(t, "H20"), mustLLM(t, "Qwen3-32B")
	cost := model.NewStepCost(gpu, llm, model.Pool{Count: 1, TP: 4}, model.PriorCoeffs(false), []int{1, 2, 4, 8, 16, 32, 64})
	sig := make([]float64, len(model.CoeffNames))
	sig[iOverhead], sig[iComm] = 0.5, 0.5
	n := len(model.CoeffNames)
	corr := make([][]float64, n)
	for i := range corr {
		corr[i] = make([]float64, n)
		corr[i][i] = 1
	}
	independent := stepSigma(cost, sig, nil, RoleDecode)
	corr[iOverhead][iComm], corr[iComm][iOverhead] = -1, -1
	anti := stepSigma(cost, sig, corr, RoleDecode)
	corr[iOverhead][iComm], corr[iComm][iOverhead] = 1, 1
	together := stepSigma(cost, sig, corr, RoleDecode)
	if !(anti < independent && independent < together) {
		t.Errorf("step σ anti-correlated %v, independent %v, correlated %v: want increasing", anti, independent, together)
	}
}

func TestResidualSigma(t *testing.T) {
	g := &Group{Residuals: []Residual{
		{LogRatio: map[string]float64{model.MeanTTFT: 0.1, model.MeanTPOT: -0.02}},
		{LogRatio: map[string]float64{model.MeanTTFT: -0.3, model.MeanTPOT: 0.04}},
		{LogRatio: map[string]float64{model.MeanTTFT: 0.2}},
	}}
	if got := residualSigma(g, RolePrefill); math.Abs(got-1.4826*0.2) > 1e-12 {
		t.Errorf("prefill σ %v, want %v", got, 1.4826*0.2)
	}
	if got := residualSigma(g, RoleDecode); math.Abs(got-1.4826*0.03) > 1e-12 {
		t.Errorf("decode σ %v, want %v", got, 1.4826*0.03)
	}
	if got := residualSigma(g, RoleAggregated); math.Abs(got-1.4826*0.1) > 1e-12 {
		t.Errorf("aggregated σ %v, want %v (median of TTFT and TPOT together)", got, 1.4826*0.1)
	}
	if got := residualSigma(&Group{}, RoleDecode); got != 0 {
		t.Errorf("no residuals: σ %v, want 0", got)
	}
	// A group its own fit misses by ×3–×20 on TTFT (queueing, a client's
	// own clock) is priced no less surely than from the roofline prior.
	wild := &Group{Residuals: []Residual{
		{LogRatio: map[string]float64{model.MeanTTFT: 1.2}},
		{LogRatio: map[string]float64{model.MeanTTFT: -3}},
		{LogRatio: map[string]float64{model.MeanTTFT: 2.1}},
	}}
	if got := residualSigma(wild, RolePrefill); got != sigmaPrior {
		t.Errorf("prefill σ of a group missing its TTFTs by ×3–×20: %v, want the prior's %v", got, sigmaPrior)
	}
}

// A GEMM efficiency (and a weight or KV read's) is carried between GPUs
// as a share of what a large GEMM (a streaming kernel) reaches on each: groups that all ran at the same share of their
// GPU's measured matmul peak price another GPU at that share of its own,
// whatever their spec peaks, and a mean that would beat the target's spec
// peak is held there and says so.
func TestPooledMatmulShare(t *testing.T) {
	v1 := model.PriorCoeffsFor(engine.OverheadFor("vllm-0.9.0.1"), false)
	group := func(gpu string, compute float64) Group {
		c := v1
		c.Compute = compute
		e := Entry{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: c, Records: make([]string, 4), Fitted: []string{"compute"}}
		return Group{GPU: gpu, Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: "vllm-0.9.0.1", Entries: []Entry{e}, Records: make([]string, 4)}
	}
	llm := mustLLM(t, "Llama-3.1-8B-Instruct")
	// Every group reached 70% of its GPU's measured matmul peak: inverse
	// efficiency against the spec peak is 1/(0.7·share).
	at := func(name string) float64 { return 1 / (0.7 * mustGPU(t, name).AchievableMatmulShare(llm.Quant)) }
	p := &Profile{Schema: SchemaV1, Groups: []Group{group("H20", at("H20")), group("A100-80GB", at("A100-80GB")), group("L40S", at("L40S"))}}
	pool := model.Pool{Count: 1, TP: 1}
	for _, target := range []string{"H100-SXM", "MI300X", "L4"} {
		gpu := mustGPU(t, target)
		pc, ok := p.pooledCoeffs(gpu, llm, pool, nil, "vllm-0.9.0.1", engine.Settings{}, RoleAggregated, sourceOtherGPU, false)
		if !ok {
			t.Fatalf("%s: no pooled price", target)
		}
		if want := at(target); math.Abs(pc.coeffs.Compute/want-1) > 1e-9 {
			t.Errorf("%s compute coefficient %v, want %v (70%% of a %.0f%% matmul share)", target, pc.coeffs.Compute, want, 100*gpu.AchievableMatmulShare(llm.Quant))
		}
		if !strings.Contains(pc.from, fmt.Sprintf("%s: %.0f%% and %.0f%% of spec", target, 100*gpu.AchievableMatmulShare(llm.Quant), 100*gpu.AchievableMemoryShare())) {
			t.Errorf("%s derivation %q does not state the target's matmul share", target, pc.from)
		}
	}
	// Groups at the spec peak of GPUs with low matmul shares, carried to a
	// GPU with a higher share, would beat its spec peak: held there.
	fast := &Profile{Schema: SchemaV1, Groups: []Group{group("L4", 1), group("MI300X", 1)}}
	pc, _ := fast.pooledCoeffs(mustGPU(t, "H20"), llm, pool, nil, "vllm-0.9.0.1", engine.Settings{}, RoleAggregated, sourceOtherGPU, false)
	if pc.coeffs.Compute != 1 || !strings.Contains(pc.from, "GEMM held at peak") {
		t.Errorf("groups at the spec peak of low-share GPUs carried to H20: compute %v, derivation %q", pc.coeffs.Compute, pc.from)
	}
	// Weight reads carry as shares of measured bandwidth: groups that all
	// streamed weights at 80% of their GPU's measured bandwidth price
	// MI300X at 80% of its own.
	read := func(name string) float64 { return 1 / (0.8 * mustGPU(t, name).AchievableMemoryShare()) }
	var rs []Group
	for _, name := range []string{"H100-SXM", "A100-40GB", "V100-PCIe-16GB"} {
		g := group(name, 1.5)
		g.Entries[0].Coeffs.Weight = read(name)
		rs = append(rs, g)
	}
	mi300x, moe := mustGPU(t, "MI300X"), mustLLM(t, "Qwen/Qwen3-30B-A3B") // a dense target streams at its share (TestPooledDenseStreams)
	if pc, _ := (&Profile{Schema: SchemaV1, Groups: rs}).pooledCoeffs(mi300x, moe, pool, nil, "vllm-0.9.0.1", engine.Settings{}, RoleAggregated, sourceOtherGPUAndModel, false); math.Abs(pc.coeffs.Weight/read("MI300X")-1) > 1e-9 {
		t.Errorf("MI300X weight coefficient %v, want %v (80%% of a %.0f%% bandwidth share)", pc.coeffs.Weight, read("MI300X"), 100*mi300x.AchievableMemoryShare())
	}
	// An FP8 checkpoint takes the GPU's FP8 share where one was measured.
	h100 := mustGPU(t, "H100-SXM")
	if fp8 := mustLLM(t, "Llama-3.1-8B-Instruct-FP8"); h100.AchievableMatmulShare(fp8.Quant) != h100.FP8MatmulShare || h100.FP8MatmulShare == h100.MatmulShare {
		t.Errorf("H100 FP8 share %v, want the measured FP8 %v apart from BF16 %v", h100.AchievableMatmulShare(fp8.Quant), h100.FP8MatmulShare, h100.MatmulShare)
	}
}

// Any spelling of an engine family weighs that family's groups in a pooled
// price alike.
func TestPooledFamilySpellings(t *testing.T) {
	prof := pooledProfile()
	c := model.PriorCoeffsFor(engine.OverheadFor("trtllm-1.0"), false)
	c.Weight = 5
	prof.Groups = append(prof.Groups, Group{GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "trtllm-1.0", Records: make([]string, 4),
		Entries: []Entry{{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: c, Records: make([]string, 4)}}})
	// A mixture-of-experts target: a dense one's weight reads stream at its
	// share whatever the groups (TestPooledDenseStreams).
	gpu, llm := mustGPU(t, "H100-SXM"), mustLLM(t, "Qwen/Qwen3-30B-A3B")
	pool := model.Pool{Count: 1, TP: 1}
	price := func(label string) model.Coeffs {
		pc, ok := prof.pooledCoeffs(gpu, llm, pool, nil, label, engine.Settings{}, RoleAggregated, sourceOtherGPUAndModel, false)
		if !ok {
			t.Fatalf("%s: nothing pooled", label)
		}
		return pc.coeffs
	}
	a, b, v := price("trtllm-1.0"), price("tensorrt-llm-1.0"), price("vllm-0.9.0.1")
	if a != b || a.Weight <= v.Weight {
		t.Errorf("weight read: trtllm-1.0 pooled %v, tensorrt-llm-1.0 %v, vllm-0.9.0.1 %v; want the first two equal and above vLLM's (the TensorRT-LLM group weighs more)", a.Weight, b.Weight, v.Weight)
	}
}

// A mixture-of-experts group prices other MoE models, never a dense one,
// and a MoE model is priced from MoE groups where there are any: their
// efficiencies are fused expert kernels' and routing's.
func TestPooledDenseTargetLeavesOutMoEGroups(t *testing.T) {
	p := pooledProfile()
	moe := model.PriorCoeffsFor(engine.OverheadFor("vllm-0.10.1.1"), false)
	moe.Weight, moe.Overhead = 6.8, 10*moe.Overhead
	g := Group{GPU: "A100-80GB", Model: "openai/gpt-oss-120b", Engine: "vllm-0.10.1.1",
		Entries: []Entry{{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: moe, Records: make([]string, 10)}}}
	g.Records = make([]string, 10)
	p.Groups = append(p.Groups, g)
	gpu, pool := mustGPU(t, "H100-SXM"), model.Pool{Count: 1, TP: 1}
	dense, _ := p.pooledCoeffs(gpu, mustLLM(t, "Llama-3.1-8B-Instruct"), pool, nil, "vllm-0.10.1", engine.Settings{}, RoleAggregated, sourceOtherGPU, false)
	base, _ := pooledProfile().pooledCoeffs(gpu, mustLLM(t, "Llama-3.1-8B-Instruct"), pool, nil, "vllm-0.10.1", engine.Settings{}, RoleAggregated, sourceOtherGPU, false)
	if dense.groups != 3 || dense.coeffs != base.coeffs {
		t.Errorf("dense target pooled %d groups to %+v; want the 3 dense groups' %+v", dense.groups, dense.coeffs, base.coeffs)
	}
	moeTarget, _ := p.pooledCoeffs(gpu, mustLLM(t, "Qwen/Qwen3-30B-A3B"), pool, nil, "vllm-0.10.1", engine.Settings{}, RoleAggregated, sourceOtherGPUAndModel, false)
	if !strings.Contains(moeTarget.from, "1 fitted mixture-of-experts groups pooled") {
		t.Errorf("MoE target's derivation %q does not say it pooled MoE groups", moeTarget.from)
	}
	if moeTarget.groups != 1 {
		t.Errorf("MoE target pooled %d groups, want the MoE group alone", moeTarget.groups)
	}
	// With no MoE group, a MoE model is priced from the dense ones.
	alone, _ := pooledProfile().pooledCoeffs(gpu, mustLLM(t, "Qwen/Qwen3-30B-A3B"), pool, nil, "vllm-0.10.1", engine.Settings{}, RoleAggregated, sourceOtherGPUAndModel, false)
	if alone.groups != 3 {
		t.Errorf("MoE target with no MoE group pooled %d groups, want the 3 dense ones", alone.groups)
	}
}

// A pooled price's per-sequence CPU cost is the target engine table's,
// however low the members' fits drove theirs.
func TestPooledPerSeqFloor(t *testing.T) {
	p := pooledProfile()
	for i := range p.Groups {
		p.Groups[i].Entries[0].Coeffs.PerSeq = 1e-9
	}
	gpu, llm := mustGPU(t, "H100-SXM"), mustLLM(t, "Llama-3.1-8B-Instruct")
	for _, label := range []string{"vllm-0.10.1", "sglang-0.5.5"} {
		pc, ok := p.pooledCoeffs(gpu, llm, model.Pool{Count: 1, TP: 1}, nil, label, engine.Settings{}, RoleAggregated, sourceOtherGPU, false)
		row := engine.OverheadWith(label, engine.Settings{})
		if !ok || pc.coeffs.PerSeq != row.PerSeqS {
			t.Errorf("%s: pooled per-sequence cost %g, want the table's %g", label, pc.coeffs.PerSeq, row.PerSeqS)
		}
	}
}

// The transfer pool keeps no residuals, so FitPool does not simulate them:
// with stage 2 skipped it runs no simulation at all (Fit runs one a point),
// and its groups are Fit's, less their residuals.
func TestFitPoolSimulatesNoResiduals(t *testing.T) {
	recs := syntheticRecords(t, "3P(TP4) 1D(TP4)", []int{1, 8}, [][2]int{{2500, 100}})
	var runs atomic.Int32
	count := func(ctx context.Context, c sim.Config) (*sim.Result, error) {
		runs.Add(1)
		return sim.Run(ctx, c)
	}
	opts := Options{SkipRefine: true, Simulate: count}
	full, _, err := Fit(context.Background(), recs, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != int32(len(recs)) {
		t.Fatalf("Fit ran %d simulations, want one a record (%d)", n, len(recs))
	}
	runs.Store(0)
	prof := &Profile{Schema: SchemaV1}
	if err := FitPool(context.Background(), prof, recs, opts, nil); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("FitPool ran %d simulations for residuals it drops, want none", n)
	}
	for i := range full.Groups {
		full.Groups[i].Residuals = nil
	}
	if !reflect.DeepEqual(prof.Pool, full.Groups) {
		t.Errorf("pool groups differ from the fit's less their residuals:\n got %+v\nwant %+v", prof.Pool, full.Groups)
	}
}

// A dense model's weight and KV reads are priced at the target GPU's
// streaming share (model.DecodeStreamSource), not at the members' fitted
// efficiencies; a mixture of experts keeps the pooled ones.
func TestPooledDenseStreams(t *testing.T) {
	p := pooledProfile()
	for i := range p.Groups {
		p.Groups[i].Entries[0].Coeffs.KV = 4
		p.Groups[i].Entries[0].Coeffs.Weight = 3
	}
	gpu, pool := mustGPU(t, "H100-SXM"), model.Pool{Count: 1, TP: 1}
	dense, ok := p.pooledCoeffs(gpu, mustLLM(t, "Llama-3.1-8B-Instruct"), pool, nil, "vllm-0.10.1", engine.Settings{}, RoleAggregated, sourceOtherGPU, false)
	if want := 1 / gpu.AchievableMemoryShare(); !ok || math.Abs(dense.coeffs.KV-want) > 1e-12 || math.Abs(dense.coeffs.Weight-want) > 1e-12 {
		t.Errorf("dense target's weight and KV coefficients %v and %v, want the streaming share's %v", dense.coeffs.Weight, dense.coeffs.KV, want)
	}
	if !strings.Contains(dense.from, "weight and KV reads at the GPU's streaming share") {
		t.Errorf("derivation %q does not say where its KV price came from", dense.from)
	}
	moe, ok := p.pooledCoeffs(gpu, mustLLM(t, "Qwen/Qwen3-30B-A3B"), pool, nil, "vllm-0.10.1", engine.Settings{}, RoleAggregated, sourceOtherGPUAndModel, false)
	if !ok || moe.coeffs.KV < 3 || moe.coeffs.Weight < 2 {
		t.Errorf("MoE target's weight and KV coefficients %v and %v, want the members' pooled ones (about 3 and 4)", moe.coeffs.Weight, moe.coeffs.KV)
	}
}

// A dense model's group carried to another engine version keeps the
// efficiencies its data determined; the weight and KV reads and the
// all-reduces it left at the prior take the GPU's streaming share and the
// interconnect catalog's figures, as a pooled price does.
func TestStreamUndetermined(t *testing.T) {
	gpu := mustGPU(t, "H100-PCIe")
	c := model.Coeffs{Weight: 1.3, KV: 1.7, Comm: 1.4, Compute: 1.5}
	g := &Group{GPU: gpu.Name, Model: "meta-llama/Llama-3.1-8B-Instruct"}
	e := &Entry{Fitted: []string{"weight"}, Prior: []string{"kv", "comm", "compute"}}
	got := c
	note := streamUndetermined(g, e, &got)
	if want := 1 / gpu.AchievableMemoryShare(); got.KV != want || got.Comm != 1 || got.Weight != 1.3 || got.Compute != 1.5 {
		t.Errorf("carried %+v: want KV %v and comm 1 in place of the prior, the determined weight and the compute kept", got, want)
	}
	if !strings.Contains(note, "KV, all-reduce") {
		t.Errorf("note %q does not name what it replaced", note)
	}
	moe := &Group{GPU: gpu.Name, Model: "Qwen/Qwen3-30B-A3B"}
	if got := c; streamUndetermined(moe, e, &got) != "" || got != c {
		t.Errorf("a mixture of experts' prior reads were replaced: %+v", got)
	}
}
