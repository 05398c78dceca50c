package predict

import (
	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// BottleneckOf names what limits a deployment from the pool statistics of
// one simulated run (normally its most loaded one), by the same rules as a
// Prediction's Bottleneck.
func BottleneckOf(pools []sim.PoolStats) Bottleneck {
	return findBottleneck([]Point{{Pools: pools}})
}

// EngineSettings are the engine settings of one pool's workers, as a
// deployment needs them (vLLM's flag names in the comments).
type EngineSettings struct {
	Role    string `json:"role"` // "replicas", "prefill" or "decode"
	Workers int    `json:"workers"`
	TP      int    `json:"tp"` // --tensor-parallel-size
	PP      int    `json:"pp"` // --pipeline-parallel-size
	// MaxNumSeqs, MaxNumBatchedTokens and BlockSize are --max-num-seqs,
	// --max-num-batched-tokens and --block-size.
	MaxNumSeqs          int `json:"max_num_seqs"`
	MaxNumBatchedTokens int `json:"max_num_batched_tokens"`
	BlockSize           int `json:"block_size"`
	// Eager is --enforce-eager (no CUDA graphs), as the calibrated workers ran.
	Eager bool `json:"enforce_eager,omitempty"`
	// PrefixCaching ("on" or "off") and KVCacheDtype are
	// --enable-prefix-caching / --no-enable-prefix-caching and
	// --kv-cache-dtype where they were stated (calibrate.Target.Stated);
	// "" leaves them to the engine.
	PrefixCaching string `json:"prefix_caching,omitempty"`
	KVCacheDtype  string `json:"kv_cache_dtype,omitempty"`
	// AsyncScheduling is --async-scheduling (true) or
	// --no-async-scheduling (false) as priced: where the user or the
	// calibrated run stated it; nil leaves it to the engine.
	AsyncScheduling *bool `json:"async_scheduling,omitempty"`
	// Generation is the vLLM engine generation the priced run stated where
	// it is not its release's own (engine.Settings.Generation), exported
	// as VLLM_USE_V1; "" leaves the release's own.
	Generation engine.Generation `json:"engine_generation,omitempty"`
	// DPAttention is SGLang's --dp with --enable-dp-attention, as the
	// calibrated workers ran: each of the groups holds its own requests'
	// KV cache and a whole copy of the attention weights.
	DPAttention int `json:"dp_attention,omitempty"`
	// ExpertParallel is the expert-parallel degree a mixture of experts'
	// workers were priced with (model.LLM.ExpertParallelAt): vLLM's
	// --enable-expert-parallel where it is the worker's TP; 0 is experts
	// split by TP.
	ExpertParallel int `json:"expert_parallel,omitempty"`
	// Searched is true when the planner chose a value other than the
	// engine's default for this deployment.
	Searched bool `json:"searched,omitempty"`
}

// SettingsOf reports the engine settings of every pool of d, as its
// simulator pools run them.
func SettingsOf(d calibrate.Deployment) []EngineSettings {
	one := func(role string, p sim.PoolConfig, eager bool, pool model.Pool) EngineSettings {
		// A pipeline runs as Microbatches virtual workers, each with that
		// share of the sequences (model.Pool.Microbatches): the engine
		// has the whole of both.
		mb := max(pool.Microbatches(), 1)
		s := EngineSettings{Role: role, Workers: p.Workers / mb, TP: pool.TP, PP: pool.Stages(), MaxNumSeqs: p.MaxNumSeqs * mb,
			MaxNumBatchedTokens: p.MaxBatchedTokens, BlockSize: p.BlockSize, Eager: eager, DPAttention: dpAttention(d.LLM.AttentionDPAt(pool.TP)),
			KVCacheDtype: d.Stated.KVCacheDtype}
		if ep := d.LLM.ExpertParallelAt(pool.TP); ep > 1 {
			s.ExpertParallel = ep
		}
		if engine.HasAsyncScheduling(d.Engine) {
			s.AsyncScheduling = d.Settings.AsyncScheduling
		}
		if d.Engine.Family == engine.VLLM {
			s.Generation = d.Settings.Generation
		}
		if d.Stated.PrefixCaching != nil {
			s.PrefixCaching = d.Settings.PrefixCaching
		}
		return s
	}
	c, st := d.Config, d.Settings
	if c.Prefill.Workers > 0 || c.Decode.Workers > 0 {
		return []EngineSettings{one("prefill", c.Prefill, st.PrefillEager, d.Topology.Prefill), one("decode", c.Decode, st.DecodeEager, d.Topology.Decode)}
	}
	return []EngineSettings{one("replicas", c.Replicas, st.DecodeEager, d.Topology.Replicas)}
}

// dpAttention reports a degree of data-parallel attention as the engine
// flag states it: 0 for attention split by TP.
func dpAttention(dp int) int {
	if dp > 1 {
		return dp
	}
	return 0
}
