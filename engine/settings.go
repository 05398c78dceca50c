package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Device is what an engine's defaults read of the GPU: its catalog name
// (vLLM's rules match the device name) and the driver's memory figure.
type Device struct {
	Name        string
	MemoryBytes float64
}

// VLLMGraphMax is vLLM's default largest CUDA-graph capture batch
// (max_seq_len_to_capture's batch list stops at 512 in the V0 and early V1 releases).
const VLLMGraphMax = 512

// vLLM's settings where its version is not stated (the simulator's
// historic V0-style assumption), and the V1 budget on GPUs below the
// large-GPU rule: the values that callers pricing "some vLLM" fall back to.
const (
	VLLMBlockSize        = 16
	VLLMMaxNumSeqs       = 256
	VLLMMaxBatchedTokens = 8192
	VLLMV1SmallBudget    = 2048
	// VLLMGPUMemoryUtilization is --gpu-memory-utilization's default.
	VLLMGPUMemoryUtilization = 0.9
)

// GraphSizes are vLLM's default CUDA-graph capture sizes up to max:
// 1, 2, 4, then steps of 8.
func GraphSizes(max int) []int {
	sizes := []int{1, 2, 4}
	for b := 8; b <= max; b += 8 {
		sizes = append(sizes, b)
	}
	return sizes
}

// Settings are the engine settings one deployment runs with: what the
// engine computes when its command line says nothing (Defaults), what a
// benchmark stated, or what a user states (Stated), plus where its
// workers sit and how requests reach them. A calibration profile stores
// them per group in this layout. A zero limit or share is vLLM's default
// (Block, SeqCap, Budget, CUDAGraphs; GPUMemoryUtilization 0.9).
type Settings struct {
	BlockSize            int     `json:"block_size,omitempty"`             // KV block size in tokens (--block-size)
	MaxNumBatchedTokens  int     `json:"max_num_batched_tokens,omitempty"` // --max-num-batched-tokens: the per-step token budget
	MaxNumSeqs           int     `json:"max_num_seqs,omitempty"`           // --max-num-seqs
	MaxModelLen          int     `json:"max_model_len,omitempty"`          // --max-model-len; 0 is the model's own context length
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"` // --gpu-memory-utilization (SGLang's --mem-fraction-static)
	// KVCacheDtype is --kv-cache-dtype ("fp8", …); "" or "auto" keeps the
	// checkpoint's own.
	KVCacheDtype string `json:"kv_cache_dtype,omitempty"`
	// KVCacheGiB is a KV cache per GPU a record states (vLLM's
	// --kv-cache-memory-bytes, or the "Available KV cache memory" its log
	// prints); 0 means what GPUMemoryUtilization leaves. A calibrated group
	// keeps none: it holds for the one record's worker shape.
	KVCacheGiB float64 `json:"kv_cache_gib,omitempty"`
	// PrefillEager and DecodeEager: the prefill (disaggregated) or the
	// decode and aggregated workers run without CUDA graphs.
	PrefillEager bool `json:"prefill_eager,omitempty"`
	DecodeEager  bool `json:"decode_eager,omitempty"`
	// GraphMax is the largest CUDA-graph capture batch.
	GraphMax int `json:"cuda_graph_max,omitempty"`
	// Router and PrefillRouter are the balancers in front of the replicas
	// or decode workers and of the prefill workers (sim.Routing's names).
	Router        string `json:"router,omitempty"`
	PrefillRouter string `json:"prefill_router,omitempty"`
	// DelayedOutput: vLLM V0's asynchronous output processor (v0.6 on, on
	// by default): a step's tokens are detokenized and streamed while the
	// next step runs, so clients see each token a step late
	// (vllm/engine/llm_engine.py, use_async_output_proc). V1 streams a
	// step's outputs when it ends.
	DelayedOutput bool `json:"delayed_output,omitempty"`
	// AsyncScheduling is vLLM's --async-scheduling (true) or
	// --no-async-scheduling (false) where a run or user stated one; nil is
	// the version's default, on from 0.14 (AsyncSchedulingOn). It prices
	// the CPU overheads (OverheadWith).
	AsyncScheduling *bool `json:"async_scheduling,omitempty"`
	// Generation is the vLLM engine generation a run states where it is
	// not its release's own (VLLM_USE_V1); "" is the release's own. It
	// chooses the defaults and prices the CPU overheads (OverheadWith).
	Generation Generation `json:"engine_generation,omitempty"`
	// Nodes is how many servers each worker's GPUs span; 0 or 1 is one.
	Nodes int `json:"nodes,omitempty"`
	// PrefillFirst: new prompts run in steps of their own, ahead of the
	// running decodes, which wait meanwhile (SGLang, whose
	// --enable-mixed-chunk is off by default). vLLM and TensorRT-LLM mix
	// them into the decodes' steps.
	PrefillFirst bool `json:"prefill_first,omitempty"`
	// ReserveOutput: a prompt is admitted only while the KV cache can hold
	// every admitted request to its last token (TensorRT-LLM's default
	// GUARANTEED_NO_EVICT capacity scheduler); vLLM admits on the prompt
	// and preempts when the cache runs out. SGLang's decaying reserve is
	// not modelled: it is simulated as vLLM admits.
	ReserveOutput bool `json:"reserve_output,omitempty"`
	// ReserveGB is the memory per GPU the engine keeps out of its KV cache
	// beyond the weights; 0 is vLLM's rule, the peak of its profiling run
	// (model.ProfilePeakBytes) and the memory outside PyTorch, both the
	// release's own (MemoryProfile).
	ReserveGB float64 `json:"reserve_gb,omitempty"`
	// DPAttention is the data-parallel attention degree (SGLang's
	// --enable-dp-attention, with --dp or, as its 0.4 releases set it, the
	// TP degree): model.LLM.AttentionDP. 0 is attention split by TP.
	DPAttention int `json:"dp_attention,omitempty"`
	// ExpertParallel is the expert-parallel degree of a mixture of
	// experts' workers (model.LLM.ExpertParallel): vLLM's
	// --enable-expert-parallel spreads the experts over every GPU of a
	// worker, recorded as the widest pool's TP (model.Topology.WidestTP)
	// and following the target's TP when priced (calibrate.Configure);
	// SGLang's --ep-size and TensorRT-LLM's --ep_size state the degree.
	// 0 is experts split by TP.
	ExpertParallel int `json:"expert_parallel,omitempty"`
	// WindowPool is, for a model with sliding-window layers, the token
	// slots an engine sizes for them in a pool of their own per slot of
	// the full-attention cache (SGLang's --swa-full-tokens-ratio, 0.8 by
	// default). 0 is vLLM V1's hybrid KV cache manager, one block pool
	// from which each running request also takes the blocks over its last
	// window (sim.PoolConfig.WindowTokens).
	WindowPool float64 `json:"window_pool,omitempty"`
	// PrefixCaching is PrefixOn or PrefixOff: the engine caches prompts'
	// KV blocks for later requests that share their prefix (vLLM V1's
	// automatic prefix caching, on by default from V1, off in V0; SGLang's
	// radix cache; TensorRT-LLM's enable_block_reuse). "" is the version's
	// default.
	PrefixCaching string `json:"prefix_caching,omitempty"`
	// Rule names the engine's rule the defaults come from, for provenance.
	Rule string `json:"-"`
}

// Settings.PrefixCaching's values.
const (
	PrefixOn  = "on"
	PrefixOff = "off"
)

// PrefixSetting is PrefixOn or PrefixOff.
func PrefixSetting(on bool) string {
	if on {
		return PrefixOn
	}
	return PrefixOff
}

// Block, SeqCap and Budget are the KV block size, sequence cap and token
// budget a worker runs with: a zero setting is vLLM's default, the one
// place that rule is applied. The settings keep the zero because a KV
// cache's sizing reads an unstated budget as vLLM's profiling run does
// (VLLMV1SmallBudget), not as its scheduler's 8192.
func (s Settings) Block() int  { return cmp.Or(s.BlockSize, VLLMBlockSize) }
func (s Settings) SeqCap() int { return cmp.Or(s.MaxNumSeqs, VLLMMaxNumSeqs) }
func (s Settings) Budget() int { return cmp.Or(s.MaxNumBatchedTokens, VLLMMaxBatchedTokens) }

// CUDAGraphs are the CUDA-graph capture sizes the prefill (prefill true)
// or the other workers run with; nil when they run eager. The list is
// shared: not to be modified.
func (s Settings) CUDAGraphs(prefill bool) []int {
	if (prefill && s.PrefillEager) || (!prefill && s.DecodeEager) {
		return nil
	}
	top := cmp.Or(s.GraphMax, VLLMGraphMax)
	if g, ok := graphSizesOf.Load(top); ok {
		return g.([]int)
	}
	g := slices.Clip(GraphSizes(top))
	graphSizesOf.Store(top, g)
	return g
}

// graphSizesOf memoises GraphSizes (max → sizes): every worker a fit
// prices asked for the list anew, 6% of a cross-validation's CPU.
var graphSizesOf sync.Map

// Apply sets the settings st states over s. A stated memory utilization
// sizes the KV cache in place of a KV cache a record stated.
func (s *Settings) Apply(st Stated) {
	if st.MaxNumBatchedTokens > 0 {
		s.MaxNumBatchedTokens = st.MaxNumBatchedTokens
	}
	if st.MaxNumSeqs > 0 {
		s.MaxNumSeqs = st.MaxNumSeqs
	}
	if st.MaxModelLen > 0 {
		s.MaxModelLen = st.MaxModelLen
	}
	if st.GPUMemoryUtilization > 0 {
		s.GPUMemoryUtilization, s.KVCacheGiB = st.GPUMemoryUtilization, 0
	}
	if st.BlockSize > 0 {
		s.BlockSize = st.BlockSize
	}
	if st.PrefixCaching != nil {
		s.PrefixCaching = PrefixSetting(*st.PrefixCaching)
	}
	if st.EnforceEager != nil {
		s.PrefillEager, s.DecodeEager = *st.EnforceEager, *st.EnforceEager
	}
	if st.KVCacheDtype != "" {
		s.KVCacheDtype = strings.ToLower(st.KVCacheDtype)
	}
	if st.AsyncScheduling != nil {
		on := *st.AsyncScheduling
		s.AsyncScheduling = &on
	}
}

// fixedReserveGB is what SGLang's and TensorRT-LLM's rows keep out of the
// KV cache beside the weights: an assumption, as before vLLM's own rule
// was modelled. SGLang's --mem-fraction-static already leaves activations
// out, so what is left is the CUDA context and communication buffers;
// TensorRT-LLM gives its KV cache 90% of the memory free after the weights
// and a warm-up (free_gpu_memory_fraction), which, priced as that share,
// made its gpustack A100 runs' held-out TPOT 10–40 points worse (the
// engines' runtime buffers are not known): neither is modelled.
const fixedReserveGB = 2

// defaultsRule is one row of the engine-defaults table: from version since
// of a family on (until the next row of that family), the defaults for a
// GPU and max-model-len are apply's.
type defaultsRule struct {
	family string
	since  []int // nil: labels with no version
	apply  func(g Device, maxModelLen int) Settings
}

// vLLM's API server picks max-num-batched-tokens and max-num-seqs from the
// GPU by a rule that changed over releases (vllm/engine/arg_utils.py and
// the PRs' diffs; a PR's first release is inferred from its date):
//   - V0 (before v0.8.0): 256 sequences, output processing overlapped from
//     v0.6.0; chunked prefill (2048 tokens, #10544) only above a 32K
//     max-model-len, else a budget of max(max-model-len, 2048) with
//     prefills scheduled first. An unversioned label keeps 8192 / 256.
//   - V1 (from v0.8.0, #12369): 8192 / 1024 when the device name contains
//     "h100" or "h200", else 2048 / 256.
//   - #17073 (v0.8.5): 8192 / 1024 from 70 GiB of memory; #17885 (v0.9.0):
//     the same except A100s.
//
// The device name is the catalog name lower-cased ("h20" does not match
// "h200"); the memory is the driver's figure (GPU.DeviceMemoryBytes).
var defaultsTable = []defaultsRule{
	{"vllm", nil, vllmUnknown}, // version unknown: the simulator's historic V0-style assumption
	{"vllm", []int{0}, vllmV0}, // V0 engine
	{"vllm", []int{0, 6, 0}, func(g Device, maxModelLen int) Settings { // V0 with async output processing
		d := vllmV0(g, maxModelLen)
		d.DelayedOutput = true
		return d
	}},
	{"vllm", []int{0, 8, 0}, func(g Device, _ int) Settings { // V1 by device name (#12369)
		n := strings.ToLower(g.Name)
		return vllmV1(strings.Contains(n, "h100") || strings.Contains(n, "h200"), "vLLM V1 defaults by device name (vllm#12369)")
	}},
	{"vllm", []int{0, 8, 5}, func(g Device, _ int) Settings { // V1 by memory (#17073)
		return vllmV1(g.MemoryBytes >= 70<<30, "vLLM V1 defaults by device memory >= 70 GiB (vllm#17073)")
	}},
	{"vllm", []int{0, 9, 0}, func(g Device, _ int) Settings { // V1 by memory, not A100 (#17885)
		return vllmV1(g.MemoryBytes >= 70<<30 && !strings.Contains(strings.ToLower(g.Name), "a100"),
			"vLLM V1 defaults by device memory >= 70 GiB except A100 (vllm#17885)")
	}},
	// Dynamo 0.3 as NVIDIA's published disaggregated recipes run its vLLM
	// workers (the seed 004 document's YAML): block size 128, a 4096-token
	// budget, eager prefill workers, decode graphs up to 128.
	{"dynamo", nil, dynamoRecipe},
	// SGLang (python/sglang/srt/server_args.py, managers/scheduler.py of
	// sgl-project/sglang at its 0.4.6.post2 and 0.5.5.post1 version bumps,
	// 9858113 and 303cc95): see sglang04 and sglang05. A label without a
	// version takes the newer rule.
	{"sglang", nil, sglang05},
	{"sglang", []int{0}, sglang04},
	{"sglang", []int{0, 5, 0}, sglang05}, // read at 0.5.5.post1; the release that brought the memory table is not pinned
	// TensorRT-LLM's PyTorch backend (trtllm-serve): max_batch_size 2048
	// and max_num_tokens 8192 (BuildConfig's defaults, which its LLM
	// arguments take), context and generation requests mixed in one
	// iteration, a prompt admitted only when the KV cache can hold it to its
	// last token (the GUARANTEED_NO_EVICT capacity scheduler, which
	// trtllm-serve sets). Not modelled: it does not chunk a prompt
	// (enable_chunked_prefill off) where the simulator does. Read in
	// NVIDIA/TensorRT-LLM near 1.0–1.2, the exact tags not pinned.
	{"trtllm", nil, trtllmDefaults},
}

// vllmUnknown keeps prefix caching on: only workloads that state how
// their prompts share prefixes read it, and the harnesses that state that
// (inference-perf, vllm bench's prefix_repetition) postdate V1's default.
func vllmUnknown(Device, int) Settings {
	return Settings{BlockSize: VLLMBlockSize, MaxNumSeqs: VLLMMaxNumSeqs, MaxNumBatchedTokens: VLLMMaxBatchedTokens, GraphMax: VLLMGraphMax, PrefixCaching: PrefixOn,
		Rule: "vLLM, version not stated: 256 sequences, 8192-token budget"}
}

// V0Scheduling is how vLLM V0 schedules at a max-model-len: whether
// chunked prefill is on and the token budget. The API server turns
// chunked prefill on above 32K tokens; a stated flag (chunkStated) decides
// instead, and a stated budget below the max-model-len (budget > 0) can
// only run chunked. The default budget is 2048 with chunked prefill, else
// max(max-model-len, 2048), so a prompt never needs chunking; without it
// the scheduler runs prefills first ("Don't schedule decodes if prefills
// are scheduled", vllm/core/scheduler.py). Releases before v0.6.5 chunked
// at 512 tokens (vllm#10544, merged 2024-11-21, raised it); that is not
// modelled: tried on the corpus's V0 groups (dstack's vLLM 0.6.3
// Llama-405B runs), it improved the MI300X fit (TPOT 22 → 13%) but
// worsened the H100 one (TTFT 28 → 44%) and leave-one-GPU-out TTFT
// (26.4 → 27.1%), and whether those runs chunked at all is not stated.
func V0Scheduling(maxModelLen, budget int, chunkStated, chunkOn bool) (chunked bool, budgetOut int) {
	chunked = maxModelLen > 32768 || (budget > 0 && budget < maxModelLen)
	if chunkStated {
		chunked = chunkOn
	}
	switch {
	case budget > 0:
		return chunked, budget
	case chunked:
		return true, 2048
	}
	return false, max(maxModelLen, 2048)
}

func vllmV0(_ Device, maxModelLen int) Settings {
	chunked, budget := V0Scheduling(maxModelLen, 0, false, false)
	d := Settings{BlockSize: VLLMBlockSize, MaxNumSeqs: VLLMMaxNumSeqs, MaxNumBatchedTokens: budget, GraphMax: VLLMGraphMax, PrefillFirst: !chunked, PrefixCaching: PrefixOff,
		Rule: "vLLM V0 defaults: budget max(max-model-len, 2048), no chunked prefill, prefills first"}
	if chunked {
		d.Rule = "vLLM V0 defaults: chunked prefill above 32K max-model-len, 2048-token budget (vllm#10544)"
	}
	return d
}

func vllmV1(large bool, rule string) Settings {
	d := Settings{BlockSize: VLLMBlockSize, MaxNumSeqs: VLLMMaxNumSeqs, MaxNumBatchedTokens: VLLMV1SmallBudget, GraphMax: VLLMGraphMax, PrefixCaching: PrefixOn, Rule: rule}
	if large {
		d.MaxNumSeqs, d.MaxNumBatchedTokens = 1024, 8192
	}
	return d
}

// MemoryProfile is what vLLM V1 release e keeps out of its KV cache
// beyond the weights, read from its startup logs: its profiling run's
// dummy sampler, samplerBytes a logit of max-num-seqs rows of the
// vocabulary, and the memory outside PyTorch at TP1 and above. From
// v0.12, where every log agrees: 38.7 bytes, 0.13 and 0.55 GiB; v0.17:
// 15.4 bytes (0.13 GiB; 2.14 above TP1 taken from v0.18); v0.18 on: 15.4
// bytes, 0.25 and 2.14 GiB. Before v0.12 the logs disagree, by model
// within v0.11.0's (gpt-oss-120b's leaves 17.9 bytes where three others
// leave 38.4–38.9), and the older rule holds (zero here:
// model.SamplerBytesPerLogit, nothing outside PyTorch), as for other
// engines and V0 runs. The logs: docs/measurements/vllm-memory.md.
func MemoryProfile(e ID) (samplerBytes, nonTorchGiB, nonTorchTPGiB float64) {
	switch {
	case e.Family != VLLM || len(e.Version) == 0 || !e.AtLeast(0, 12):
		return 0, 0, 0
	case e.AtLeast(0, 18):
		return 15.4, 0.25, 2.14
	case e.AtLeast(0, 17):
		return 15.4, 0.13, 2.14
	}
	return 38.7, 0.13, 0.55
}

// sglangWindowPool is SGLang's --swa-full-tokens-ratio default
// (python/sglang/srt/server_args.py, 0.8 since its sliding-window memory
// pool came in for gpt-oss).
const sglangWindowPool = 0.8

// sglang04 is SGLang 0.4's server defaults: a chunked-prefill budget of
// 8192 tokens (2048 below 25,000 MiB), CUDA graphs to 160 sequences (8
// below 25,000 MiB at TP<4, 256 above 96 GiB), --mem-fraction-static 0.88 (the TP1 figure; above 96 GiB
// raised by 48 GiB × (1 − 0.88) ÷ memory, to at most memory − 18 GiB),
// page size 1, and its scheduler's prefill-first policy.
func sglang04(g Device, _ int) Settings {
	mib := g.MemoryBytes / (1 << 20)
	d := Settings{BlockSize: 1, MaxNumSeqs: sglangMaxRunning, MaxNumBatchedTokens: 8192, GraphMax: 160, GPUMemoryUtilization: 0.88, PrefillFirst: true, ReserveGB: fixedReserveGB, WindowPool: sglangWindowPool, PrefixCaching: PrefixOn,
		Rule: "SGLang 0.4 defaults: chunked prefill 8192 (2048 below 25,000 MiB), mem-fraction-static 0.88, page size 1, prefill first"}
	if mib < 25000 {
		d.MaxNumBatchedTokens, d.GraphMax = 2048, 8
	}
	if mib > 96*1024 {
		d.GraphMax = 256
		d.GPUMemoryUtilization = math.Min(0.88+48*1024*(1-0.88)/mib, (mib-18*1024)/mib)
	}
	return d
}

// sglang05 is SGLang 0.5's server defaults, set by device memory
// (_handle_gpu_memory_settings): the chunked-prefill budget is 2048 below
// 35 GiB, 4096 below 60 GiB, 8192 below 160 GiB and 16384 above; CUDA
// graphs go to 24, 32, 256 and 512 sequences in those bands and to 8
// below 20 GiB (the TP<4 figures); --mem-fraction-static leaves the memory less a reserve of
// 512 MiB + 1.5 × the budget + 2 MiB per graph size + 128 MiB per GPU of
// the worker (the TP1 figure), at least 10 GiB above 60 GiB; page size 1;
// prefill first.
func sglang05(g Device, _ int) Settings {
	mib := g.MemoryBytes / (1 << 20)
	d := Settings{BlockSize: 1, MaxNumSeqs: sglangMaxRunning, MaxNumBatchedTokens: 16384, GraphMax: 512, PrefillFirst: true, ReserveGB: fixedReserveGB, WindowPool: sglangWindowPool, PrefixCaching: PrefixOn,
		Rule: "SGLang 0.5 defaults by device memory: chunked prefill, CUDA graphs and mem-fraction-static from its memory bands, page size 1, prefill first"}
	switch {
	case mib < 20*1024:
		d.MaxNumBatchedTokens, d.GraphMax = 2048, 8
	case mib < 35*1024:
		d.MaxNumBatchedTokens, d.GraphMax = 2048, 24
	case mib < 60*1024:
		d.MaxNumBatchedTokens, d.GraphMax = 4096, 32
	case mib < 160*1024:
		d.MaxNumBatchedTokens, d.GraphMax = 8192, 256
	}
	reserve := 512 + 1.5*float64(max(d.MaxNumBatchedTokens, 2048)) + 2*float64(d.GraphMax) + 1024.0/8
	if mib > 60*1024 {
		reserve = math.Max(reserve, 10*1024)
	}
	d.GPUMemoryUtilization = math.Round((mib-reserve)/mib*1000) / 1000
	return d
}

// sglangMaxRunning is the ceiling of SGLang's running-request cap when
// --max-running-requests is unset: min(KV tokens ÷ 2, KV tokens ÷ context
// length × 512 clamped to 2048–4096). The ceiling is taken: below it the
// KV cache stops admissions first for all but the shortest requests.
const sglangMaxRunning = 4096

// trtllmDefaults: the block size and CUDA-graph sizes were not read in
// TensorRT-LLM's source; vLLM's are assumed.
func trtllmDefaults(Device, int) Settings {
	return Settings{BlockSize: 16, MaxNumSeqs: 2048, MaxNumBatchedTokens: 8192, GraphMax: VLLMGraphMax, ReserveOutput: true, ReserveGB: fixedReserveGB, PrefixCaching: PrefixOn,
		Rule: "TensorRT-LLM PyTorch backend defaults: max_batch_size 2048, max_num_tokens 8192, GUARANTEED_NO_EVICT"}
}

func dynamoRecipe(Device, int) Settings {
	return Settings{BlockSize: 128, MaxNumSeqs: 256, MaxNumBatchedTokens: 4096, GraphMax: 128, PrefillEager: true, MaxModelLen: 4096, PrefixCaching: PrefixOff,
		Rule: "Dynamo 0.3 disaggregated recipe (block 128, 4096-token budget, eager prefill)"}
}

// Defaults are an engine's defaults on a GPU serving a model at
// maxModelLen tokens (the deployment's max-model-len; some rules depend on
// it): the newest row of the table for the engine's family whose version the
// engine has reached (a label with no version takes the family's
// unversioned row). An unknown family gets vLLM's unversioned defaults, and
// an error saying so.
func Defaults(e ID, g Device, maxModelLen int) (Settings, error) {
	i := pickRow(len(defaultsTable), func(i int) (string, []int) { return defaultsTable[i].family, defaultsTable[i].since }, e)
	if i < 0 {
		return vllmUnknown(g, maxModelLen), fmt.Errorf("engine: no defaults known for engine %q: vLLM's assumed", e.Label)
	}
	return defaultsTable[i].apply(g, maxModelLen), nil
}
