package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capsim/capsim/internal/jsonerr"
	"sort"
	"strings"
)

// hfConfig holds the fields of a Hugging Face config.json that capsim
// reads. Pointers tell a missing field from a zero one.
type hfConfig struct {
	Architectures []string  `json:"architectures"`
	ModelType     string    `json:"model_type"`
	TextConfig    *hfConfig `json:"text_config"`

	Hidden        *int    `json:"hidden_size"`
	Layers        *int    `json:"num_hidden_layers"`
	Heads         *int    `json:"num_attention_heads"`
	KVHeads       *int    `json:"num_key_value_heads"`
	HeadDim       *int    `json:"head_dim"`
	Intermediate  *int    `json:"intermediate_size"`
	Vocab         *int    `json:"vocab_size"`
	MaxPositions  *int    `json:"max_position_embeddings"`
	TieEmbeddings *bool   `json:"tie_word_embeddings"`
	TorchDtype    *string `json:"torch_dtype"`
	Dtype         *string `json:"dtype"`

	// Sliding and interleaved attention.
	SlidingWindow    *int     `json:"sliding_window"`
	UseSlidingWindow *bool    `json:"use_sliding_window"`
	MaxWindowLayers  *int     `json:"max_window_layers"`
	LayerTypes       []string `json:"layer_types"`

	// Mixture of experts (Mixtral, Qwen3-MoE, gpt-oss, Llama 4, DeepSeek).
	LocalExperts      *int  `json:"num_local_experts"`
	NumExperts        *int  `json:"num_experts"`
	RoutedExperts     *int  `json:"n_routed_experts"`
	SharedExperts     *int  `json:"n_shared_experts"`
	ExpertsPerTok     *int  `json:"num_experts_per_tok"`
	MoEIntermediate   *int  `json:"moe_intermediate_size"`
	DecoderSparseStep *int  `json:"decoder_sparse_step"`
	MLPOnlyLayers     []int `json:"mlp_only_layers"`
	FirstKDense       *int  `json:"first_k_dense_replace"`
	MoELayerFreq      *int  `json:"moe_layer_freq"`
	InterleaveMoEStep *int  `json:"interleave_moe_layer_step"`
	IntermediateMLP   *int  `json:"intermediate_size_mlp"`
	AttentionChunk    *int  `json:"attention_chunk_size"`
	NoRopeLayers      []int `json:"no_rope_layers"`
	NoRopeInterval    *int  `json:"no_rope_layer_interval"`

	// Multi-head latent attention (DeepSeek-V2/V3).
	QLoraRank  *int `json:"q_lora_rank"`
	KVLoraRank *int `json:"kv_lora_rank"`
	QKNopeDim  *int `json:"qk_nope_head_dim"`
	QKRopeDim  *int `json:"qk_rope_head_dim"`
	VHeadDim   *int `json:"v_head_dim"`

	Quantization json.RawMessage `json:"quantization_config"`
}

// hfFamily is how capsim reads one config.json architecture.
type hfFamily int

const (
	familyDense hfFamily = iota
	familyMixtral
	familyQwenMoE
	familyLlama4
	familyDeepSeek
	familyGptOss
)

// hfArchitectures maps config.json's architectures[0] to its family.
var hfArchitectures = map[string]hfFamily{
	"LlamaForCausalLM":               familyDense,
	"MistralForCausalLM":             familyDense,
	"Qwen2ForCausalLM":               familyDense,
	"Qwen3ForCausalLM":               familyDense,
	"YiForCausalLM":                  familyDense,
	"Phi3ForCausalLM":                familyDense,
	"MixtralForCausalLM":             familyMixtral,
	"Qwen3MoeForCausalLM":            familyQwenMoE,
	"Llama4ForConditionalGeneration": familyLlama4,
	"Llama4ForCausalLM":              familyLlama4,
	"DeepseekV2ForCausalLM":          familyDeepSeek,
	"DeepseekV3ForCausalLM":          familyDeepSeek,
	"GptOssForCausalLM":              familyGptOss,
}

// HFArchitectures lists the config.json architectures ParseHFConfig reads.
func HFArchitectures() []string {
	out := make([]string, 0, len(hfArchitectures))
	for a := range hfArchitectures {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// ParseHFConfig reads a Hugging Face config.json into an LLM named name.
// Params is the count the shapes give; quantization comes from
// the file's quantization_config. Errors are one line naming the field.
func ParseHFConfig(data []byte, name string) (LLM, error) {
	var c hfConfig
	if err := decodeStrict(data, &c); err != nil {
		return LLM{}, err
	}
	if len(c.Architectures) == 0 {
		return LLM{}, errors.New(`field "architectures": missing`)
	}
	fam, ok := hfArchitectures[c.Architectures[0]]
	if !ok {
		return LLM{}, fmt.Errorf(`field "architectures": %q is not supported (supported: %s)`, c.Architectures[0], strings.Join(HFArchitectures(), ", "))
	}
	text := &c
	if fam == familyLlama4 && c.TextConfig != nil {
		text = c.TextConfig
	}
	m, err := text.shape(fam)
	if err != nil {
		return LLM{}, err
	}
	m.Name = strings.TrimSpace(name)
	m.TiedEmbed = boolOr(text.TieEmbeddings, false)
	if c.TieEmbeddings != nil {
		m.TiedEmbed = *c.TieEmbeddings
	}
	if err := c.checkDtype(text); err != nil {
		return LLM{}, err
	}
	if len(c.Quantization) > 0 && !bytes.Equal(bytes.TrimSpace(c.Quantization), []byte("null")) {
		var qc quantConfig
		if err := decodeStrict(c.Quantization, &qc); err != nil {
			return LLM{}, fmt.Errorf("quantization_config: %w", err)
		}
		if err := qc.apply(&m, "quantization_config"); err != nil {
			return LLM{}, err
		}
	}
	m.Params = text.params(fam, m)
	return m, nil
}

// decodeStrict unmarshals JSON, naming the field of a type mismatch as a
// config.json's keys read; other problems (empty, truncated, a syntax
// error's line) as every JSON input is described (jsonerr.Describe).
func decodeStrict(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		return fmt.Errorf("field %q: a JSON %s where a %s belongs", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
	}
	return jsonerr.Describe(data, err)
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "float64":
		return "number"
	case "ptr":
		return "value of another type"
	}
	return k
}

func intOr(p *int, d int) int {
	if p != nil {
		return *p
	}
	return d
}

func boolOr(p *bool, d bool) bool {
	if p != nil {
		return *p
	}
	return d
}

// need returns a required positive field's value.
func need(p *int, field string) (int, error) {
	if p == nil {
		return 0, fmt.Errorf("field %q: missing", field)
	}
	if *p <= 0 {
		return 0, fmt.Errorf("field %q: must be positive, got %d", field, *p)
	}
	return *p, nil
}

// shape reads the dimensions of one architecture family.
func (c *hfConfig) shape(fam hfFamily) (LLM, error) {
	var m LLM
	var err error
	for _, f := range []struct {
		dst  *int
		p    *int
		name string
	}{
		{&m.Hidden, c.Hidden, "hidden_size"},
		{&m.Layers, c.Layers, "num_hidden_layers"},
		{&m.Heads, c.Heads, "num_attention_heads"},
		{&m.Vocab, c.Vocab, "vocab_size"},
		{&m.MaxContext, c.MaxPositions, "max_position_embeddings"},
		{&m.Intermediate, c.Intermediate, "intermediate_size"},
	} {
		if *f.dst, err = need(f.p, f.name); err != nil {
			return LLM{}, err
		}
	}
	m.KVHeads = intOr(c.KVHeads, m.Heads)
	if m.KVHeads <= 0 || m.Heads%m.KVHeads != 0 {
		return LLM{}, fmt.Errorf(`field "num_key_value_heads": %d does not divide num_attention_heads %d`, m.KVHeads, m.Heads)
	}
	m.HeadDim = intOr(c.HeadDim, m.Hidden/m.Heads)
	if m.HeadDim <= 0 {
		return LLM{}, fmt.Errorf(`field "head_dim": must be positive, got %d`, m.HeadDim)
	}
	if err := c.attentionLayers(fam, &m); err != nil {
		return LLM{}, err
	}
	switch fam {
	case familyDense:
		if c.NumExperts != nil || c.LocalExperts != nil || c.RoutedExperts != nil {
			return LLM{}, errors.New(`field "num_experts": experts in a dense architecture are not supported`)
		}
	case familyMixtral, familyGptOss:
		m.ExpertIntermediate = m.Intermediate
		if m.Experts, err = need(c.LocalExperts, "num_local_experts"); err != nil {
			return LLM{}, err
		}
	case familyQwenMoE:
		if m.Experts, err = need(c.NumExperts, "num_experts"); err != nil {
			return LLM{}, err
		}
		if m.ExpertIntermediate, err = need(c.MoEIntermediate, "moe_intermediate_size"); err != nil {
			return LLM{}, err
		}
		if intOr(c.DecoderSparseStep, 1) != 1 {
			return LLM{}, fmt.Errorf(`field "decoder_sparse_step": %d is not supported (only 1: every layer holds experts)`, *c.DecoderSparseStep)
		}
		if n := len(c.MLPOnlyLayers); n > 0 {
			m.MoELayers = m.Layers - n
		}
	case familyLlama4:
		m.ExpertIntermediate = m.Intermediate
		if m.Intermediate, err = need(c.IntermediateMLP, "intermediate_size_mlp"); err != nil {
			return LLM{}, err
		}
		if m.Experts, err = need(c.LocalExperts, "num_local_experts"); err != nil {
			return LLM{}, err
		}
		step := intOr(c.InterleaveMoEStep, 1)
		if step <= 0 {
			return LLM{}, fmt.Errorf(`field "interleave_moe_layer_step": must be positive, got %d`, step)
		}
		if step > 1 {
			m.MoELayers = m.Layers / step
		}
	case familyDeepSeek:
		if err := c.latent(&m); err != nil {
			return LLM{}, err
		}
	}
	if m.Experts > 0 {
		if m.ActiveExperts, err = need(c.ExpertsPerTok, "num_experts_per_tok"); err != nil {
			return LLM{}, err
		}
		if m.ActiveExperts > m.Experts {
			return LLM{}, fmt.Errorf(`field "num_experts_per_tok": %d exceeds the %d experts`, m.ActiveExperts, m.Experts)
		}
	}
	return m, nil
}

// attentionLayers sets which layers attend over the whole context:
// gpt-oss's layer_types, Llama 4's NoPE layers (the others attend within
// chunks of attention_chunk_size, priced as a sliding window of that
// size), Qwen2's windowed upper layers. A window on every layer
// (Mistral-7B-v0.1) is read as full attention: exact up to the window,
// an overestimate of the cache past it.
func (c *hfConfig) attentionLayers(fam hfFamily, m *LLM) error {
	switch {
	case len(c.LayerTypes) > 0:
		if len(c.LayerTypes) != m.Layers {
			return fmt.Errorf(`field "layer_types": %d entries for %d layers`, len(c.LayerTypes), m.Layers)
		}
		full := 0
		for _, t := range c.LayerTypes {
			switch t {
			case "full_attention":
				full++
			case "sliding_attention":
			default:
				return fmt.Errorf(`field "layer_types": %q is not supported (full_attention, sliding_attention)`, t)
			}
		}
		if full < m.Layers {
			if m.SlidingWindow = intOr(c.SlidingWindow, 0); m.SlidingWindow <= 0 {
				return errors.New(`field "sliding_window": missing beside sliding_attention layer_types`)
			}
			m.FullAttentionLayers = full
		}
	case fam == familyLlama4 && intOr(c.AttentionChunk, 0) > 0:
		full := 0
		if len(c.NoRopeLayers) > 0 {
			if len(c.NoRopeLayers) != m.Layers {
				return fmt.Errorf(`field "no_rope_layers": %d entries for %d layers`, len(c.NoRopeLayers), m.Layers)
			}
			for _, r := range c.NoRopeLayers {
				if r == 0 {
					full++
				}
			}
		} else {
			every := intOr(c.NoRopeInterval, 4)
			if every <= 0 {
				return fmt.Errorf(`field "no_rope_layer_interval": must be positive, got %d`, every)
			}
			full = m.Layers / every
		}
		if full > 0 && full < m.Layers {
			m.FullAttentionLayers, m.SlidingWindow = full, *c.AttentionChunk
		}
	case boolOr(c.UseSlidingWindow, false) && intOr(c.SlidingWindow, 0) > 0:
		full := intOr(c.MaxWindowLayers, 0)
		if full > 0 && full < m.Layers {
			m.FullAttentionLayers, m.SlidingWindow = full, *c.SlidingWindow
		}
	}
	return nil
}

// latent reads multi-head latent attention's shape (DeepSeek-V2/V3) and
// DeepSeek's expert layout.
func (c *hfConfig) latent(m *LLM) error {
	var err error
	var kvRank, rope, nope, v int
	for _, f := range []struct {
		dst  *int
		p    *int
		name string
	}{
		{&kvRank, c.KVLoraRank, "kv_lora_rank"},
		{&rope, c.QKRopeDim, "qk_rope_head_dim"},
		{&nope, c.QKNopeDim, "qk_nope_head_dim"},
		{&v, c.VHeadDim, "v_head_dim"},
		{&m.ExpertIntermediate, c.MoEIntermediate, "moe_intermediate_size"},
		{&m.Experts, c.RoutedExperts, "n_routed_experts"},
	} {
		if *f.dst, err = need(f.p, f.name); err != nil {
			return err
		}
	}
	if rope != LatentRopeDim {
		return fmt.Errorf(`field "qk_rope_head_dim": %d is not supported (capsim prices latent attention's rotary part at %d)`, rope, LatentRopeDim)
	}
	if f := intOr(c.MoELayerFreq, 1); f != 1 {
		return fmt.Errorf(`field "moe_layer_freq": %d is not supported (only 1: every layer after first_k_dense_replace holds experts)`, f)
	}
	// The prompt's attention FLOPs follow the mean of the query-key and
	// value head widths; the cache holds one latent vector per token.
	m.HeadDim = (nope + rope + v) / 2
	m.LatentKV = kvRank + rope
	if k := intOr(c.FirstKDense, 0); k > 0 {
		if k >= m.Layers {
			return fmt.Errorf(`field "first_k_dense_replace": %d leaves no expert layer of %d`, k, m.Layers)
		}
		m.MoELayers = m.Layers - k
	}
	h, heads := float64(m.Hidden), float64(m.Heads)
	q := h * heads * float64(nope+rope)
	if r := intOr(c.QLoraRank, 0); r > 0 {
		q = h*float64(r) + float64(r)*heads*float64(nope+rope)
	}
	perLayer := q + h*float64(kvRank+rope) + float64(kvRank)*heads*float64(nope+v) + heads*float64(v)*h
	m.AttentionParams = float64(m.Layers) * perLayer
	return nil
}

// params counts the weights the shapes give: embeddings (and an untied LM
// head), attention, dense and expert FFNs (gate, up and down), shared
// experts and routers. Norms and biases (under 0.1%) are left out.
func (c *hfConfig) params(fam hfFamily, m LLM) float64 {
	h := float64(m.Hidden)
	total := m.EmbedParams() + m.attentionParams()
	moeLayers := m.moeLayers()
	total += float64(m.Layers-moeLayers) * 3 * h * float64(m.Intermediate)
	total += m.ExpertParams() + float64(moeLayers)*h*float64(m.Experts)
	shared := 0.0
	switch fam {
	case familyLlama4:
		shared = 3 * h * float64(m.ExpertIntermediate)
	case familyDeepSeek:
		shared = float64(intOr(c.SharedExperts, 0)) * 3 * h * float64(m.ExpertIntermediate)
	}
	return total + float64(moeLayers)*shared
}

// checkDtype refuses a weight dtype capsim does not price. BF16, FP16 and
// FP32 (which vLLM serves at 16 bits) all take 2 bytes a weight.
func (c *hfConfig) checkDtype(text *hfConfig) error {
	for _, f := range []struct {
		p    *string
		name string
	}{{c.TorchDtype, "torch_dtype"}, {c.Dtype, "dtype"}, {text.TorchDtype, "text_config.torch_dtype"}} {
		if f.p == nil {
			continue
		}
		switch strings.ToLower(*f.p) {
		case "bfloat16", "float16", "float32", "half", "float", "auto", "":
		default:
			return fmt.Errorf("field %q: %q is not supported (bfloat16, float16, float32; quantized checkpoints state quantization_config)", f.name, *f.p)
		}
	}
	return nil
}
