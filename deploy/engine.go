package deploy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/capsim/capsim/model"
)

// vllmFlags are the `vllm serve` flags an export may emit, per vLLM minor
// version, each checked in that release's engine-argument reference
// (docs.vllm.ai/en/v0.8.5/serving/engine_args.html for 0.8,
// docs.vllm.ai/en/v0.9.0/serving/engine_args.html for 0.9; the
// arguments come from vllm/engine/arg_utils.py at the tag). The model is
// the positional argument of `vllm serve`.
var vllmFlags = map[string][]string{
	"0.8": {"--tensor-parallel-size", "--pipeline-parallel-size", "--max-num-seqs", "--max-num-batched-tokens",
		"--max-model-len", "--gpu-memory-utilization", "--block-size", "--enforce-eager", "--port", "--served-model-name",
		"--kv-transfer-config"},
	"0.9": {"--tensor-parallel-size", "--pipeline-parallel-size", "--max-num-seqs", "--max-num-batched-tokens",
		"--max-model-len", "--gpu-memory-utilization", "--block-size", "--enforce-eager", "--port", "--served-model-name",
		"--kv-transfer-config"},
}

// Engine is an engine label resolved to what runs.
type Engine struct {
	Label string // e.g. "vllm-0.9.0.1", "dynamo-0.3.0"
	// Dynamo is the Dynamo version ("" for plain vLLM); VLLM the vLLM
	// version serving the workers (Dynamo 0.3 ships a patched vLLM 0.8.4:
	// container/deps/vllm/vllm_v0.8.4-dynamo-kv-disagg-patch.patch).
	Dynamo string
	VLLM   string
}

// dynamoVLLM is the vLLM each Dynamo release this package knows runs.
var dynamoVLLM = map[string]string{"0.3": "0.8.4"}

// ParseEngine resolves an engine label such as "vllm-0.9.0.1" or
// "dynamo-0.3.0" (split by model.ParseEngine); a label without a version
// cannot be exported, since flags and images depend on the release.
func ParseEngine(label string) (Engine, error) {
	me := model.ParseEngine(label)
	if len(me.Version) == 0 {
		return Engine{}, fmt.Errorf("deploy: engine %q names no version: flags and images depend on the release (want e.g. vllm-0.9.0.1 or dynamo-0.3.0)", label)
	}
	fam, ver := me.Family, strings.TrimPrefix(me.String(), me.Family+"-")
	e := Engine{Label: label}
	switch fam {
	case "vllm":
		e.VLLM = ver
	case "dynamo":
		e.Dynamo = ver
		v, ok := dynamoVLLM[minor(ver)]
		if !ok {
			return Engine{}, fmt.Errorf("deploy: engine %q: no export for Dynamo %s (known: Dynamo 0.3)", label, ver)
		}
		e.VLLM = v
	default:
		return Engine{}, fmt.Errorf("deploy: engine %q: unknown family %q (want vllm or dynamo)", label, fam)
	}
	if _, ok := vllmFlags[minor(e.VLLM)]; !ok {
		return Engine{}, fmt.Errorf("deploy: engine %q: no flag table for vLLM %s (known: 0.8, 0.9)", label, e.VLLM)
	}
	return e, nil
}

func minor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// Flags are the `vllm serve` flags the engine's vLLM version has (of those an export uses).
func (e Engine) Flags() []string { return vllmFlags[minor(e.VLLM)] }

// HasFlag reports whether the engine's vLLM version has flag.
func (e Engine) HasFlag(flag string) bool { return slices.Contains(e.Flags(), flag) }

// Image is the container image of the engine: vLLM's OpenAI server image
// at the version's tag, or for Dynamo the image its repository builds at
// the release tag (./container/build.sh, as seed 004 did), which has no
// public tag of its own.
func (e Engine) Image() string {
	if e.Dynamo != "" {
		return "dynamo:v" + e.Dynamo + "-vllm"
	}
	return "vllm/vllm-openai:v" + e.VLLM
}
