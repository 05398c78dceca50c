package model

import (
	"strings"
)

// Quantization of a checkpoint's weights (and, for FP8/FP4 with tensor
// cores that run them, of its GEMMs). The zero value is BF16/FP16.
type Quantization string

// Known quantizations.
const (
	QuantNone Quantization = ""
	QuantFP8  Quantization = "fp8"  // FP8 weights (and activations where the GPU has FP8 tensor cores)
	QuantFP4  Quantization = "fp4"  // NVFP4 weights and activations (FP4 tensor cores)
	QuantInt4 Quantization = "int4" // 4-bit weights, BF16 activations (AWQ, GPTQ W4A16)
)

// quantSuffixes map checkpoint-name suffixes to quantizations, longest first.
var quantSuffixes = []struct {
	suffix string
	q      Quantization
}{
	{"-w4a16-gptq-selfbuilt", QuantInt4},
	{"-w4a16", QuantInt4},
	{"-gptq", QuantInt4},
	{"-awq", QuantInt4},
	{"-fp8-dynamic", QuantFP8}, // compressed-tensors FP8 with dynamic activation scales
	{"-fp8", QuantFP8},
	{"-fp4", QuantFP4},
}

// splitQuant splits a checkpoint id into its base model name and its
// quantization: "nvidia/Llama-3.1-8B-Instruct-FP8" → "Llama-3.1-8B-Instruct", fp8;
// "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8" → "Meta-Llama-3.1-70B-Instruct", fp8
// (LookupLLM drops the "Meta-" where the catalog's name lacks it).
func splitQuant(name string) (string, Quantization) {
	short := ShortName(strings.TrimSpace(name))
	low := strings.ToLower(short)
	for _, s := range quantSuffixes {
		if strings.HasSuffix(low, s.suffix) {
			return short[:len(short)-len(s.suffix)], s.q
		}
	}
	return name, QuantNone
}

// BytesPerWeight is the stored size of one body weight: scales of
// group-128 4-bit formats and per-block FP4 scales included.
func (q Quantization) BytesPerWeight() float64 {
	switch q {
	case QuantFP8:
		return 1
	case QuantFP4:
		return 0.5625
	case QuantInt4:
		return 0.5625
	}
	return 2
}

// StoredWeightBytes is the size of the checkpoint's weights: the body at
// its quantization, embeddings and LM head in BF16.
func (m LLM) StoredWeightBytes() float64 {
	return m.sharedWeightBytes() + m.expertWeightBytes()
}

// LoadedWeightBytes is the weights' size in GPU memory once loaded: as
// stored, but for experts the engine repacks (ExpertLoadedBytes).
func (m LLM) LoadedWeightBytes() float64 {
	if m.ExpertLoadedBytes > 0 {
		return m.sharedWeightBytes() + m.ExpertParams()*m.ExpertLoadedBytes
	}
	return m.StoredWeightBytes()
}

// sharedWeightBytes are the weights every step reads whatever its tokens:
// all of a dense model's, a mixture-of-experts model's but its experts.
func (m LLM) sharedWeightBytes() float64 {
	return (m.BodyParams()-m.ExpertParams())*m.Quant.BytesPerWeight() + m.EmbedParams()*2
}

// ReplicatedAttentionBytes are the attention weights data-parallel
// attention adds to a worker of tensor degree tp: each of its attention
// groups holds a whole copy where tensor parallelism splits one over all
// the GPUs. Every GPU stores its copy and every step reads it.
func (m LLM) ReplicatedAttentionBytes(tp int) float64 {
	dp := m.AttentionDPAt(tp)
	if dp <= 1 {
		return 0
	}
	return float64(dp-1) * m.attentionParams() * m.Quant.BytesPerWeight()
}

// replicatedEmbedBytes is the input embedding SGLang keeps whole on every
// GPU under data-parallel attention (its VocabParallelEmbedding is not
// split then), beside TP's one split copy: memory only, since a step
// reads just its tokens' rows.
func (m LLM) replicatedEmbedBytes(tp int) float64 {
	if m.AttentionDPAt(tp) <= 1 {
		return 0
	}
	return float64(tp-1) * float64(m.Vocab) * float64(m.Hidden) * 2
}

// expertWeightBytes are the routed experts' weights, at ExpertBytes where
// the checkpoint sets it apart.
func (m LLM) expertWeightBytes() float64 {
	b := m.Quant.BytesPerWeight()
	if m.ExpertBytes > 0 {
		b = m.ExpertBytes
	}
	return m.ExpertParams() * b
}

// GEMMTFLOPS is the dense tensor rate the model's GEMMs run at on g: FP8
// and FP4 checkpoints use the GPU's FP8/FP4 tensor cores where it has
// them; otherwise (and for 4-bit weight-only formats) weights are
// dequantized and the GEMMs run at the BF16 rate.
func (g GPU) GEMMTFLOPS(q Quantization) float64 {
	switch {
	case q == QuantFP8 && g.FP8TFLOPS > 0:
		return g.FP8TFLOPS
	case q == QuantFP4 && g.FP4TFLOPS > 0:
		return g.FP4TFLOPS
	case q == QuantFP4 && g.FP8TFLOPS > 0:
		return g.FP8TFLOPS
	}
	return g.TFLOPS
}
