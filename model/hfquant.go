package model

import (
	"fmt"
	"sort"
	"strings"
)

// quantConfig holds config.json's quantization_config: the fields of
// every method capsim maps onto a Quantization.
type quantConfig struct {
	Method       string             `json:"quant_method"`
	Bits         *int               `json:"bits"`       // AWQ, GPTQ
	QuantAlgo    string             `json:"quant_algo"` // ModelOpt inside config.json
	KVCacheAlgo  *string            `json:"kv_cache_quant_algo"`
	ConfigGroups map[string]ctGroup `json:"config_groups"` // compressed-tensors
	KVScheme     *ctArgs            `json:"kv_cache_scheme"`
	Quantization *hfQuantSection    `json:"quantization"` // hf_quant_config.json's form
}

// ctGroup is one compressed-tensors scheme: its weights' and input
// activations' formats.
type ctGroup struct {
	Weights *ctArgs `json:"weights"`
	Inputs  *ctArgs `json:"input_activations"`
}

type ctArgs struct {
	Bits int    `json:"num_bits"`
	Type string `json:"type"`
}

// hfQuantSection is hf_quant_config.json's "quantization" object, as
// NVIDIA's Model Optimizer writes it.
type hfQuantSection struct {
	QuantAlgo   string  `json:"quant_algo"`
	KVCacheAlgo *string `json:"kv_cache_quant_algo"`
}

// mxfp4Bytes is one MXFP4 weight with its shared 8-bit scale per 32.
const mxfp4Bytes = 4.25 / 8

// mxfp4LoadedBytes is one MXFP4 expert weight as vLLM holds it on a GPU
// without FP4 tensor cores, repacked for its MoE kernels: gpt-oss-120b
// "Model loading took 64.38 GiB" on one H100 with vLLM 0.14.1's Triton
// backend (vllm-project/vllm#33155), against 65.2 GB (60.7 GiB) stored;
// less its 4.27 GB of BF16 attention and embeddings that is 64.86 GB over
// 114.67 B expert weights, 6.5% above mxfp4Bytes. vLLM 0.10.1's Marlin
// backend took 65.97 GiB (vllm-project/vllm#23278, 9.3% above). Taken for
// every engine and GPU (an assumption: other kernels pad differently).
// Before it, a lone H100 was priced with 8.1 GB of KV cache for
// gpt-oss-120b, room for the 131,072-token context GPUStack's runs had
// to cut to 32,768 to start.
const mxfp4LoadedBytes = 0.5656

// apply sets m's quantization from the config; field names the object
// in errors ("quantization_config", or the hf_quant_config.json key).
func (q quantConfig) apply(m *LLM, field string) error {
	method := strings.ToLower(q.Method)
	switch method {
	case "fp8", "fbgemm_fp8":
		m.Quant = QuantFP8
	case "awq", "gptq", "awq_marlin", "gptq_marlin":
		if b := intOr(q.Bits, 4); b != 4 {
			return fmt.Errorf("field %q: %d-bit %s is not supported (4-bit only)", field+".bits", b, method)
		}
		m.Quant = QuantInt4
	case "mxfp4":
		// gpt-oss keeps attention and embeddings in BF16 and stores its
		// experts in MXFP4.
		if m.IsMoE() {
			m.ExpertBytes, m.ExpertLoadedBytes = mxfp4Bytes, mxfp4LoadedBytes
		} else {
			m.Quant = QuantFP4
		}
	case "modelopt":
		return modelOpt(m, q.QuantAlgo, q.KVCacheAlgo, field)
	case "compressed-tensors":
		return q.compressedTensors(m, field)
	case "":
		if q.Quantization != nil {
			return modelOpt(m, q.Quantization.QuantAlgo, q.Quantization.KVCacheAlgo, field+".quantization")
		}
		return fmt.Errorf("field %q: missing", field+".quant_method")
	default:
		return fmt.Errorf("field %q: %q is not supported (fp8, compressed-tensors, awq, gptq, modelopt, mxfp4)", field+".quant_method", q.Method)
	}
	return nil
}

// modelOpt maps NVIDIA Model Optimizer's quant_algo; its FP8 KV cache
// directive halves the cache, as vLLM and TensorRT-LLM follow it.
func modelOpt(m *LLM, algo string, kv *string, field string) error {
	switch strings.ToUpper(algo) {
	case "FP8", "FP8_BLOCK_SCALES", "FP8_PER_CHANNEL_PER_TOKEN":
		m.Quant = QuantFP8
	case "NVFP4":
		m.Quant = QuantFP4
	case "W4A16_AWQ", "W4A16":
		m.Quant = QuantInt4
	default:
		return fmt.Errorf("field %q: %q is not supported (FP8, NVFP4, W4A16_AWQ)", field+".quant_algo", algo)
	}
	if kv != nil && strings.EqualFold(*kv, "FP8") {
		m.KVCacheBytes = 1
	}
	return nil
}

// compressedTensors maps llm-compressor's schemes: FP8 weights (W8A8
// FP8, dynamic or static), 4-bit integer weights (W4A16) and NVFP4; an
// FP8 kv_cache_scheme halves the cache.
func (q quantConfig) compressedTensors(m *LLM, field string) error {
	names := make([]string, 0, len(q.ConfigGroups))
	for n := range q.ConfigGroups {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return fmt.Errorf("field %q: missing", field+".config_groups")
	}
	var got Quantization
	for i, n := range names {
		g, f := q.ConfigGroups[n], field+".config_groups."+n+".weights"
		if g.Weights == nil {
			return fmt.Errorf("field %q: missing", f)
		}
		var this Quantization
		switch w := g.Weights; {
		case w.Bits == 8 && w.Type == "float":
			this = QuantFP8
		case w.Bits == 4 && w.Type == "float":
			this = QuantFP4
		case w.Bits == 4 && w.Type == "int" && g.Inputs == nil:
			this = QuantInt4
		default:
			return fmt.Errorf("field %q: %d-bit %s weights (inputs %s) are not supported (8-bit float, 4-bit float, 4-bit int weight-only)", f, w.Bits, w.Type, inputsOf(g))
		}
		if i > 0 && this != got {
			return fmt.Errorf("field %q: mixes %s and %s schemes, which capsim does not price", field+".config_groups", got, this)
		}
		got = this
	}
	m.Quant = got
	if s := q.KVScheme; s != nil {
		if s.Bits != 8 || s.Type != "float" {
			return fmt.Errorf("field %q: %d-bit %s is not supported (8-bit float)", field+".kv_cache_scheme", s.Bits, s.Type)
		}
		m.KVCacheBytes = 1
	}
	return nil
}

func inputsOf(g ctGroup) string {
	if g.Inputs == nil {
		return "none"
	}
	return fmt.Sprintf("%d-bit %s", g.Inputs.Bits, g.Inputs.Type)
}

// ParseHFQuantConfig applies an hf_quant_config.json (NVIDIA Model
// Optimizer's, written beside config.json) to m.
func ParseHFQuantConfig(data []byte, m LLM) (LLM, error) {
	var q struct {
		Quantization *hfQuantSection `json:"quantization"`
	}
	if err := decodeStrict(data, &q); err != nil {
		return LLM{}, err
	}
	if q.Quantization == nil {
		return LLM{}, fmt.Errorf(`field "quantization": missing`)
	}
	if err := modelOpt(&m, q.Quantization.QuantAlgo, q.Quantization.KVCacheAlgo, "quantization"); err != nil {
		return LLM{}, err
	}
	return m, nil
}
