package model

import (
	"fmt"

	"github.com/capsim/capsim/internal/optionerr"
)

// KV transfer between the prefill and decode workers of a disaggregated
// deployment, priced from the link it crosses: each prefill GPU sends its
// own share of a prompt's KV cache over its own path (NVLink or PCIe
// within a server, the GPU's NIC between servers), after a fixed set-up.

// KVConnectorLatencyS is the fixed cost of one KV transfer, in seconds,
// and KVRDMAEfficiency the share of the NICs' line rate it reaches:
// Mooncake's vLLM connector moving Qwen3-8B's KV from a TP8 prefiller to a
// TP8 decoder over 8× ConnectX-7 RoCE (200 GB/s in all) took 0.54 ms for
// 128 tokens and 31.65 ms for 32,768 (4.5 GiB); a line through its nine
// prompt lengths is 0.39–0.59 ms plus 146–154 GB/s, 73–77% of the line
// rate (kvcache-ai/Mooncake docs/source/performance/vllm/
// vllm-v1-pd-performance.md @3d0748c, fixtures/corpus).
const (
	KVConnectorLatencyS = 0.0004
	KVRDMAEfficiency    = 0.75
)

// GPUsPerServer is how many GPUs one server holds (every HGX/DGX board
// and the PCIe servers the corpus names): a disaggregated deployment of
// at most this many GPUs is taken to sit in one server, its transfers
// then crossing the in-server link.
const GPUsPerServer = 8

// KVPath is the link a deployment's KV transfers cross and what it costs.
type KVPath struct {
	Link Interconnect
	// Bps is what one prefill GPU sends at, in bytes per second.
	Bps float64
	// LatencyS is the fixed cost of a transfer (KVConnectorLatencyS).
	LatencyS float64
	// Across is true when prefill and decode workers sit in different servers.
	Across bool
	// Shared: the prefill worker's GPUs share one NIC (the node network
	// of a server without a NIC per GPU), so Bps is the worker's, not each GPU's.
	Shared bool
}

// KVTransferPath is the path of a disaggregated deployment's KV
// transfers on g: the in-server link when the deployment's gpus fit one
// server, else g's scale-out NIC (ScaleOut; the node network where g's
// usual server has no RDMA NIC).
func (g GPU) KVTransferPath(gpus int) KVPath {
	if gpus <= GPUsPerServer {
		return kvPathOn(g.Link())
	}
	if s, err := LookupInterconnect(g.ScaleOut); err == nil {
		return kvPathOn(s)
	}
	return kvPathOn(nodeNetwork())
}

// kvPathOn is the path over ic: between servers when ic is a network
// (scaleOut), shared by a server's GPUs when it is the node network.
func kvPathOn(ic Interconnect) KVPath {
	return KVPath{Link: ic, Bps: ic.AchievableBps(), LatencyS: KVConnectorLatencyS, Across: scaleOut[ic.Name], Shared: ic.Name == NodeNetwork}
}

// PerTokenS is the time a prompt token's KV takes to cross p from a
// prefill worker of tensor degree tp: its KV bytes spread over the
// worker's tp GPUs, each sending on its own path (one shared path when
// p is Shared).
func (p KVPath) PerTokenS(m LLM, tp int) float64 {
	tp = max(tp, 1)
	bytes := m.KVBytesPerToken(tp, m.KVElemBytes())
	if p.Shared {
		return bytes / p.Bps
	}
	return bytes / float64(tp) / p.Bps
}

// String says what the path is: "NVLink4 within one server, 369 GB/s a GPU".
func (p KVPath) String() string {
	where, per := "within one server", "a GPU"
	if p.Across {
		where = "between servers"
	}
	if p.Shared {
		per = "a server"
	}
	return fmt.Sprintf("%s %s, %.1f GB/s %s", p.Link.Name, where, p.Bps/1e9, per)
}

// scaleOut are the interconnect catalog's links between servers.
var scaleOut = map[string]bool{"RDMA400": true, "RDMA200": true, NodeNetwork: true}

// KVTransferPathOver is the path of g's KV transfers over the link a
// deployment states (an interconnect catalog name, any case): g's own
// in-server link, or a network between servers (RDMA400, RDMA200,
// Ethernet).
func (g GPU) KVTransferPathOver(name string) (KVPath, error) {
	ic, err := LookupInterconnect(name)
	own := g.Link()
	switch {
	case err != nil:
		return KVPath{}, optionerr.New("model: ", nil, "unknown KV link %q (want %s, RDMA400, RDMA200 or %s)", name, own.Name, NodeNetwork)
	case !scaleOut[ic.Name] && ic.Name != own.Name:
		return KVPath{}, optionerr.New("model: ", nil, "%s is not %s's link (%s within a server; RDMA400, RDMA200 or %s between servers)", ic.Name, g.Name, own.Name, NodeNetwork)
	}
	return kvPathOn(ic), nil
}

// KVLinkWithinServer reports whether name is an interconnect catalog
// link (ok) and whether it is one within a server (NVLink, PCIe, Infinity
// Fabric) rather than a network between servers.
func KVLinkWithinServer(name string) (within, ok bool) {
	ic, err := LookupInterconnect(name)
	return err == nil && !scaleOut[ic.Name], err == nil
}
