package model

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every catalog config's shapes give its published parameter count within
// 2% (Llama 4's published total includes its 0.9B vision encoder, which
// the text shapes leave out).
func TestCatalogParamsMatchShapes(t *testing.T) {
	files, err := fs.Glob(hfConfigs, "hfconfigs/*/*/config.json")
	if err != nil || len(files) < 40 {
		t.Fatalf("catalog configs: %d files, %v", len(files), err)
	}
	for _, f := range files {
		name := strings.TrimPrefix(path.Dir(f), "hfconfigs/")
		derived, err := hfParams(name)
		if err != nil {
			t.Error(err)
			continue
		}
		m, err := LookupLLM(name)
		if err != nil {
			t.Error(err)
			continue
		}
		if d := derived/m.Params - 1; math.Abs(d) > 0.02 {
			t.Errorf("%s: config shapes give %.2fB parameters, published %.2fB (%+.1f%%)", name, derived/1e9, m.Params/1e9, 100*d)
		}
	}
}

// The parameter arithmetic per architecture, against published totals:
// dense GQA and MHA, Mixtral's and Qwen3's experts, Llama 4's shared
// expert and dense-FFN width, DeepSeek's latent attention with and
// without a query LoRA (V2-Lite), its shared experts and dense first layers.
func TestHFParamsPerArchitecture(t *testing.T) {
	for _, tt := range []struct {
		name      string
		published float64
	}{
		{"meta-llama/Llama-2-7b-hf", 6.738e9},             // MHA
		{"meta-llama/Llama-2-70b-hf", 68.98e9},            // GQA
		{"mistralai/Mistral-Nemo-Instruct-2407", 12.25e9}, // head_dim ≠ hidden/heads
		{"mistralai/Mixtral-8x22B-Instruct-v0.1", 141e9},
		{"Qwen/Qwen3-235B-A22B", 235e9},
		{"meta-llama/Llama-4-Scout-17B-16E-Instruct", 108.8e9}, // 109.7B less the vision encoder's 0.9B
		{"deepseek-ai/DeepSeek-V3", 671e9},
		{"openai/gpt-oss-120b", 116.8e9},
	} {
		got, err := hfParams(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if d := got/tt.published - 1; math.Abs(d) > 0.02 {
			t.Errorf("%s: %.2fB from the config, published %.2fB", tt.name, got/1e9, tt.published/1e9)
		}
	}
	// DeepSeek-Coder-V2-Lite's config.json (scaleapi/llm-engine's test
	// fixture): no q_lora_rank, 64 routed and 2 shared experts of 1408,
	// one dense layer; 15.7B total by DeepSeek's card ("16B").
	lite := `{"architectures": ["DeepseekV2ForCausalLM"], "first_k_dense_replace": 1, "hidden_size": 2048,
	"intermediate_size": 10944, "kv_lora_rank": 512, "max_position_embeddings": 163840, "model_type": "deepseek_v2",
	"moe_intermediate_size": 1408, "moe_layer_freq": 1, "n_routed_experts": 64, "n_shared_experts": 2,
	"num_attention_heads": 16, "num_experts_per_tok": 6, "num_hidden_layers": 27, "num_key_value_heads": 16,
	"qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
	"v_head_dim": 128, "vocab_size": 102400}`
	m, err := ParseHFConfig([]byte(lite), "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Params/15.7e9 - 1; math.Abs(d) > 0.02 {
		t.Errorf("DeepSeek-V2-Lite: %.2fB from the config, published 15.7B", m.Params/1e9)
	}
	if m.LatentKV != 576 || m.MoELayers != 26 || m.HeadDim != 160 || m.Experts != 64 || m.ActiveExperts != 6 {
		t.Errorf("DeepSeek-V2-Lite shape: %+v", m)
	}
}

// The KV cache per token, by architecture, at tensor degree tp summed
// over the worker's GPUs: keys and values of every KV head (replicated
// past their count), a latent vector per layer on every rank, only the
// full-attention layers of interleaved models.
func TestKVBytesPerTokenByArchitecture(t *testing.T) {
	for _, tt := range []struct {
		name string
		tp   int
		want float64
	}{
		{"meta-llama/Llama-2-7b-hf", 1, 2 * 32 * 32 * 128 * 2},   // MHA: 32 KV heads
		{"meta-llama/Llama-2-70b-hf", 4, 2 * 80 * 8 * 128 * 2},   // GQA: 8 KV heads over 4 GPUs
		{"meta-llama/Llama-2-70b-hf", 16, 2 * 80 * 16 * 128 * 2}, // one head replicated per GPU
		{"mistralai/Mistral-Nemo-Instruct-2407", 1, 2 * 40 * 8 * 128 * 2},
		{"mistralai/Mixtral-8x22B-Instruct-v0.1", 8, 2 * 56 * 8 * 128 * 2},
		{"deepseek-ai/DeepSeek-V3", 8, 61 * 576 * 2 * 8}, // latent, whole on every rank
		{"meta-llama/Llama-4-Scout-17B-16E-Instruct", 2, 2 * 12 * 8 * 128 * 2},
		{"openai/gpt-oss-120b", 1, 2 * 18 * 8 * 64 * 2},
	} {
		m, err := LookupLLM(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.KVBytesPerToken(tt.tp, m.KVElemBytes()); got != tt.want {
			t.Errorf("%s TP%d: %g bytes a token, want %g", tt.name, tt.tp, got, tt.want)
		}
	}
	scout, _ := LookupLLM("meta-llama/Llama-4-Scout-17B-16E-Instruct")
	if scout.FullAttentionLayers != 12 || scout.SlidingWindow != 8192 || scout.WindowedKVShare() != 3 {
		t.Errorf("Llama 4 Scout: %d full-attention layers, window %d, windowed share %g; want 12, 8192, 3",
			scout.FullAttentionLayers, scout.SlidingWindow, scout.WindowedKVShare())
	}
	if scout.Intermediate != 16384 || scout.ExpertIntermediate != 8192 || scout.MoELayers != 0 || scout.Experts != 16 || scout.ActiveExperts != 1 {
		t.Errorf("Llama 4 Scout FFN: %+v", scout)
	}
}

// The twelve models of a public benchmark campaign all resolve, by their
// Hugging Face ids (quantized ones by the name's suffix), as do the chat
// releases named as aliases.
func TestCampaignModelsResolve(t *testing.T) {
	for _, name := range append(campaignModels,
		"meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-70b-chat-hf", "01-ai/Yi-34B-Chat", "mistralai/Mixtral-8x22B-v0.1") {
		if _, err := LookupLLM(name); err != nil {
			t.Error(err)
		}
	}
	fp8, _ := LookupLLM("RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic")
	if fp8.Quant != QuantFP8 || fp8.Layers != 48 {
		t.Errorf("Scout FP8-dynamic: quant %q, %d layers", fp8.Quant, fp8.Layers)
	}
}

// campaignModels are the twelve models issue 35's campaign served.
var campaignModels = []string{
	"meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf", "meta-llama/Llama-3.1-8B-Instruct",
	"meta-llama/Llama-3.1-70B-Instruct", "codellama/CodeLlama-34b-Instruct-hf", "mistralai/Mistral-Nemo-Instruct-2407",
	"mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai/Mixtral-8x22B-Instruct-v0.1",
	"RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", "Qwen/Qwen3-14B", "Qwen/Qwen2.5-7B-Instruct", "01-ai/Yi-34B",
}

// Quantization configs map onto capsim's quantizations, with an FP8 KV
// cache where the checkpoint asks for one.
func TestParseHFQuantization(t *testing.T) {
	base := `{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32,
	"num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
	"max_position_embeddings": 131072, "torch_dtype": "bfloat16"`
	for _, tt := range []struct {
		name, qc string
		q        Quantization
		kv       float64
	}{
		{"fp8 dynamic", `{"quant_method": "fp8", "activation_scheme": "dynamic"}`, QuantFP8, 0},
		{"fp8 static", `{"quant_method": "fp8", "activation_scheme": "static"}`, QuantFP8, 0},
		{"compressed-tensors FP8 + FP8 KV", `{"quant_method": "compressed-tensors", "format": "float-quantized",
			"config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}, "input_activations": {"num_bits": 8, "type": "float", "dynamic": true}}},
			"kv_cache_scheme": {"num_bits": 8, "type": "float"}}`, QuantFP8, 1},
		{"compressed-tensors W4A16", `{"quant_method": "compressed-tensors", "format": "pack-quantized",
			"config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}}}`, QuantInt4, 0},
		{"compressed-tensors NVFP4", `{"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
			"config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float"}, "input_activations": {"num_bits": 4, "type": "float"}}}}`, QuantFP4, 0},
		{"awq", `{"quant_method": "awq", "bits": 4, "group_size": 128}`, QuantInt4, 0},
		{"gptq", `{"quant_method": "gptq", "bits": 4}`, QuantInt4, 0},
		{"modelopt NVFP4", `{"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}`, QuantFP4, 1},
		{"null", `null`, QuantNone, 0},
	} {
		m, err := ParseHFConfig([]byte(base+`, "quantization_config": `+tt.qc+`}`), "x")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if m.Quant != tt.q || m.KVCacheBytes != tt.kv {
			t.Errorf("%s: quant %q, KV bytes %g; want %q, %g", tt.name, m.Quant, m.KVCacheBytes, tt.q, tt.kv)
		}
	}
	oss, _ := LookupLLM("openai/gpt-oss-20b")
	if oss.ExpertBytes != 4.25/8 || oss.Quant != QuantNone {
		t.Errorf("gpt-oss mxfp4: expert bytes %g, quant %q", oss.ExpertBytes, oss.Quant)
	}
}

// Windowed layers: Qwen2's upper layers past max_window_layers, and a
// window on every layer read as full attention.
func TestParseHFSlidingWindow(t *testing.T) {
	qwen := `{"architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
	"num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064, "max_position_embeddings": 32768,
	"sliding_window": 4096, "max_window_layers": 21, "use_sliding_window": %s}`
	on, err := ParseHFConfig([]byte(fmt.Sprintf(qwen, "true")), "x")
	if err != nil || on.FullAttentionLayers != 21 || on.SlidingWindow != 4096 {
		t.Errorf("Qwen2 with use_sliding_window: %d full layers, window %d, %v; want 21, 4096", on.FullAttentionLayers, on.SlidingWindow, err)
	}
	off, err := ParseHFConfig([]byte(fmt.Sprintf(qwen, "false")), "x")
	if err != nil || off.FullAttentionLayers != 0 || off.SlidingWindow != 0 {
		t.Errorf("Qwen2 without use_sliding_window: %d full layers, window %d, %v; want every layer full", off.FullAttentionLayers, off.SlidingWindow, err)
	}
	mistral := `{"architectures": ["MistralForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
	"num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "max_position_embeddings": 32768, "sliding_window": 4096}`
	m, err := ParseHFConfig([]byte(mistral), "x")
	if err != nil || m.FullAttentionLayers != 0 || m.KVBytesPerToken(1, 2) != 2*32*8*128*2 {
		t.Errorf("Mistral-7B-v0.1: %d full layers, %g KV bytes a token, %v", m.FullAttentionLayers, m.KVBytesPerToken(1, 2), err)
	}
}

// A malformed or unsupported config is refused in one line that names
// the field at fault.
func TestParseHFConfigErrors(t *testing.T) {
	llama := func(extra string) string {
		return `{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32,
		"num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 4096` + extra + `}`
	}
	for _, tt := range []struct{ cfg, want string }{
		{"{\n\"architectures\": [\"LlamaForCausalLM\"],\n\"hidden_size\": 4096,,\n}", "line 3"},
		{`{"architectures": ["MambaForCausalLM"], "hidden_size": 1}`, `"architectures": "MambaForCausalLM" is not supported`},
		{`{"hidden_size": 1}`, `"architectures": missing`},
		{`{"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2}`, `"hidden_size": missing`},
		{llama(`, "hidden_size": "4096"`), `field "hidden_size": a JSON string`},
		{llama(`, "num_key_value_heads": 5`), `"num_key_value_heads": 5 does not divide`},
		{llama(`, "torch_dtype": "int8"`), `"torch_dtype": "int8" is not supported`},
		{llama(`, "quantization_config": {"quant_method": "bitsandbytes"}`), `"quantization_config.quant_method": "bitsandbytes" is not supported`},
		{llama(`, "quantization_config": {"quant_method": "gptq", "bits": 8}`), `"quantization_config.bits": 8-bit gptq`},
		{llama(`, "quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8, "type": "int"}, "input_activations": {"num_bits": 8, "type": "int"}}}}`),
			`"quantization_config.config_groups.g.weights": 8-bit int weights`},
		{llama(`, "num_experts": 8`), `"num_experts": experts in a dense architecture`},
		{`{"architectures": ["MixtralForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
			"intermediate_size": 14336, "vocab_size": 32000, "max_position_embeddings": 32768, "num_local_experts": 8}`, `"num_experts_per_tok": missing`},
		{`{"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
			"intermediate_size": 18432, "vocab_size": 129280, "max_position_embeddings": 163840, "kv_lora_rank": 512,
			"qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "moe_intermediate_size": 2048,
			"n_routed_experts": 256, "num_experts_per_tok": 8, "moe_layer_freq": 2}`, `"moe_layer_freq": 2 is not supported`},
		{`{"architectures": ["GptOssForCausalLM"], "hidden_size": 2880, "num_hidden_layers": 2, "num_attention_heads": 64,
			"head_dim": 64, "intermediate_size": 2880, "vocab_size": 201088, "max_position_embeddings": 131072,
			"num_local_experts": 32, "num_experts_per_tok": 4, "layer_types": ["sliding_attention", "linear_attention"], "sliding_window": 128}`,
			`"layer_types": "linear_attention" is not supported`},
	} {
		_, err := ParseHFConfig([]byte(tt.cfg), "x")
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseHFConfig(%.60q…) = %v, want one line containing %s", tt.cfg, err, tt.want)
		}
	}
}

// --model accepts a config.json path or the directory holding it (with
// NVIDIA's hf_quant_config.json beside it); the model keeps the path as
// its name, so later lookups by that name find it; errors name the file.
func TestLookupLLMConfigPath(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("hfconfigs/meta-llama/Llama-2-70b-hf/config.json")
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "hf_quant_config.json"), []byte(`{"producer": {"name": "modelopt"},
		"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}`), 0o644))
	for _, name := range []string{dir, filepath.Join(dir, "config.json")} {
		m, err := LookupLLM(name)
		if err != nil {
			t.Fatal(err)
		}
		if m.Name != name || m.Layers != 80 || m.KVHeads != 8 || m.Quant != QuantFP8 || m.KVCacheBytes != 1 || math.Abs(m.Params/68.98e9-1) > 0.01 {
			t.Errorf("LookupLLM(%s) = %+v", name, m)
		}
		if again, err := LookupLLM(m.Name); err != nil || again != m {
			t.Errorf("second lookup of %s: %v", m.Name, err)
		}
	}
	// NVIDIA's NVFP4 Qwen3-32B: its hf_quant_config.json asks for NVFP4
	// weights and an FP8 KV cache, as the catalog's name rule gives it.
	nv, err := LookupLLM("./testdata/nvidia-qwen3-32b-nvfp4")
	if bare, err := LookupLLM("testdata/nvidia-qwen3-32b-nvfp4"); err != nil || bare.Quant != QuantFP4 {
		t.Errorf("a directory named without ./: %+v, %v", bare, err)
	}
	byName, _ := LookupLLM("nvidia/Qwen3-32B-FP4")
	if err != nil || nv.Quant != QuantFP4 || nv.KVCacheBytes != 1 || nv.Layers != byName.Layers || nv.KVBytesPerToken(1, nv.KVElemBytes()) != byName.KVBytesPerToken(1, byName.KVElemBytes()) {
		t.Errorf("NVFP4 checkpoint directory: %+v, %v", nv, err)
	}
	bad := filepath.Join(dir, "bad.json")
	must(t, os.WriteFile(bad, []byte(`{"architectures": ["BertModel"]}`), 0o644))
	if _, err := LookupLLM(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `"architectures"`) {
		t.Errorf("LookupLLM(bad) = %v, want the file and the field named", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An engine serves a config.json's model from its directory.
func TestServedName(t *testing.T) {
	for in, want := range map[string]string{
		"./my-model/config.json": "./my-model", "/ckpt/llama/config.json": "/ckpt/llama", "config.json": ".",
		"./my-model": "./my-model", "Qwen/Qwen3-32B": "Qwen/Qwen3-32B",
	} {
		if got := ServedName(in); got != want {
			t.Errorf("ServedName(%q) = %q, want %q", in, got, want)
		}
	}
}

// hfParams is the parameter count m's config.json shapes give, which a
// catalog entry's published Params is tested against; for a model read
// from a user's config.json it is Params itself.
func hfParams(name string) (float64, error) {
	f := "hfconfigs/" + name + "/config.json"
	data, err := fs.ReadFile(hfConfigs, f)
	if err != nil {
		return 0, fmt.Errorf("model: %q is not a catalog config: %w", name, err)
	}
	m, err := ParseHFConfig(data, name)
	if err != nil {
		return 0, fmt.Errorf("model: %s: %w", f, err)
	}
	return m.Params, nil
}

// lookupLLM remembers each name's answer: the same model, or the same
// error, as looking it up afresh, the second time as the first.
func TestLookupLLMMemoised(t *testing.T) {
	var names []string
	for _, m := range LLMs() {
		names = append(names, m.Name, ShortName(m.Name), strings.ToUpper(m.Name))
	}
	names = append(names, "no-such-model-7B", "Llama-3.1")
	for _, n := range names {
		want, wantErr := lookupLLMUncached(n)
		for range 2 {
			got, err := lookupLLM(n)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("lookupLLM(%q) = %v, %v; uncached %v, %v", n, got.Name, err, want.Name, wantErr)
			}
		}
	}
}
