package predict

import "testing"

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
