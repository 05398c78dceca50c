package engine

import (
	"fmt"
	"slices"
)

// The `vllm serve` flags an export emits beside Stated's (FlagNames).
const (
	FlagTensorParallelSize   = "tensor-parallel-size"
	FlagPipelineParallelSize = "pipeline-parallel-size"
	FlagPort                 = "port"
	FlagServedModelName      = "served-model-name"
	FlagKVTransferConfig     = "kv-transfer-config"
)

// vllmServeFlags are the `vllm serve` flags an export may emit, each
// checked in the engine-argument reference of vLLM 0.8 and 0.9 alike
// (docs.vllm.ai/en/v0.8.5/serving/engine_args.html,
// docs.vllm.ai/en/v0.9.0/serving/engine_args.html; the arguments come
// from vllm/engine/arg_utils.py at the tag). The model is the positional
// argument of `vllm serve`. --kv-cache-dtype and
// --[no-]enable-prefix-caching are also in Cloudera's list of vLLM
// 0.8.5's arguments (docs.cloudera.com, CAII 1.5.5 SP2).
var vllmServeFlags = []string{"--" + FlagTensorParallelSize, "--" + FlagPipelineParallelSize, "--" + FlagMaxNumSeqs,
	"--" + FlagMaxNumBatchedTokens, "--" + FlagMaxModelLen, "--" + FlagGPUMemoryUtilization, "--" + FlagBlockSize,
	"--" + FlagEnforceEager, "--" + FlagPort, "--" + FlagServedModelName, "--" + FlagKVTransferConfig,
	"--" + FlagKVCacheDtype, "--" + FlagPrefixCaching, "--no-" + FlagPrefixCaching}

// vllmAsyncServeFlags are 0.10's to 0.14's: the flags above, taken as
// unchanged (not re-read at each tag), --async-scheduling with its
// --no- form, which came in with 0.10 (SchedulerConfig.async_scheduling),
// and --enable-expert-parallel (ParallelConfig.enable_expert_parallel),
// which public 0.11 runs state (ML.ENERGY's leaderboard v3 configs,
// GPUStack's Qwen3-235B pages); 0.8's and 0.9's were not checked for it,
// so an export for them refuses it.
var vllmAsyncServeFlags = append(slices.Clip(vllmServeFlags), "--"+FlagAsyncScheduling, "--no-"+FlagAsyncScheduling, "--"+FlagExpertParallel)

// vllmFlags are the flags per vLLM minor version an export knows.
var vllmFlags = map[string][]string{"0.8": vllmServeFlags, "0.9": vllmServeFlags,
	"0.10": vllmAsyncServeFlags, "0.11": vllmAsyncServeFlags, "0.12": vllmAsyncServeFlags, "0.13": vllmAsyncServeFlags, "0.14": vllmAsyncServeFlags}

// Serving is an engine label resolved to what runs and is deployed.
type Serving struct {
	Label string // e.g. "vllm-0.9.0.1", "dynamo-0.3.0"
	// Dynamo is the Dynamo version ("" for plain vLLM); VLLM the vLLM
	// version serving the workers (Dynamo 0.3 ships a patched vLLM 0.8.4:
	// container/deps/vllm/vllm_v0.8.4-dynamo-kv-disagg-patch.patch).
	Dynamo string
	VLLM   string
}

// dynamoVLLM is the vLLM each Dynamo release this package knows runs.
var dynamoVLLM = map[string]string{"0.3": "0.8.4"}

// Serve resolves an engine label such as "vllm-0.9.0.1" or
// "dynamo-0.3.0" to what a deployment runs; a label without a version
// cannot be deployed, since flags and images depend on the release.
func Serve(label string) (Serving, error) {
	id := Parse(label)
	if len(id.Version) == 0 {
		return Serving{}, fmt.Errorf("engine: %q names no version: flags and images depend on the release (want e.g. vllm-0.9.0.1 or dynamo-0.3.0)", label)
	}
	ver := id.VersionString()
	s := Serving{Label: label}
	switch id.Family {
	case VLLM:
		s.VLLM = ver
	case Dynamo:
		s.Dynamo = ver
		v, ok := dynamoVLLM[id.Minor()]
		if !ok {
			return Serving{}, fmt.Errorf("engine: %q: no export for Dynamo %s (known: Dynamo 0.3)", label, ver)
		}
		s.VLLM = v
	default:
		return Serving{}, fmt.Errorf("engine: %q: unknown family %q (want vllm or dynamo)", label, id.Family)
	}
	if _, ok := vllmFlags[s.vllm().Minor()]; !ok {
		return Serving{}, fmt.Errorf("engine: %q: no flag table for vLLM %s (known: 0.8 to 0.14)", label, s.VLLM)
	}
	return s, nil
}

func (s Serving) vllm() ID { return Parse(VLLM + "-" + s.VLLM) }

// Flags are the `vllm serve` flags the engine's vLLM version has (of those an export uses).
func (s Serving) Flags() []string { return vllmFlags[s.vllm().Minor()] }

// HasFlag reports whether the engine's vLLM version has flag.
func (s Serving) HasFlag(flag string) bool { return slices.Contains(s.Flags(), flag) }

// Image is the container image of the engine: vLLM's OpenAI server image
// at the version's tag, or for Dynamo the image its repository builds at
// the release tag (./container/build.sh, as seed 004 did), which has no
// public tag of its own.
func (s Serving) Image() string {
	if s.Dynamo != "" {
		return "dynamo:v" + s.Dynamo + "-vllm"
	}
	return "vllm/vllm-openai:v" + s.VLLM
}
