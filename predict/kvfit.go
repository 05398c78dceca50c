package predict

import (
	"sort"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// KVFit is the longest request, in tokens of context, whose KV cache one
// worker of every pool of d holds on its own: the largest --max-model-len
// vLLM starts with, since it refuses one whose KV cache does not fit
// (vLLM V1's KV-memory check at start-up). A pipeline-parallel worker's
// whole cache counts (the simulator splits it over its microbatches). 0
// when no pool states a KV capacity.
func KVFit(d calibrate.Deployment) int {
	fit := 0
	for _, p := range []struct {
		pool model.Pool
		cfg  sim.PoolConfig
	}{{d.Topology.Replicas, d.Config.Replicas}, {d.Topology.Prefill, d.Config.Prefill}, {d.Topology.Decode, d.Config.Decode}} {
		if p.pool.IsZero() || p.cfg.KVCapacity <= 0 {
			continue
		}
		c := p.cfg
		c.KVCapacity *= p.pool.Microbatches()
		n := sort.Search(c.KVCapacity+1, func(n int) bool { return !c.Holds(n) }) - 1
		if fit == 0 || n < fit {
			fit = n
		}
	}
	return fit
}
