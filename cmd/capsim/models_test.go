package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// predictModel runs capsim predict at one closed-loop client and returns
// the model it names and the first point's mean TTFT.
func predictModel(t *testing.T, modelArg, replicas string) (string, float64, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run([]string{"predict", "--gpu", "H100", "--model", modelArg, "--replicas", replicas,
		"--isl", "1024", "--osl", "256", "--concurrency", "1", "--num-prompts", "200", "--format", "json"}, &out, &errb)
	if err != nil {
		return "", 0, err
	}
	var got struct {
		Model  string `json:"model"`
		Points []struct {
			Metrics map[string]float64 `json:"metrics"`
		} `json:"points"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Points) == 0 {
		t.Fatalf("predict %s: %v\n%s", modelArg, err, out.String())
	}
	return got.Model, got.Points[0].Metrics["mean_ttft_ms"], nil
}

// The twelve models of issue 35's campaign predict on H100 at their
// tensor-parallel degree, named by their Hugging Face ids.
func TestPredictCampaignModels(t *testing.T) {
	for _, tt := range []struct{ id, replicas string }{
		{"meta-llama/Llama-2-7b-hf", "1xTP1"},
		{"meta-llama/Llama-2-70b-hf", "1xTP4"},
		{"meta-llama/Llama-3.1-8B-Instruct", "1xTP1"},
		{"meta-llama/Llama-3.1-70B-Instruct", "1xTP4"},
		{"codellama/CodeLlama-34b-Instruct-hf", "1xTP2"},
		{"mistralai/Mistral-Nemo-Instruct-2407", "1xTP1"},
		{"mistralai/Mixtral-8x7B-Instruct-v0.1", "1xTP2"},
		{"mistralai/Mixtral-8x22B-Instruct-v0.1", "1xTP8"},
		{"RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", "1xTP2"},
		{"Qwen/Qwen3-14B", "1xTP1"},
		{"Qwen/Qwen2.5-7B-Instruct", "1xTP1"},
		{"01-ai/Yi-34B", "1xTP2"},
	} {
		name, ttft, err := predictModel(t, tt.id, tt.replicas)
		if err != nil {
			t.Errorf("predict --model %s --replicas %s: %v", tt.id, tt.replicas, err)
			continue
		}
		if name != tt.id || !(ttft > 0) {
			t.Errorf("predict --model %s: model %q, mean_ttft_ms %g", tt.id, name, ttft)
		}
	}
}

// --model takes a config.json, or the directory holding it, and predicts
// what the same model from the catalog predicts; a config capsim cannot
// read is refused in one line naming the file and the field.
func TestPredictModelConfigPath(t *testing.T) {
	data, err := os.ReadFile("../../model/hfconfigs/01-ai/Yi-34B/config.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "yi")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "config.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, err := predictModel(t, "01-ai/Yi-34B", "1xTP2")
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{file, dir} {
		name, ttft, err := predictModel(t, arg, "1xTP2")
		if err != nil {
			t.Fatalf("predict --model %s: %v", arg, err)
		}
		// The published count the catalog prices with and the count the
		// shapes give differ by under 0.01% for Yi-34B.
		if name != arg || ttft <= 0 || ttft/want > 1.001 || ttft/want < 0.999 {
			t.Errorf("predict --model %s: model %q, mean_ttft_ms %g; the catalog's Yi-34B gives %g", arg, name, ttft, want)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32,
		"num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 4096,
		"quantization_config": {"quant_method": "bitsandbytes"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = predictModel(t, bad, "1xTP1")
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "quantization_config.quant_method") || strings.Contains(err.Error(), "\n") {
		t.Errorf("predict --model %s: %v, want one line naming the file and quantization_config.quant_method", bad, err)
	}
}

// validate --url with --model naming a config.json requests the model by
// its directory, the name vllm serve gives a checkpoint started from it.
func TestValidateLiveConfigPathServedName(t *testing.T) {
	data, err := os.ReadFile("../../model/hfconfigs/Qwen/Qwen3-8B/config.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "qwen3-8b")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	m := newBenchMock(t, nil)
	out := filepath.Join(t.TempDir(), "measured.json")
	runValidateJSON(t, "--url", m.URL, "--model", filepath.Join(dir, "config.json"), "--gpu", "H100", "--replicas", "1xTP1",
		"--profile", validateProfile, "--isl", "16", "--osl", "4", "--concurrency", "1", "--num-prompts", "2", "--out", out)
	if rs := readResults(t, out); len(rs) != 1 || rs[0]["model_id"] != dir {
		t.Errorf("requested model %v, want the config's directory %s", rs[0]["model_id"], dir)
	}
}
