package main

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// yamlDocs parses every document of a YAML file with a real parser.
func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []map[string]any
	for {
		var d map[string]any
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s does not parse: %v", path, err)
		}
		out = append(out, d)
	}
}

// plan --export writes one directory per recommendation with parsing
// YAML, the vllm serve line and a README naming the validate command.
func TestPlanExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := append(append([]string(nil), planArgs...), "--export", dir, "--no-margin")
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("plan: %v\nstderr: %s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "exported ") {
		t.Errorf("no export line on stderr: %s", errb.String())
	}
	subs, _ := filepath.Glob(filepath.Join(dir, "*", "README.md"))
	if len(subs) == 0 {
		t.Fatalf("no deployment directories in %s", dir)
	}
	for _, readme := range subs {
		d := filepath.Dir(readme)
		for _, o := range yamlDocs(t, filepath.Join(d, "k8s.yaml")) {
			if o["kind"] == nil || o["apiVersion"] == nil {
				t.Errorf("%s: an object without kind or apiVersion: %v", d, o)
			}
		}
		if _, err := os.Stat(filepath.Join(d, "dynamo.yaml")); err == nil {
			if cfg := yamlDocs(t, filepath.Join(d, "dynamo.yaml")); len(cfg) != 1 || cfg[0]["VllmWorker"] == nil {
				t.Errorf("%s: dynamo.yaml %v", d, cfg)
			}
		}
		text, _ := os.ReadFile(readme)
		if !strings.Contains(string(text), "capsim validate") || !strings.Contains(string(text), "--rate 4") {
			t.Errorf("%s lacks the validate command:\n%s", readme, text)
		}
	}
}

func TestPredictExportAndMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"predict", "--gpu", "H20", "--prefill", "6xTP2", "--decode", "1xTP4", "--isl", "3000", "--osl", "150",
		"--concurrency", "1,16", "--no-band", "--export", dir}
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("predict: %v\nstderr: %s", err, errb.String())
	}
	if !strings.Contains(out.String(), "steady state") {
		t.Errorf("the table does not say its mode:\n%s", out.String())
	}
	cfg := yamlDocs(t, filepath.Join(dir, "dynamo.yaml"))
	if len(cfg) != 1 || cfg[0]["PrefillWorker"] == nil {
		t.Errorf("dynamo.yaml %v", cfg)
	}
	yamlDocs(t, filepath.Join(dir, "k8s.yaml"))
	out.Reset()
	args = []string{"predict", "--gpu", "H20", "--prefill", "6xTP2", "--decode", "1xTP4", "--isl", "3000", "--osl", "150",
		"--concurrency", "1", "--no-band", "--mode", "benchmark-replay"}
	if err := run(args, &out, &errb); err != nil || !strings.Contains(out.String(), "benchmark replay") {
		t.Errorf("--mode benchmark-replay: %v\n%s", err, out.String())
	}
	if err := run([]string{"predict", "--gpu", "H20", "--replicas", "4xTP4", "--mode", "forever"}, &out, &errb); err == nil {
		t.Error("--mode forever accepted")
	}
}

// An export's --max-model-len fits the KV cache capsim computes for a
// replica (vLLM refuses to start otherwise): Qwen3-32B on one H100 holds
// about 32.7k tokens, not its 40,960-token context.
func TestExportMaxModelLenFitsKVCache(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"plan", "--model", "Qwen3-32B", "--isl", "1024", "--osl", "256", "--rate", "1", "--slo", "ttft_p99=5s,tpot_p99=200ms",
		"--gpu", "H100", "--tp", "1", "--mode", "aggregated", "--top", "1", "--no-margin", "--export", dir}
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("plan: %v\nstderr: %s", err, errb.String())
	}
	serve, err := os.ReadFile(filepath.Join(dir, "serve.sh"))
	if err != nil {
		t.Fatal(err)
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if strings.Contains(string(serve), "--max-model-len 40960") || !strings.Contains(string(readme), "lowered from the calibrated 40960 to the longest request one worker's KV cache holds") {
		t.Errorf("max-model-len not fitted to the KV cache:\n%s\n%s", serve, readme)
	}
}

// The router that priced a prediction is printed, and the export deploys
// it: round-robin behind an Envoy gateway, random behind the plain
// Kubernetes Service (which spreads connections at random).
func TestExportDeploysThePricedRouter(t *testing.T) {
	for _, c := range []struct {
		router, gateway string
	}{{"", "lb_policy: ROUND_ROBIN"}, {"random", ""}} {
		dir := t.TempDir()
		args := []string{"predict", "--gpu", "H100", "--model", "Llama-3.1-8B", "--replicas", "2xTP1", "--isl", "512", "--osl", "128", "--rate", "5", "--export", dir}
		if c.router != "" {
			args = append(args, "--router", c.router)
		}
		var out, errb bytes.Buffer
		if err := run(args, &out, &errb); err != nil {
			t.Fatalf("predict: %v\n%s", err, errb.String())
		}
		name := cmp.Or(c.router, "round-robin")
		if want := "router:      " + name + ","; !strings.Contains(out.String(), want) {
			t.Errorf("router %q: the output does not say %q priced it:\n%s", c.router, want, out.String())
		}
		if want := "The prediction was priced with the " + name + " router; k8s.yaml deploys"; !strings.Contains(errb.String(), want) {
			t.Errorf("router %q: the export does not say %q:\n%s", c.router, want, errb.String())
		}
		k8s, err := os.ReadFile(filepath.Join(dir, "k8s.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(k8s), "lb_policy: ROUND_ROBIN"); has != (c.gateway != "") {
			t.Errorf("router %q: k8s.yaml has a round-robin gateway: %v", c.router, has)
		}
	}
}
