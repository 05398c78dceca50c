package calibrate

import (
	"math"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

// pooledProfile has two fitted vLLM 0.9 groups on different GPUs and
// models, one SGLang group, and one group whose GPU the source never named.
func pooledProfile() *Profile {
	entry := func(c model.Coeffs, n int) Entry {
		recs := make([]string, n)
		return Entry{Role: RoleAggregated, TP: 1, PP: 1, Source: SourceFitted, Coeffs: c, Records: recs}
	}
	v1 := model.PriorCoeffsFor(model.EngineOverheadFor("vllm-0.9.0.1"), false)
	a, b, s, u := v1, v1, v1, v1
	a.Weight, a.Overhead = 1.1, 2*v1.Overhead
	b.Weight, b.Overhead = 1.6, 8*v1.Overhead
	s.Weight = 3
	u.Weight = 9
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
	v1Overhead := model.PriorCoeffsFor(model.EngineOverheadFor("vllm-0.9.0.1"), false).Overhead
	gpu, err := model.LookupGPU("H100-SXM")
	if err != nil {
		t.Fatal(err)
	}
	llm, err := model.LookupLLM("Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	pool := model.Pool{Count: 1, TP: 1}
	pc, ok := p.pooledCoeffs(gpu, llm, pool, nil, "vllm-0.10.1", RoleAggregated, "another GPU", false)
	if !ok {
		t.Fatal("no pooled price")
	}
	// Weights: √16·3·3 (same family and model), √4·3 (same family), √4
	// (SGLang); the group with no GPU is not a measurement and is left out.
	wa, wb, ws := 4.0*9, 2.0*3, 2.0
	want := math.Exp((wa*math.Log(1.1) + wb*math.Log(1.6) + ws*math.Log(3)) / (wa + wb + ws))
	if math.Abs(pc.coeffs.Weight/want-1) > 1e-9 {
		t.Errorf("pooled weight coefficient %v, want the weighted geometric mean %v", pc.coeffs.Weight, want)
	}
	if pc.groups != 3 {
		t.Errorf("%d groups pooled, want 3", pc.groups)
	}
	// CPU overheads: the target version's table row times the pooled
	// fitted-to-table ratio (2 and 8 for the vLLM groups; the SGLang group
	// has vLLM 0.9's overhead against its own row's).
	target := model.PriorCoeffsFor(model.EngineOverheadFor("vllm-0.10.1"), false)
	sglang := model.PriorCoeffsFor(model.EngineOverheadFor("sglang-0.5.5"), false)
	ratio := math.Exp((wa*math.Log(2) + wb*math.Log(8) + ws*math.Log(v1Overhead/sglang.Overhead)) / (wa + wb + ws))
	if math.Abs(pc.coeffs.Overhead/(target.Overhead*ratio)-1) > 1e-9 {
		t.Errorf("pooled overhead %v s, want %v × %v", pc.coeffs.Overhead, target.Overhead, ratio)
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
	d, err := p.Configure(Target{GPU: "H100-SXM", Model: "Llama-3.1-8B-Instruct", Engine: "vllm-0.9.0.1", Topology: mustTopo(t, "1xTP1")})
	if err != nil {
		t.Fatal(err)
	}
	if der := d.Derived[0]; der.Source != SourceDerived || !strings.Contains(der.From, "pooled") || der.Engine != "vllm-0.9.0.1" {
		t.Errorf("derivation %+v, want derived from pooled groups for vllm-0.9.0.1", der)
	}
	// No group names a GPU and model: nothing to pool.
	empty := &Profile{Schema: SchemaV1, Groups: p.Groups[3:]}
	if _, ok := empty.pooledCoeffs(gpu, llm, pool, nil, "vllm-0.9.0.1", RoleAggregated, "another GPU", false); ok {
		t.Error("pooled a profile whose only group names no GPU")
	}
}
