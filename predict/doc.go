// Package predict runs the calibrated simulator over load points for one
// deployment and workload shape, and reads the results the way a capacity
// planner does: the throughput knee, where TTFT blows up, which pool is the
// bottleneck, and how uncertain the costs behind it are.
//
// Each point runs in steady state by default (sim.SteadyState through
// sim.Converge: warm-up left out, the load sustained past the measured
// requests, doubled until means and p99s are stable), or as a benchmark
// replay (Options.Mode: the finite run a benchmark makes, ramp and drain
// included), which validation and fitted-against-measured plots use. Each
// point says which (Point.Mode, Point.Steady).
package predict
