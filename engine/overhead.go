package engine

import "fmt"

// Overhead is the CPU cost of an engine version's steps: scheduling,
// input preparation, kernel launches outside CUDA graphs, sampling and
// output processing that the GPU waits for. It is a property of the engine
// software, not of the GPU, so it is the prior of a fitted group's
// Overhead and PerSeq and the price of a version nobody calibrated.
type Overhead struct {
	Family string `json:"family"` // "vllm", "dynamo", "sglang", "trtllm"
	// From is the first version this row applies to ("" = any); rows of a
	// family are ordered oldest first and the last matching one wins.
	From string `json:"from"`
	// Generation names the scheduler design: "V0", "V1", "V1 async" …
	Generation string  `json:"generation"`
	StepS      float64 `json:"step_s"`       // per step with CUDA graphs
	EagerStepS float64 `json:"eager_step_s"` // per step without CUDA graphs (enforce-eager)
	PerSeqS    float64 `json:"per_seq_s"`    // per sequence in a step
	// RelSigma is how uncertain the row is before any fit (relative).
	RelSigma float64 `json:"rel_sigma"`
	Source   string  `json:"source"`
}

// asyncStepS is the CPU time per step that vLLM's async scheduling leaves
// exposed (the "V1 with async scheduling" row's Source).
const asyncStepS = 0.0001

// eagerExtra is what running without CUDA graphs adds per step: every
// layer's kernels launched from Python (a few hundred launches of ~5–10 µs),
// about what the seeds' eager-mode groups fitted on top of the graph-mode
// overhead (12–16 ms against 1–10 ms).
const eagerExtra = 0.008

// overheads is the engine catalog's CPU-cost table: the catalog is
// settings.go (defaults and scheduling policy per version and GPU) plus
// this table, both keyed by Parse's family and version, kept apart
// because this one is priced, the other one is stated.
var overheads = []Overhead{
	{Family: "", Generation: "unknown engine", StepS: 0.003, EagerStepS: 0.003 + eagerExtra, PerSeqS: 30e-6, RelSigma: 1.0,
		Source: "no engine named: the middle of the vLLM rows"},
	{Family: "vllm", Generation: "V0 (unversioned label)", StepS: 0.003, EagerStepS: 0.003 + eagerExtra, PerSeqS: 30e-6, RelSigma: 1.0,
		Source: "a vLLM label without a version: V0 0.6-era overheads assumed, wide uncertainty"},
	{Family: "vllm", From: "0.1", Generation: "V0 synchronous", StepS: 0.004, EagerStepS: 0.004 + eagerExtra, PerSeqS: 60e-6, RelSigma: 0.6,
		Source: "vLLM RFC #6854 (multi-step scheduling, 2024-07, Llama-3-8B, vLLM 0.5): about 4 ms of GPU bubble per decode step in the traced baseline, 5–13 ms across loads; " +
			"with 60 µs a sequence that is 13 ms at 150 sequences, where vLLM's 0.6.0 blog (2024-09-05, Llama-3-8B on H100 at 32 QPS) measured only 38% of the time on GPU execution"},
	{Family: "vllm", From: "0.6", Generation: "V0 async output", StepS: 0.002, EagerStepS: 0.002 + eagerExtra, PerSeqS: 35e-6, RelSigma: 0.6,
		Source: "vLLM V0 from 0.6 as it runs by default: asynchronous output processing on, scheduling one step at a time (multi-step, --num-scheduler-steps, is opt-in: vLLM blog 2024-09-05, whose 2.7× used it). " +
			"Async output processing alone moved TPOT 8.7% (Llama-70B on 4x H100, the same blog) and throughput 11% (Llama-3.1-8B FP8 on an H100, vllm-project/vllm#7049): it hides the output processing, about 60 of the 100 µs a sequence that Vidur's CPU profile of V0 on an A100 shows (microsoft/vidur data/profiling/a100/cpu_overheads.csv, Llama-2-7B, batch 8–64: schedule, prepare inputs, sampler and output processing, about 1.2 ms + 100 µs a sequence), " +
			"leaving about 1–2 ms a step and 35 µs a sequence. A run that states --num-scheduler-steps above 1, or --disable-async-output-proc (which streams without the step's delay, engine.Settings.DelayedOutput, but leaves its output processing on the step), is priced as this row too (not modelled)"},
	{Family: "vllm", From: "0.8", Generation: generationV1, StepS: 0.0012, EagerStepS: 0.0012 + eagerExtra, PerSeqS: 25e-6, RelSigma: 0.6,
		Source: "vLLM V1 (default engine from 0.8.0; blog 2025-01-27): API server and scheduler in separate processes, persistent batch, piecewise CUDA graphs; scheduling synchronous with the GPU step by default through 0.13"},
	{Family: "vllm", From: "0.14", Generation: generationV1Async, StepS: asyncStepS, EagerStepS: asyncStepS + eagerExtra, PerSeqS: 20e-6, RelSigma: 0.7,
		Source: "vLLM v0.14.0 release notes: async scheduling on by default (vllm-project/vllm#27614; opt-in --async-scheduling from 0.10, SchedulerConfig.async_scheduling = False through 0.13), overlapping the next step's scheduling with the current GPU step. " +
			"vLLM 0.19.1's c=1 ITL for Llama-3.1-8B on an H100 is 6.44 ms at no context (vLLM blog 2026-04-22, fixtures/corpus/e-vllmblog-fp8kv-h100-llama31-8b-c8.md's post), below its weights' stream at the H100's measured bandwidth share plus the measured kernel floor (6.6 ms): no CPU time is left exposed; 0.1 ms is kept for the sampled tokens' copy back. " +
			"Per sequence 20 µs: with it ML.ENERGY's sweep of Llama-3.1-8B on an H100 with vLLM 0.11.1 --async-scheduling at 16–384 in flight (predict.TestLoadedThroughputMatchesMLEnergyH100, outside the fit) comes out at 0.99× its output throughput (geometric mean; 15 µs 1.02×, 25 µs 0.96×). " +
			"The 0.25 µs that vLLM's V1 async prototype left exposed at batch 256 (150–170 µs a step, vllm-project/vllm#11133) predicted that sweep 13–19% fast at 128–384 in flight: in 0.11 a step's per-sequence cost is not all hidden CPU work"},
	{Family: "dynamo", Generation: "Dynamo with vLLM V0 workers", StepS: 0.002, EagerStepS: 0.002 + eagerExtra, PerSeqS: 30e-6, RelSigma: 0.6,
		Source: "Dynamo 0.3's vLLM backend runs patched vLLM 0.8 workers on the V0 engine (disaggregation patch); priced as vLLM V0 0.6+"},
	{Family: "sglang", Generation: "SGLang overlap scheduler", StepS: 0.001, EagerStepS: 0.001 + eagerExtra, PerSeqS: 20e-6, RelSigma: 0.8,
		Source: "SGLang 0.4 overlaps CPU scheduling with GPU compute (zero-overhead batch scheduler, LMSYS blog 2024-12-04); assumed like vLLM V1"},
	{Family: "trtllm", Generation: "TensorRT-LLM C++ runtime", StepS: 0.0006, EagerStepS: 0.0006 + eagerExtra, PerSeqS: 15e-6, RelSigma: 0.8,
		Source: "TensorRT-LLM's C++ batch manager: no Python in the step loop; assumed lowest"},
}

// OverheadWith is OverheadFor for a run with settings s, where two of them
// choose the row:
//   - the engine generation a vLLM run states (s.Generation: V0 from 0.8
//     to 0.10, V1 before 0.8) prices it as that generation's release
//     (ID.AsGeneration), the V0 or V1 row;
//   - vLLM's async scheduling (s.AsyncScheduling non-nil: --async-scheduling
//     or --no-async-scheduling). The flag came in with 0.10 as an opt-in
//     and is on by default from 0.14 (vllm-project/vllm#27614): a
//     0.10–0.13 run that turns it on is priced as the "V1 with async
//     scheduling" row, a 0.14+ run that turns it off as the synchronous V1
//     row. Where vLLM has no such flag (before 0.10, other engines) the
//     label's own row holds; CheckAsyncScheduling refuses a user's flag there.
//
// Each says so in Source.
func OverheadWith(label string, s Settings) Overhead {
	id := Parse(label)
	o := overheadOf(id)
	if g, ok := id.AsGeneration(s.Generation); ok {
		id = g
		o = overheadOf(g)
		o.Source += "; here because the run states " + s.Generation.Note()
	}
	async := s.AsyncScheduling
	if async == nil || !HasAsyncScheduling(id) {
		return o
	}
	switch {
	case *async && o.Generation == generationV1:
		o = overheadRow(generationV1Async)
		o.Source += "; here because the run states --async-scheduling"
	case !*async && o.Generation == generationV1Async:
		o = overheadRow(generationV1)
		o.Source += "; here because the run turns async scheduling off (--no-async-scheduling)"
	}
	return o
}

// AsyncSchedulingOn reports whether an engine schedules asynchronously
// with async as stated (nil: not stated): vLLM from 0.10 as stated, else
// by its default, which the overhead table's rows say (on from 0.14).
func AsyncSchedulingOn(e ID, async *bool) bool {
	switch {
	case !HasAsyncScheduling(e):
		return false
	case async != nil:
		return *async
	}
	return overheadOf(e).Generation == generationV1Async
}

// CheckAsyncScheduling refuses a stated --async-scheduling or
// --no-async-scheduling (async non-nil) for an engine without the flag:
// vLLM before 0.10, a vLLM label without a version, other engines.
func CheckAsyncScheduling(e ID, async *bool) error {
	if async == nil || HasAsyncScheduling(e) {
		return nil
	}
	flag := "--" + FlagAsyncScheduling
	if !*async {
		flag = "--no-" + FlagAsyncScheduling
	}
	if e.Family != VLLM {
		return fmt.Errorf("%s is vLLM's flag (0.10 or later); the engine is %s", flag, e.Label)
	}
	if len(e.Version) == 0 {
		return fmt.Errorf("%s needs vLLM 0.10 or later; the engine %s names no version (e.g. vllm-0.12.0)", flag, e.Label)
	}
	return fmt.Errorf("%s needs vLLM 0.10 or later; the engine is %s", flag, e.Label)
}

// HasAsyncScheduling reports whether e has --[no-]async-scheduling: vLLM
// from 0.10 (SchedulerConfig.async_scheduling, a switch with its --no- form).
func HasAsyncScheduling(e ID) bool { return e.Family == VLLM && len(e.Version) > 0 && e.AtLeast(0, 10) }

// overheadRow is the vLLM row of a generation (generationV1 or generationV1Async).
func overheadRow(generation string) Overhead {
	for _, o := range overheads {
		if o.Family == VLLM && o.Generation == generation {
			return o
		}
	}
	panic("engine: no vLLM overhead row " + generation)
}

// The vLLM V1 rows' generations, which OverheadWith tells apart.
const (
	generationV1      = "V1"
	generationV1Async = "V1 with async scheduling"
)

// OverheadFor prices an engine label such as "vllm-0.9.0.1",
// "dynamo-0.3.0" or "vllm": the newest row of its family whose From is not
// after the label's version, the family's unversioned row when the label
// has no version, the generic row for an unknown family.
func OverheadFor(label string) Overhead { return overheadOf(Parse(label)) }

// overheadOf is OverheadFor of a parsed label.
func overheadOf(e ID) Overhead {
	i := pickRow(len(overheads), func(i int) (string, []int) {
		o := overheads[i]
		if o.From == "" {
			return o.Family, nil
		}
		return o.Family, Parse("x-" + o.From).Version
	}, e)
	return overheads[max(i, 0)] // overheads[0] is the unknown engine's row
}

// Frontend is an engine's API server as a deployment nobody measured
// sees it: the per-request latency outside the engine's steps (HTTP,
// tokenising, the hand-off to the engine, streaming back) and the part of
// it that one server process does serially, so that a burst queues there.
// It belongs to the engine, not to a benchmark's host: a calibrated
// deployment's own frontend (its client, network and host) stays with it.
type Frontend struct {
	LatencyS float64 `json:"latency_s"`
	ServiceS float64 `json:"service_s"`
	// Cite names the measurements in a few words; Source says it all.
	Cite   string `json:"cite"`
	Source string `json:"source"`
}

// frontend is every engine's frontend prior: no per-engine
// measurement was found, and these are of vLLM V1's API server with the
// benchmark's client on the server's host. Where a deployment's client
// sits behind a network, a Kubernetes Service or a gateway, that time is
// the deployment's (its own fit, or --frontend-ms), not the engine's.
var frontend = Frontend{LatencyS: 0.005, ServiceS: 0.005,
	Cite: "vLLM 0.8.5 with the client on the server's host (iog's H100-PCIe runs, fixtures/corpus/g-iog-*)",
	Source: "latency 5 ms: capsim's fits of iog's vLLM 0.8.5 (V1) runs on H100-PCIe, benchmark_serving at 1–32 req/s on the server's host (inferred: their run_benchmark.sh passes it a port and no host), give 5.6 ms a request outside the engine where the data determine it (DeepSeek-R1-Distill-Qwen-1.5B, ±9%), 3.6–4.7 ms bounded with the step overheads for four 7–8B models (±42–62%); the other seven groups' data do not determine it. " +
		"Against the 20 ms this replaced (vLLM 0.23 behind a Kubernetes Service on an L4, ai.wmx.dev: a host's network in it), capsim fit --cv: every GPU held out, mean TTFT / TPOT 40.8 / 32.5% → 35.0 / 31.4% (experiments at 10 and 7 ms: 39.4 / 32.5%, 35.1 / 32.2%); every source, TTFT 42.0 → 36.0%; every engine version, TTFT 42.0 → 38.2% but TPOT 30.7 → 32.4%. " +
		"Serial work the same 5 ms (the simulator's API server does a request's work within its latency): bursts that measured more, 25 ms a request (1,000 128-token prompts at 37 and 44 req/s on vLLM 0.11, fixtures/corpus/b-gpustack-qwen3-14b-*.md) or 16 ms (vllm-project/vllm#12287, before V1's frontend optimisations), keep it in their own fits. Taken for every engine"}

// FrontendFor is the frontend prior of an engine label (the same
// for every engine and version until one is measured apart).
func FrontendFor(string) Frontend { return frontend }
