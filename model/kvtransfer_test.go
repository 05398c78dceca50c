package model

import (
	"math"
	"testing"
)

// The path prices reproduce the measurement they rest on: Mooncake's vLLM
// connector moving Qwen3-8B's KV from a TP8 prefiller to a TP8 decoder on
// two H800 servers (kvcache-ai/Mooncake vllm-v1-pd-performance.md
// @3d0748c: prompt tokens, measured transfer ms).
func TestKVTransferReproducesMooncake(t *testing.T) {
	h800, err := LookupGPU("H800")
	if err != nil {
		t.Fatal(err)
	}
	qwen, err := LookupLLM("Qwen/Qwen3-8B")
	if err != nil {
		t.Fatal(err)
	}
	path := h800.KVTransferPath(16)
	if !path.Across || path.Link.Name != "RDMA200" {
		t.Fatalf("two TP8 workers of H800s: %s, want RDMA200 between servers", path)
	}
	for _, m := range []struct{ tokens, ms float64 }{
		{128, 0.54}, {256, 0.61}, {512, 0.92}, {1024, 1.50}, {2048, 2.51},
		{4096, 4.75}, {8192, 8.84}, {16384, 16.43}, {32768, 31.65},
	} {
		got := 1000 * (path.LatencyS + m.tokens*path.PerTokenS(qwen, 8))
		if math.Abs(got/m.ms-1) > 0.12 {
			t.Errorf("%v tokens: %.2f ms, measured %.2f", m.tokens, got, m.ms)
		}
	}
}

// Within one server a transfer crosses the GPUs' own link; beyond, the
// usual server's NIC (the node network without one). A faster path is
// never slower, and a TP-sharded prompt sends its shares in parallel.
func TestKVTransferPath(t *testing.T) {
	qwen, err := LookupLLM("Qwen/Qwen3-32B")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range GPUs() {
		in, across := g.KVTransferPath(8), g.KVTransferPath(16)
		if in.Across || in.Link.Name != g.Link().Name || !across.Across {
			t.Errorf("%s: %s within, %s across", g.Name, in, across)
		}
		if want := g.ScaleOut; want != "" && across.Link.Name != want {
			t.Errorf("%s: across servers on %s, want its NIC %s", g.Name, across.Link.Name, want)
		} else if want == "" && across.Link.Name != NodeNetwork {
			t.Errorf("%s: across servers on %s, want the node network", g.Name, across.Link.Name)
		}
		if in.PerTokenS(qwen, 2) > across.PerTokenS(qwen, 2) && g.Link().AchievableBps() >= across.Link.AchievableBps() {
			t.Errorf("%s: the in-server link prices a token slower than the NIC", g.Name)
		}
		share := 4.0 // each GPU on its own NIC
		if across.Shared {
			share = 1 // one NIC for the server
		}
		if a, b := across.PerTokenS(qwen, 4), across.PerTokenS(qwen, 1); math.Abs(a*share/b-1) > 1e-9 {
			t.Errorf("%s: TP4 sends a token in %g s, TP1 in %g: want 1/%g", g.Name, a, b, share)
		}
		if across.Shared != (g.ScaleOut == "") {
			t.Errorf("%s: a shared NIC is the node network's alone", g.Name)
		}
	}
}

// A stated link is the GPU's own in-server link or a network between
// servers; another GPU's link is refused.
func TestKVTransferPathOver(t *testing.T) {
	a100, err := LookupGPU("A100-80GB")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]KVPath{
		"nvlink3":  {Link: a100.Link(), Bps: a100.Link().AchievableBps(), LatencyS: KVConnectorLatencyS},
		"RDMA400":  {Bps: 50e9 * KVRDMAEfficiency, LatencyS: KVConnectorLatencyS, Across: true},
		"ethernet": {Bps: nodeNetwork().AchievableBps(), LatencyS: KVConnectorLatencyS, Across: true, Shared: true},
	} {
		got, err := a100.KVTransferPathOver(name)
		if err != nil || got.Bps != want.Bps || got.Across != want.Across || got.Shared != want.Shared || got.LatencyS != want.LatencyS {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	for _, bad := range []string{"NVLink4", "Infiniband", ""} {
		if _, err := a100.KVTransferPathOver(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
