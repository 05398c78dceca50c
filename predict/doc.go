// Package predict runs the calibrated simulator and reads the results the
// way a capacity planner does.
//
//   - Run: load points for one deployment and workload shape, with the
//     throughput knee, where TTFT blows up, which pool is the bottleneck and
//     the cost band behind it.
//   - Records: measured records re-simulated exactly as they ran (the fit's
//     workload, deployment and seed), so validate, plot and the fit's
//     residuals agree; Series: a measured series over its load grid, as
//     capsim plot draws it; Matching: the records that measured a prediction.
//   - Compare, Summarise, MedianError(s): measured against predicted with
//     model.AbsPctError, the one accuracy measure.
//
// Run simulates each point in steady state by default (sim.SteadyState
// through sim.Converge: warm-up left out, the load sustained past the
// measured requests, doubled until means and p99s are stable), or as a
// benchmark replay (Options.Mode: the finite run a benchmark makes, ramp
// and drain included), which Records, Series and validation use. Each
// point says which (Point.Mode, Point.Steady).
package predict
