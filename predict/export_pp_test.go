package predict

import (
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
)

// A pipeline runs as PP virtual workers of 1/PP of the sequences each in
// the simulator; the settings reported (and exported) are the engine's:
// one replica per worker, its whole max-num-seqs, and they round-trip
// through override unchanged.
func TestSettingsOfPipelineIsTheEngines(t *testing.T) {
	prof := defaultProfile(t)
	d, err := prof.Configure(target(t, "H100-SXM", "vllm-0.10", "1xTP1PP2"))
	if err != nil {
		t.Fatal(err)
	}
	st := SettingsOf(d)
	if len(st) != 1 || st[0].Workers != 1 || st[0].PP != 2 || st[0].MaxNumSeqs != 1024 {
		t.Fatalf("settings %+v, want one worker, PP 2 and vLLM's 1024 sequences", st)
	}
	back, err := override(d, st)
	if err != nil {
		t.Fatal(err)
	}
	if got := SettingsOf(back); got[0] != st[0] || back.Config.Replicas.KVCapacity != d.Config.Replicas.KVCapacity {
		t.Errorf("round trip: %+v and %d KV tokens, want %+v and %d", got[0], back.Config.Replicas.KVCapacity, st[0], d.Config.Replicas.KVCapacity)
	}
}

// A pool calibrated on its release's other engine generation is exported
// as it ran: seed 004's vLLM 0.8.4 group ran V0 and its settings say so;
// its 0.9.0.1 group, V1 as released, says nothing.
func TestSettingsOfCarriesEngineGeneration(t *testing.T) {
	prof := defaultProfile(t)
	for label, want := range map[string]engine.Generation{"vllm-0.8.4": engine.GenV0, "vllm-0.9.0.1": ""} {
		d, err := prof.Configure(calibrate.Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse(label),
			Topology: model.Topology{Replicas: model.Pool{Count: 4, TP: 4}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range SettingsOf(d) {
			if s.Generation != want {
				t.Errorf("%s %s pool: engine generation %q, want %q", label, s.Role, s.Generation, want)
			}
		}
	}
}
