// Package workload is capsim's one description of the requests a benchmark
// sends: Workload carries the load, the prompt and output lengths, how
// the outputs spread (BenchmarkOutput, or exactly their length), the
// dataset whose lengths they draw and how the prompts share prefixes.
// Measured records become Workloads in package series (series.Workloads);
// calibrate simulates them, and predict and plan describe what they ask
// for with one. It knows nothing of GPUs, engines or costs.
package workload
