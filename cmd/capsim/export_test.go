package main

import (
	"bytes"
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
