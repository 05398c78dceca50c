package calibrate

import (
	"strings"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/results"
)

// A record's expert parallelism: vLLM's switch spans every GPU of the
// widest worker, SGLang's and TensorRT-LLM's sizes state the degree; a
// group whose records disagree states none (each record keeps its own).
func TestExpertParallelOfRecords(t *testing.T) {
	on := map[string]string{"enable-expert-parallel": "true"}
	for _, tt := range []struct {
		topo     string
		settings map[string]string
		want     int
	}{
		{"1xTP8", on, 8},
		{"1xTP4", on, 4},
		{"1xTP8", map[string]string{"ep_size": "4"}, 4},
		{"1xTP8", map[string]string{"tp": "8"}, 0},
		{"1P(TP8) 1D(TP4)", on, 8},
	} {
		if got := expertParallelOf(mustTopo(t, tt.topo), tt.settings); got != tt.want {
			t.Errorf("%s %v: expert parallelism %d, want %d", tt.topo, tt.settings, got, tt.want)
		}
	}
	rec := func(s map[string]string) *results.Record {
		return &results.Record{System: results.System{GPU: "H100", Model: "Qwen/Qwen3-235B-A22B", Engine: "vllm-0.11.0", Settings: s}}
	}
	topo := mustTopo(t, "1xTP8")
	ep, split := &point{rec: rec(on), topo: topo}, &point{rec: rec(map[string]string{}), topo: topo}
	if s := settingsFrom("vllm-0.11.0", []*point{ep, ep}); s.ExpertParallel != 8 {
		t.Errorf("a group that all ran expert parallelism: %d, want 8", s.ExpertParallel)
	}
	if s := settingsFrom("vllm-0.11.0", []*point{ep, split}); s.ExpertParallel != 0 {
		t.Errorf("a group whose records disagree: %d, want 0", s.ExpertParallel)
	}
	if s := recordSettings("vllm-0.11.0", ep.rec, topo); s.ExpertParallel != 8 {
		t.Errorf("the expert-parallel record's own settings: %d, want 8", s.ExpertParallel)
	}
}

// A calibrated vLLM run's expert parallelism spans every GPU of whatever
// worker it prices (EP8 at TP8 is EP4 at TP4, EP16 at TP16); SGLang's and
// TensorRT-LLM's stated degrees hold, capped at the worker's TP. A stated
// --enable-expert-parallel is reported as stated, at TP1 too.
func TestConfigureExpertParallelFollowsTP(t *testing.T) {
	gpu, llm := mustGPU(t, "B200"), mustLLM(t, "Qwen/Qwen3-235B-A22B")
	for _, tt := range []struct {
		engine   string
		ep       int
		topo     string
		wantEP   int // the worker's degree
		settings int // Settings.ExpertParallel
	}{
		{"vllm-0.11.0", 8, "1xTP8", 8, 8},
		{"vllm-0.11.0", 8, "1xTP4", 4, 4},
		{"vllm-0.11.0", 8, "1xTP16", 16, 16},
		{"vllm-0.11.0", 0, "1xTP8", 1, 0},
		{"trtllm-1.0.0", 4, "1xTP8", 4, 4},
		{"trtllm-1.0.0", 8, "1xTP4", 4, 8},
	} {
		id := engine.Parse(tt.engine)
		s := defaultSettings(id, gpu, 0)
		s.ExpertParallel = tt.ep
		topo := mustTopo(t, tt.topo)
		d, err := testProfile().Configure(Target{GPU: gpu, LLM: llm, Engine: id, Topology: topo, Settings: &s})
		if err != nil {
			t.Fatalf("%s EP%d at %s: %v", tt.engine, tt.ep, tt.topo, err)
		}
		if got := d.LLM.ExpertParallelAt(topo.Replicas.TP); got != tt.wantEP || d.Settings.ExpertParallel != tt.settings {
			t.Errorf("%s EP%d at %s: the worker's degree %d (settings %d), want %d (%d)", tt.engine, tt.ep, tt.topo, got, d.Settings.ExpertParallel, tt.wantEP, tt.settings)
		}
	}
	yes := true
	d, err := testProfile().Configure(Target{GPU: gpu, LLM: mustLLM(t, "Qwen/Qwen3-30B-A3B"), Engine: engine.Parse("vllm-0.11.0"), Topology: mustTopo(t, "1xTP1"),
		Stated: engine.Stated{ExpertParallel: &yes}})
	if err != nil {
		t.Fatal(err)
	}
	var got engine.Flag
	for _, f := range d.Flags {
		if f.Name == engine.FlagExpertParallel {
			got = f
		}
	}
	if got.Value != "true" || got.From != engine.FromStated {
		t.Errorf("--enable-expert-parallel stated at TP1 reported as %+v, want stated true", got)
	}
}

// A profile group with a negative degree is refused, naming the field.
func TestProfileRefusesNegativeExpertParallel(t *testing.T) {
	prof, err := ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	prof.Groups[0].Settings.ExpertParallel = -2
	b, err := prof.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseProfile(b); err == nil || !strings.Contains(err.Error(), "settings.expert_parallel is -2") {
		t.Errorf("a profile with expert_parallel -2: %v, want an error naming the field", err)
	}
}
