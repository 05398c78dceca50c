package calibrate

import (
	"context"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// Workload is one benchmark run against a deployment, as a benchmark client
// sends it: the load, the prompt length, the mean output length and how
// many prompts, with the simulator's seed.
type Workload struct {
	Load       model.Load
	ISL        int // tokens in every prompt
	OSL        int // mean output tokens; spread as BenchmarkOutput
	NumPrompts int
	Seed       uint64
}

// WithWorkload returns d with Config.Load, Input, Output, NumPrompts and
// Seed filled from w; outputs spread around w.OSL as in real runs (see
// BenchmarkOutput), as the fit simulated them.
func (d Deployment) WithWorkload(w Workload) Deployment {
	d.Config.Load = w.Load
	d.Config.Input = sim.Fixed(w.ISL)
	d.Config.Output = BenchmarkOutput(w.OSL)
	d.Config.NumPrompts = w.NumPrompts
	d.Config.Seed = w.Seed
	return d
}

// Simulate runs w on d and returns what a benchmark client would measure:
// the simulation of d.WithWorkload(w).Config (the frontend latency is part
// of the configuration and simulated).
func (d Deployment) Simulate(ctx context.Context, w Workload) (*sim.Result, error) {
	return d.SimulateWith(ctx, w, sim.Run)
}

// SimulateWith is Simulate with another simulator in place of sim.Run (a
// test's stand-in, or a counting wrapper); nil means sim.Run.
func (d Deployment) SimulateWith(ctx context.Context, w Workload, run func(context.Context, sim.Config) (*sim.Result, error)) (*sim.Result, error) {
	if run == nil {
		run = sim.Run
	}
	return run(ctx, d.WithWorkload(w).Config)
}
