package calibrate

import (
	"reflect"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
)

// A search configures one worker of a shape and tries it at many counts:
// Scaled must give the pools and router Configure builds for that count.
// Seed 004's vLLM groups run behind a random router (chosen by their fit),
// and one replica behind none, so a one-replica deployment scaled to four
// must switch to random, not keep one replica's round-robin.
func TestScaledMatchesConfigure(t *testing.T) {
	prof := shippedProfile(t)
	for _, c := range []struct {
		engine, one, many string
	}{
		{"vllm-0.9.0.1", "1xTP4", "4xTP4"},
		{"vllm-0.9.0.1", "1xTP2PP2", "3xTP2PP2"},
		{"dynamo-0.3.0", "prefill 1xTP2 + decode 1xTP4", "prefill 6xTP2 + decode 2xTP4"},
		{"dynamo-0.3.0", "prefill 1xTP4 + decode 1xTP4", "prefill 3xTP4 + decode 1xTP4"},
		{"dynamo-0.3.0", "prefill 1xTP2PP2 + decode 1xTP2PP2", "prefill 4xTP2PP2 + decode 3xTP2PP2"},
	} {
		configure := func(s string) Deployment {
			topo, err := model.ParseTopology(s)
			if err != nil {
				t.Fatal(err)
			}
			d, err := prof.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse(c.engine), Topology: topo})
			if err != nil {
				t.Fatalf("%s %s: %v", c.engine, s, err)
			}
			return d
		}
		want := configure(c.many)
		got := configure(c.one).Scaled(want.Topology)
		if !reflect.DeepEqual(got.Config, want.Config) {
			g, w := got.Config, want.Config
			t.Errorf("%s %s scaled to %s: router %q/%q, workers %d/%d/%d; Configure gives %q/%q, %d/%d/%d (or another field differs)", c.engine, c.one, c.many,
				g.Router, g.PrefillRouter, g.Replicas.Workers, g.Prefill.Workers, g.Decode.Workers,
				w.Router, w.PrefillRouter, w.Replicas.Workers, w.Prefill.Workers, w.Decode.Workers)
		}
		if !reflect.DeepEqual(got.Derived, want.Derived) {
			t.Errorf("%s %s scaled to %s: derivations %+v, Configure gives %+v", c.engine, c.one, c.many, got.Derived, want.Derived)
		}
		if got.Topology != want.Topology {
			t.Errorf("%s scaled: topology %v, want %v", c.one, got.Topology, want.Topology)
		}
	}
}
