package predict

import "github.com/capsim/capsim/sim"

// BottleneckOf names what limits a deployment from the pool statistics of
// one simulated run (normally its most loaded one), by the same rules as a
// Prediction's Bottleneck.
func BottleneckOf(pools []sim.PoolStats) Bottleneck {
	return findBottleneck([]Point{{Pools: pools}})
}
