package plan

import (
	"context"
	"errors"
	"math"
	"runtime"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// Profile is what plan needs of a calibration profile; *calibrate.Profile
// satisfies it, and tests substitute fakes. plan calls it from one
// goroutine at a time.
type Profile interface {
	// Configure builds the simulator configuration of a deployment, or says why it cannot.
	Configure(t calibrate.Target) (calibrate.Deployment, error)
	// ResolveEngine picks the engine for a GPU, model, label prefix
	// and mode ("" prefix: the profile's default for the mode).
	ResolveEngine(gpu, model, prefix string, disaggregated bool) (engine.ID, error)
}

// Options describe the search. Zero values are the documented defaults.
type Options struct {
	// Model is the LLM to serve, by Hugging Face id or short name (required).
	Model string
	// GPUs are the GPU types to search, by catalog name or alias; empty means
	// every catalog GPU on which the profile has fitted or derived costs for the model.
	GPUs []string
	// Engine is an engine label prefix (e.g. "vllm", "dynamo"); "" means the
	// profile's default: Dynamo for disaggregated, the newest vLLM for aggregated.
	Engine string
	// Workload is the traffic to serve: ISL and OSL (required), the target
	// Load (required: model.Open(rate, burstiness) or model.Closed(n)),
	// and optionally a Dataset, prefix Sharing (one turn) or a
	// PrefixHitRate. NumPrompts is the measured requests of a verdict's
	// first steady-state run (sim.Converge doubles them until the
	// statistics are stable; 0 means predict.DefaultNumPrompts, at least
	// 10,000); Seed makes the same options give the same result.
	Workload workload.Workload
	// SLOs must all be met (required).
	SLOs []SLO
	// MaxGPUs caps a deployment's GPU count; 0 means DefaultMaxGPUs, at most MaxGPUsLimit.
	MaxGPUs int
	// GPUCost is the price of one GPU-hour by catalog GPU name. When set,
	// deployments rank by cost per hour and GPUs without a price are left
	// out (with a note); when nil they rank by GPU count.
	GPUCost map[string]float64
	// TopK is how many recommendations to return (with headroom); 0 means DefaultTopK.
	TopK int
	// TPs are the tensor-parallel degrees to try; empty means DefaultTPs
	// (each only where the model fits in memory).
	TPs []int
	// Aggregated and Disaggregated restrict the search to one mode; both
	// false means both modes.
	Aggregated, Disaggregated bool
	// Confidence is how sure a verdict is that the deployment meets every
	// SLO given the uncertainty of its costs: every verdict and headroom run
	// prices each pool at the pessimistic z = Φ⁻¹(Confidence) edge of its
	// cost band (calibrate.Target.Band). 0 means Φ(1) ≈ 0.841, the +1σ edge
	// of the band predict prints; 0.5 is the central costs.
	Confidence float64
	// Steady bounds the steady-state runs behind every verdict; zero values
	// are sim's defaults.
	Steady sim.SteadyOptions
	// NoSettingsSearch keeps every engine at its default max-num-seqs and
	// max-num-batched-tokens instead of trying others on near misses.
	NoSettingsSearch bool
	// Stated are engine settings every candidate runs with
	// (calibrate.Target.Stated); a stated max-num-seqs or
	// max-num-batched-tokens is pinned: the settings search leaves it.
	Stated engine.Stated
	// NoDPAttentionSearch keeps every SGLang deployment's attention as its
	// calibrated group ran it instead of trying both attention split by TP
	// and one data-parallel attention group per TP rank
	// (--enable-dp-attention --dp TP; calibrate.Target.DPAttention).
	NoDPAttentionSearch bool
	// NoMargin skips the second, central-cost search that says what the
	// confidence margin costs.
	NoMargin bool
	// NoSweep skips the extra simulations that widen the Pareto frontier
	// beyond the cheapest deployments (the frontier then covers only what
	// the search itself simulated).
	NoSweep bool
	// Router is the load balancer in front of replicas and decode workers
	// (round-robin, least-outstanding, random); "" keeps what the profile
	// states or chose for a calibrated group, else round-robin.
	Router string
	// Frontend, when set, is the per-request latency outside the engine in
	// seconds that aggregated candidates are priced with
	// (calibrate.Target.Frontend); nil keeps each candidate's calibrated
	// one or its engine's prior. Disaggregated candidates keep theirs (a
	// calibrated one inside its fitted prefill and transfer costs).
	Frontend *float64
	// KVLink, when set, names the link every disaggregated candidate's KV
	// transfers cross (calibrate.Target.KVLink); "" takes the one each
	// candidate's size implies. A link within a server caps disaggregated
	// candidates at one server's GPUs, and leaves out GPUs without it.
	KVLink string
	// Workers is the number of simulations run at once; 0 means GOMAXPROCS.
	Workers int
	// Simulate runs one simulation; nil means sim.Run.
	Simulate func(ctx context.Context, cfg sim.Config) (*sim.Result, error)
	// Progress, if set, is called as candidates are evaluated (never concurrently).
	Progress func(Progress)

	noShortRuns bool // tests: check that short runs change no verdict
}

// DefaultConfidence is Φ(1): verdicts at the +1σ edge of the cost band.
var DefaultConfidence = 0.5 * (1 + math.Erf(1/math.Sqrt2))

// Band is the cost-band position, in standard deviations, that Confidence
// asks for: Φ⁻¹(Confidence).
func (o Options) Band() float64 {
	c := o.Confidence
	if c == 0 {
		c = DefaultConfidence
	}
	return math.Sqrt2 * math.Erfinv(2*c-1)
}

// Progress reports how far the search is.
type Progress struct {
	Phase    string // "search", "headroom", "frontier" or "margin"
	Done     int    // candidates (or recommendations) finished in this phase
	Total    int
	Feasible int // candidates found to meet every SLO so far
}

// Stage says what the phase does, for a progress line.
func (p Progress) Stage() string {
	switch p.Phase {
	case "headroom":
		return "headroom of the leaders"
	case "frontier":
		return "widening the Pareto frontier"
	case "margin":
		return "central-cost search"
	}
	return "candidates"
}

// The defaults of Options.MaxGPUs, TopK and TPs, when zero or empty.
const (
	DefaultMaxGPUs = 64
	DefaultTopK    = 5
)

// MaxGPUsLimit bounds Options.MaxGPUs: the candidates grow with its square.
// capsim plan --model Qwen3-32B --isl 3000 --osl 150 --rate 20 --slo
// ttft_p99=2000ms over every catalog GPU took 57 s and 0.7 GB at 256 GPUs,
// 154 s and 2.4 GB at 512, on a shared 2-core machine.
const MaxGPUsLimit = 512

// ErrTooManyGPUs is matched (errors.Is) by the error for MaxGPUs above
// MaxGPUsLimit, so a caller can name its own option.
var ErrTooManyGPUs = errors.New("plan: max GPUs above the limit")

type maxGPUsError struct{ msg string }

func (e *maxGPUsError) Error() string        { return e.msg }
func (e *maxGPUsError) Is(target error) bool { return target == ErrTooManyGPUs }

// DefaultTPs returns the tensor-parallel degrees searched when Options.TPs is empty.
func DefaultTPs() []int { return []int{1, 2, 4, 8} }

// MaxTopK bounds Options.TopK.
const MaxTopK = 100

func (o Options) withDefaults() Options {
	if o.MaxGPUs == 0 {
		o.MaxGPUs = DefaultMaxGPUs
	}
	if o.TopK == 0 {
		o.TopK = DefaultTopK
	}
	if len(o.TPs) == 0 {
		o.TPs = DefaultTPs()
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if !o.Aggregated && !o.Disaggregated {
		o.Aggregated, o.Disaggregated = true, true
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Simulate == nil {
		o.Simulate = sim.Run
	}
	return o
}
