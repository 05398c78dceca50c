package plan

import (
	"fmt"
	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/sim"
)

// Result is the outcome of a search.
type Result struct {
	Model string `json:"model"`
	ISL   int    `json:"isl"`
	OSL   int    `json:"osl"`
	// PrefixHitRate is Options.Workload.PrefixHitRate, the prefix-cache hit rate assumed.
	PrefixHitRate float64 `json:"prefix_hit_rate,omitempty"`
	// Sharing is Options.Workload.Sharing, the prompts' prefix sharing simulated.
	Sharing model.Sharing `json:"sharing,omitzero"`
	// Dataset is Options.Workload.Dataset, the dataset request lengths were drawn from.
	Dataset string     `json:"dataset,omitempty"`
	Load    model.Load `json:"load"`
	SLOs    []SLO      `json:"slos"`
	// GPUTypes are the GPU types searched.
	GPUTypes []string `json:"gpu_types"`
	MaxGPUs  int      `json:"max_gpus"`
	// CostUnit is CostPerHour ("$/h") when GPUs have prices, else
	// CostGPUs ("GPUs": a count, alike for every GPU type).
	CostUnit string `json:"cost_unit"`
	// Mode is how verdicts were simulated: "steady-state".
	Mode sim.Mode `json:"mode"`
	// Confidence is Options.Confidence; BandSigmas the cost-band position
	// (standard deviations, pessimistic) every verdict was simulated at.
	Confidence float64 `json:"confidence"`
	BandSigmas float64 `json:"band_sigmas"`
	// FrontendMS is Options.Frontend in ms, the per-request latency outside
	// the engine stated for aggregated candidates; nil when not stated.
	FrontendMS *float64 `json:"frontend_ms,omitempty"`
	// KVLink is Options.KVLink: the link disaggregated candidates' KV
	// transfers were priced on ("" by their size).
	KVLink string `json:"kv_link,omitempty"`
	// Margin says what the confidence margin cost: the cheapest deployment
	// meeting the SLOs with central costs against the recommendation.
	Margin *Margin `json:"margin,omitempty"`
	Search Search  `json:"search"`
	// Recommendations meet every SLO, cheapest first, then most headroom.
	Recommendations []Recommendation `json:"recommendations"`
	// Frontier is the Pareto frontier of output throughput per GPU against
	// output speed per user over the fully simulated candidates that meet
	// the SLOs (all of them when none does), fastest per user first;
	// FrontierOf says which.
	Frontier   []FrontierPoint `json:"pareto"`
	FrontierOf string          `json:"pareto_of"`
	// Cloud is every fully simulated candidate (for plots; not in JSON).
	Cloud []FrontierPoint `json:"-"`
	// Why says why nothing qualifies when Recommendations is empty.
	Why string `json:"why,omitempty"`
	// Best is, per SLO, the best value any candidate achieved (when none qualifies).
	Best []Achieved `json:"best,omitempty"`
	// Limits are the search limits that cut off deployments which might
	// beat the recommendations (LimitBound); empty when none did.
	Limits []LimitBound `json:"limits_bound,omitempty"`
	// Notes are things the caller should tell the user (GPUs left out, extrapolation).
	Notes []string `json:"notes,omitempty"`
}

// Search counts what happened to the candidates. Every candidate is in
// exactly one of the last five counts.
type Search struct {
	Candidates int `json:"candidates"`
	// TooSlow could not meet an SLO even alone: its latency floor (one
	// prompt's prefill, one decode step) exceeds the limit.
	TooSlow int `json:"pruned_latency_floor"`
	// Overloaded cannot sustain the target rate even with perfect batching.
	Overloaded int `json:"pruned_capacity"`
	// Costlier cost more than TopK deployments already found feasible.
	Costlier int `json:"skipped_costlier"`
	// ShortMissed clearly missed an SLO in a short run and got no full run.
	ShortMissed int `json:"missed_short_run"`
	// Simulated got a full run; Feasible of them met every SLO.
	Simulated int `json:"simulated"`
	Feasible  int `json:"feasible"`
	// FrontierRuns are candidates beyond the cutoff simulated to widen the Pareto frontier.
	FrontierRuns int `json:"frontier_runs"`
	// SettingsTried counts near misses (within 1.15× of an SLO) that tried
	// other engine settings; SettingsFound those that then met every SLO.
	SettingsTried int `json:"settings_tried"`
	SettingsFound int `json:"settings_found"`
	// MarginSimulations are the runs of the central-cost search behind Margin
	// (not in JSON: how many candidates beyond the final cutoff it ran depends on timing).
	MarginSimulations int `json:"-"`
	// Simulations is the number of simulator runs in all, headroom included.
	Simulations int `json:"simulations"`
}

// Recommendation is one deployment that meets every SLO.
type Recommendation struct {
	Rank   int    `json:"rank"`
	GPU    string `json:"gpu"`
	Engine string `json:"engine"`
	// Topology is "4xTP4" or "prefill 6xTP2 + decode 1xTP4"; Notation the
	// Dynamo form "6P(TP2) 1D(TP4)" (same as Topology when aggregated).
	Topology model.Topology `json:"-"`
	Layout   string         `json:"topology"`
	Notation string         `json:"notation"`
	// DPAttention is the SGLang data-parallel attention degree the search
	// chose for every worker (--enable-dp-attention --dp N); 0 when the
	// attention is split by TP or the engine has no such setting.
	DPAttention int     `json:"dp_attention,omitempty"`
	GPUs        int     `json:"gpus"`
	Cost        float64 `json:"cost"`
	// Metrics are the simulated vLLM metrics at the target load.
	Metrics map[string]float64 `json:"metrics"`
	// SLOValues are the simulated values of the SLO metrics, in SLO order.
	SLOValues []Achieved `json:"slo_values"`
	// OutputPerGPU is output tokens per second per GPU; PerUser output
	// tokens per second per user (1000 / mean TPOT).
	OutputPerGPU float64            `json:"output_throughput_per_gpu"`
	PerUser      float64            `json:"output_tokens_per_user"`
	Headroom     Headroom           `json:"headroom"`
	Bottleneck   predict.Bottleneck `json:"bottleneck"`
	// Costs is "fitted" when every pool's costs were fitted on this exact
	// shape, else "derived" (or "prior"); Uncertainty is the largest
	// relative uncertainty of a pool's typical step time.
	Costs       string                 `json:"costs"`
	Uncertainty float64                `json:"uncertainty"`
	Derived     []calibrate.Derivation `json:"derived"`
	// Bound is the capacity bound from costs alone, in requests per second.
	Bound float64 `json:"capacity_bound"`
	// Settings are the engine settings of each pool (chosen by the search
	// where Searched); Steady how the verdict's steady-state run measured.
	Settings []predict.EngineSettings `json:"engine_settings"`
	// MaxModelLen and GPUMemoryUtilization are the engine's --max-model-len
	// and --gpu-memory-utilization as configured (0: vLLM's default).
	MaxModelLen          int     `json:"max_model_len"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"`
	// KVFitTokens is the longest request one worker's KV cache holds
	// (predict.KVFit): an export's --max-model-len is at most it.
	KVFitTokens int `json:"kv_fit_tokens,omitempty"`
	// Router is how the verdicts' simulation spread requests over several
	// replicas or decode workers ("" for one; predict.RouterOf).
	Router string `json:"router,omitempty"`
	// Frontend is the per-request frontend latency when it was carried
	// from another GPU or model's deployment or stated
	// (calibrate.Deployment.FrontendFrom).
	Frontend string      `json:"frontend,omitempty"`
	Steady   *sim.Steady `json:"steady,omitempty"`
	// Central are the SLO values with central costs (band 0) at the target
	// load, for comparison with SLOValues at the pessimistic edge.
	Central []Achieved `json:"slo_values_central,omitempty"`
}

// Margin is what the confidence margin cost.
type Margin struct {
	// CentralBest is the cheapest deployment meeting every SLO with central
	// costs, and CentralCost its cost ("" and 0 when none does).
	CentralBest string  `json:"central_best,omitempty"`
	CentralGPU  string  `json:"central_gpu,omitempty"`
	CentralGPUs int     `json:"central_gpus,omitempty"`
	CentralCost float64 `json:"central_cost"`
	// Cost is the recommendation's cost; Extra = Cost − CentralCost.
	Cost  float64 `json:"cost"`
	Extra float64 `json:"extra"`
}

// Headroom is the highest load at which a deployment still meets every SLO.
type Headroom struct {
	// RequestRate (open loop) or MaxConcurrency (closed loop) of the highest passing load.
	RequestRate    float64 `json:"request_rate,omitempty"`
	MaxConcurrency int     `json:"max_concurrency,omitempty"`
	// Ratio is that load over the target load.
	Ratio float64 `json:"ratio"`
	// AtLeast is true when the search stopped at its upper end still passing.
	AtLeast bool `json:"at_least,omitempty"`
	// Binding is the SLO missed first above the headroom ("" when AtLeast),
	// or BindingSaturated.
	Binding string `json:"binding_slo,omitempty"`
}

// Achieved is a simulated value of one SLO's metric, and where it came from.
type Achieved struct {
	SLO   string  `json:"slo"` // e.g. "ttft_p99"
	Limit float64 `json:"limit_ms"`
	Value float64 `json:"value_ms"`
	Met   bool    `json:"met"`
	// By names the deployment (only in Result.Best).
	By string `json:"by,omitempty"`
}

// FrontierPoint is one candidate on the throughput/latency plane.
type FrontierPoint struct {
	GPU          string  `json:"gpu"`
	Layout       string  `json:"topology"`
	Notation     string  `json:"notation"`
	DPAttention  int     `json:"dp_attention,omitempty"` // as Recommendation.DPAttention
	GPUs         int     `json:"gpus"`
	Cost         float64 `json:"cost"`
	OutputPerGPU float64 `json:"output_throughput_per_gpu"`
	PerUser      float64 `json:"output_tokens_per_user"`
	MeetsSLOs    bool    `json:"meets_slos"`
}

// Shape is a recommendation's Notation with any data-parallel attention:
// "1xTP8 DP-attention 8".
func (r Recommendation) Shape() string { return shape(r.Notation, r.DPAttention) }

// Label names a recommendation's deployment: its GPU and Shape.
func (r Recommendation) Label() string { return r.GPU + " " + r.Shape() }

// Shape is a point's Notation with any data-parallel attention.
func (p FrontierPoint) Shape() string { return shape(p.Notation, p.DPAttention) }

// Label names a point's deployment: its GPU and Shape.
func (p FrontierPoint) Label() string { return p.GPU + " " + p.Shape() }

func shape(notation string, dp int) string { return notation + dpSuffix(dp) }

// dpSuffix names a data-parallel attention degree after a topology
// (" DP-attention 8"); "" for attention split by TP.
func dpSuffix(dp int) string {
	if dp > 1 {
		return fmt.Sprintf(" DP-attention %d", dp)
	}
	return ""
}

// Notation formats a topology as the Dynamo write-ups do: "6P(TP2) 1D(TP4)",
// or "4xTP4" when aggregated.
func Notation(t model.Topology) string { return t.Notation() }

// The units of Result.CostUnit.
const (
	CostGPUs    = "GPUs"
	CostPerHour = "$/h"
)

// BindingSaturated is Headroom.Binding when every latency is within its
// limit above the headroom but the queue grows.
const BindingSaturated = "saturated"
