package calibrate

import (
	"reflect"
	"strings"
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
		gpu, engine, link, one, many string
	}{
		{"H20", "vllm-0.9.0.1", "", "1xTP4", "4xTP4"},
		{"H20", "vllm-0.9.0.1", "", "1xTP2PP2", "3xTP2PP2"},
		{"H20", "dynamo-0.3.0", "", "prefill 1xTP2 + decode 1xTP4", "prefill 6xTP2 + decode 2xTP4"},
		{"H20", "dynamo-0.3.0", "", "prefill 1xTP4 + decode 1xTP4", "prefill 3xTP4 + decode 1xTP4"},
		{"H20", "dynamo-0.3.0", "", "prefill 1xTP2PP2 + decode 1xTP2PP2", "prefill 4xTP2PP2 + decode 3xTP2PP2"},
		// Priced from its path: a count beyond one server crosses the NIC.
		{"H200", "dynamo-0.3.0", "", "prefill 1xTP2 + decode 1xTP4", "prefill 6xTP2 + decode 2xTP4"},
		{"H20", "vllm-0.9.0.1", "", "prefill 1xTP2 + decode 1xTP2", "prefill 6xTP2 + decode 2xTP2"},
		{"H200", "dynamo-0.3.0", "RDMA200", "prefill 1xTP2 + decode 1xTP4", "prefill 6xTP2 + decode 2xTP4"},
	} {
		configure := func(s string) Deployment {
			topo, err := model.ParseTopology(s)
			if err != nil {
				t.Fatal(err)
			}
			d, err := prof.Configure(Target{GPU: mustGPU(t, c.gpu), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse(c.engine), Topology: topo, KVLink: c.link})
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
		if got.TransferFrom != want.TransferFrom || got.FrontendFrom != want.FrontendFrom {
			t.Errorf("%s %s scaled to %s: transfer %q, frontend %q; Configure says %q, %q", c.gpu, c.one, c.many, got.TransferFrom, got.FrontendFrom, want.TransferFrom, want.FrontendFrom)
		}
		if got.Topology != want.Topology {
			t.Errorf("%s scaled: topology %v, want %v", c.one, got.Topology, want.Topology)
		}
	}
}

// A calibrated group that never ran disaggregated measured no transfer:
// a disaggregated deployment of it prices its transfer on its path, and
// keeps the group's own frontend (its host), as its fit separated it.
func TestAggregatedGroupDisaggregatedTransfer(t *testing.T) {
	prof := shippedProfile(t)
	topo, err := model.ParseTopology("prefill 6xTP2 + decode 2xTP2")
	if err != nil {
		t.Fatal(err)
	}
	tgt := Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("vllm-0.9.0.1"), Topology: topo}
	d, err := prof.Configure(tgt)
	if err != nil {
		t.Fatal(err)
	}
	path := tgt.GPU.KVTransferPath(topo.GPUs())
	want := path.PerTokenS(d.LLM, 2)
	if tr := d.Config.Transfer; tr.Latency != path.LatencyS || tr.PerToken != want || !strings.Contains(d.TransferFrom, "RDMA400") {
		t.Errorf("transfer %+v (%q), want %g s + %g s/token over RDMA400", tr, d.TransferFrom, path.LatencyS, want)
	}
	if d.Config.FrontendLatency <= 0 {
		t.Errorf("frontend %v: want the group's own", d.Config.FrontendLatency)
	}
}
