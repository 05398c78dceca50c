package model

import (
	"reflect"
	"testing"
)

func TestParseEngine(t *testing.T) {
	tests := []struct {
		label, family string
		version       []int
		str           string
	}{
		{"vllm-0.9.0.1", "vllm", []int{0, 9, 0, 1}, "vllm-0.9.0.1"},
		{"vLLM", "vllm", nil, "vllm"},
		{"dynamo-0.3.0", "dynamo", []int{0, 3, 0}, "dynamo-0.3.0"},
		{"sglang-v0.4.6", "sglang", []int{0, 4, 6}, "sglang-0.4.6"},
		{"llm-d-inference-sim-0.10.2", "llm-d-inference-sim", []int{0, 10, 2}, "llm-d-inference-sim-0.10.2"},
		{"vllm 0.8.4", "vllm", []int{0, 8, 4}, "vllm-0.8.4"},
		{"vllm-0.9.0rc1", "vllm", []int{0, 9}, "vllm-0.9"},
	}
	for _, tt := range tests {
		e := ParseEngine(tt.label)
		if e.Family != tt.family || !reflect.DeepEqual(e.Version, tt.version) || e.String() != tt.str {
			t.Errorf("ParseEngine(%q) = %q %v %q, want %q %v %q", tt.label, e.Family, e.Version, e.String(), tt.family, tt.version, tt.str)
		}
	}
	if !ParseEngine("vllm-0.8.4").Older(ParseEngine("vllm-0.9.0.1")) || ParseEngine("vllm-0.9.0.1").Older(ParseEngine("vllm-0.9")) ||
		!ParseEngine("vllm").Older(ParseEngine("vllm-0.1")) {
		t.Error("version order wrong")
	}
}

// TestDefaultsFor checks vLLM's GPU-dependent defaults release by release
// (vllm#12369, #17073, #17885) on GPUs either side of each rule.
func TestDefaultsFor(t *testing.T) {
	gpu := func(name string) GPU {
		g, err := LookupGPU(name)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	tests := []struct {
		engine, gpu     string
		maxLen          int
		budget, seqs    int
		block, graphMax int
	}{
		{"vllm", "H20", 40960, 8192, 256, 16, 512},            // version unknown
		{"vllm-0.7.3", "H100-SXM", 40960, 2048, 256, 16, 512}, // V0: chunked prefill above 32K (vllm#10544)
		{"vllm-0.7.3", "H100-SXM", 8192, 8192, 256, 16, 512},  // V0: budget max(max-model-len, 2048)
		{"vllm-0.6.6", "L40S", 1024, 2048, 256, 16, 512},
		{"vllm-0.8.4", "H20", 40960, 2048, 256, 16, 512}, // by name: "h20" is not "h200"
		{"vllm-0.8.4", "H200", 40960, 8192, 1024, 16, 512},
		{"vllm-0.8.4", "A100-80GB", 40960, 2048, 256, 16, 512},
		{"vllm-0.8.5", "A100-80GB", 40960, 8192, 1024, 16, 512}, // by memory, A100 included
		{"vllm-0.8.5", "H20", 40960, 8192, 1024, 16, 512},
		{"vllm-0.8.5", "L40S", 40960, 2048, 256, 16, 512},
		{"vllm-0.9.0.1", "A100-80GB", 40960, 2048, 256, 16, 512}, // A100 excluded again
		{"vllm-0.9.0.1", "H20", 40960, 8192, 1024, 16, 512},
		{"vllm-0.10.1", "B200", 40960, 8192, 1024, 16, 512},
		{"dynamo-0.3.0", "H20", 40960, 4096, 256, 128, 128},
	}
	for _, tt := range tests {
		d, err := DefaultsFor(ParseEngine(tt.engine), gpu(tt.gpu), tt.maxLen)
		if err != nil {
			t.Errorf("%s on %s: %v", tt.engine, tt.gpu, err)
		}
		if d.MaxNumBatchedTokens != tt.budget || d.MaxNumSeqs != tt.seqs || d.BlockSize != tt.block || d.GraphMax != tt.graphMax || d.Rule == "" {
			t.Errorf("%s on %s: %+v, want budget %d, %d seqs, block %d, graphs to %d", tt.engine, tt.gpu, d, tt.budget, tt.seqs, tt.block, tt.graphMax)
		}
	}
	if _, err := DefaultsFor(ParseEngine("tgi-2.0"), gpu("H20"), 8192); err == nil {
		t.Error("an unknown family gave no error")
	}
}

// vLLM V0 streams a step's tokens as the next step ends from v0.6 (async
// output processing); earlier V0 releases, V1 and Dynamo's recipe do not.
func TestDefaultsDelayedOutput(t *testing.T) {
	g, err := LookupGPU("H20")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		engine string
		want   bool
	}{
		{"vllm", false}, {"vllm-0.5.5", false}, {"vllm-0.6.0", true}, {"vllm-0.7.3", true},
		{"vllm-0.8.0", false}, {"vllm-0.9.0.1", false}, {"dynamo-0.3.0", false},
	} {
		d, _ := DefaultsFor(ParseEngine(tt.engine), g, 40960)
		if d.DelayedOutput != tt.want {
			t.Errorf("%s: delayed output %v, want %v", tt.engine, d.DelayedOutput, tt.want)
		}
	}
}
