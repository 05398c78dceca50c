package engine_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
)

// device is a catalog GPU as the engine's defaults read it.
func device(t *testing.T, name string) engine.Device {
	t.Helper()
	g, err := model.LookupGPU(name)
	if err != nil {
		t.Fatal(err)
	}
	return g.Device()
}

func TestParse(t *testing.T) {
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
		{"tensorrt-llm-1.0", "trtllm", []int{1, 0}, "trtllm-1.0"}, // one spelling per engine family
		{"TRT-LLM", "trtllm", nil, "trtllm"},
	}
	for _, tt := range tests {
		e := engine.Parse(tt.label)
		if e.Family != tt.family || !reflect.DeepEqual(e.Version, tt.version) || e.String() != tt.str {
			t.Errorf("engine.Parse(%q) = %q %v %q, want %q %v %q", tt.label, e.Family, e.Version, e.String(), tt.family, tt.version, tt.str)
		}
	}
	if !engine.Parse("vllm-0.8.4").Older(engine.Parse("vllm-0.9.0.1")) || engine.Parse("vllm-0.9.0.1").Older(engine.Parse("vllm-0.9")) ||
		!engine.Parse("vllm").Older(engine.Parse("vllm-0.1")) {
		t.Error("version order wrong")
	}
}

// TestDefaultsFor checks vLLM's GPU-dependent defaults release by release
// (vllm#12369, #17073, #17885) on GPUs either side of each rule.
func TestDefaults(t *testing.T) {
	gpu := func(name string) engine.Device { return device(t, name) }
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
		d, err := engine.Defaults(engine.Parse(tt.engine), gpu(tt.gpu), tt.maxLen)
		if err != nil {
			t.Errorf("%s on %s: %v", tt.engine, tt.gpu, err)
		}
		if d.MaxNumBatchedTokens != tt.budget || d.MaxNumSeqs != tt.seqs || d.BlockSize != tt.block || d.GraphMax != tt.graphMax || d.Rule == "" {
			t.Errorf("%s on %s: %+v, want budget %d, %d seqs, block %d, graphs to %d", tt.engine, tt.gpu, d, tt.budget, tt.seqs, tt.block, tt.graphMax)
		}
	}
	if _, err := engine.Defaults(engine.Parse("tgi-2.0"), gpu("H20"), 8192); err == nil {
		t.Error("an unknown family gave no error")
	}
}

// TestDefaultsOtherEngines checks SGLang's memory-banded defaults (0.4's
// flat rule, 0.5's table), its prefill-first scheduler, and TensorRT-LLM's
// batch limits and reserving scheduler under each spelling of its name.
func TestDefaultsOtherEngines(t *testing.T) {
	tests := []struct {
		engine, gpu            string
		budget, seqs, graphMax int
		block                  int
		util                   float64 // 0: not set (vLLM's 0.9)
		prefillFirst, reserve  bool
	}{
		{"sglang-0.4.6.post2", "A100-80GB", 8192, 4096, 160, 1, 0.88, true, false},
		{"sglang-0.4.6.post2", "L4", 2048, 4096, 8, 1, 0.88, true, false}, // 23,034 MiB: below 25,000
		// Above 96 GiB: graphs to 256, and 0.88 raised by 48 GiB × 0.12 ÷ 143,771 MiB
		// (0.921), held to (143,771 − 18 GiB) ÷ 143,771.
		{"sglang-0.4.6.post2", "H200", 8192, 4096, 256, 1, (143771.0 - 18*1024) / 143771, true, false},
		// 81,559 MiB: reserve 512 + 1.5·8192 + 2·256 + 128 = 13,440 MiB.
		{"sglang-0.5.5.post1", "H100-SXM", 8192, 4096, 256, 1, 0.835, true, false},
		{"sglang-0.5.5.post1", "A100-40GB", 4096, 4096, 32, 1, 0.833, true, false},     // reserve 6,848 MiB of 40,960
		{"sglang-0.5.5.post1", "L4", 2048, 4096, 24, 1, 0.837, true, false},            // reserve 3,760 MiB of 23,034
		{"sglang-0.5.5.post1", "V100-PCIe-16GB", 2048, 4096, 8, 1, 0.769, true, false}, // below 20 GiB: reserve 3,728 MiB of 16,160
		{"sglang-0.5.5.post1", "B200", 16384, 4096, 512, 1, 0.857, true, false},        // reserve 26,240 MiB of 183,359
		{"sglang", "H100-SXM", 8192, 4096, 256, 1, 0.835, true, false},                 // no version: the newer rule
		{"trtllm-1.2.0rc1", "H100-SXM", 8192, 2048, engine.VLLMGraphMax, 16, 0, false, true},
		{"tensorrt-llm-1.0", "B200", 8192, 2048, engine.VLLMGraphMax, 16, 0, false, true},
		{"vllm-0.11.0", "H100-SXM", 8192, 1024, engine.VLLMGraphMax, 16, 0, false, false},
	}
	for _, tt := range tests {
		g := device(t, tt.gpu)
		d, err := engine.Defaults(engine.Parse(tt.engine), g, 40960)
		if err != nil {
			t.Errorf("%s on %s: %v", tt.engine, tt.gpu, err)
		}
		if d.MaxNumBatchedTokens != tt.budget || d.MaxNumSeqs != tt.seqs || d.GraphMax != tt.graphMax || d.BlockSize != tt.block ||
			math.Abs(d.GPUMemoryUtilization-tt.util) > 1e-3 || d.PrefillFirst != tt.prefillFirst || d.ReserveOutput != tt.reserve || d.Rule == "" ||
			(d.ReserveGB == 0) != (engine.Parse(tt.engine).Family == "vllm") {
			t.Errorf("%s on %s: %+v, want budget %d, %d seqs, graphs to %d, block %d, utilization %.3f, prefill first %v, reserve %v, a fixed memory reserve unless vLLM",
				tt.engine, tt.gpu, d, tt.budget, tt.seqs, tt.graphMax, tt.block, tt.util, tt.prefillFirst, tt.reserve)
		}
	}
}

// vLLM V0 streams a step's tokens as the next step ends from v0.6 (async
// output processing); earlier V0 releases, V1 and Dynamo's recipe do not.
func TestDefaultsDelayedOutput(t *testing.T) {
	g := device(t, "H20")
	for _, tt := range []struct {
		engine string
		want   bool
	}{
		{"vllm", false}, {"vllm-0.5.5", false}, {"vllm-0.6.0", true}, {"vllm-0.7.3", true},
		{"vllm-0.8.0", false}, {"vllm-0.9.0.1", false}, {"dynamo-0.3.0", false},
	} {
		d, _ := engine.Defaults(engine.Parse(tt.engine), g, 40960)
		if d.DelayedOutput != tt.want {
			t.Errorf("%s: delayed output %v, want %v", tt.engine, d.DelayedOutput, tt.want)
		}
	}
}

// vLLM V0 without chunked prefill (a max-model-len of 32K or less) runs
// prefills first; with it, and from V1 on, prompts and decodes share steps.
func TestDefaultsV0PrefillFirst(t *testing.T) {
	g := device(t, "H100-SXM")
	for _, tt := range []struct {
		engine string
		maxLen int
		want   bool
	}{
		{"vllm-0.5.4", 32768, true}, {"vllm-0.6.3", 8192, true}, {"vllm-0.6.3", 131072, false},
		{"vllm-0.8.4", 8192, false}, {"vllm", 8192, false}, {"dynamo-0.3.0", 4096, false},
	} {
		if d, _ := engine.Defaults(engine.Parse(tt.engine), g, tt.maxLen); d.PrefillFirst != tt.want {
			t.Errorf("%s at max-model-len %d: prefill first %v, want %v", tt.engine, tt.maxLen, d.PrefillFirst, tt.want)
		}
	}
}

func TestPrefillBudgetCoversContext(t *testing.T) {
	for label, want := range map[string]bool{"dynamo-0.3.0": true, "dynamo": true, "dynamo-1.2.1": false, "vllm-0.9.0.1": false, "sglang-0.5.6": false} {
		if got := engine.Parse(label).PrefillBudgetCoversContext(); got != want {
			t.Errorf("%s: %v, want %v", label, got, want)
		}
	}
}

// Apply sets what a user states over the settings and keeps the rest; a
// stated memory share replaces a KV cache a record stated.
func TestSettingsApply(t *testing.T) {
	on, eager := false, true
	s := engine.Settings{BlockSize: 16, MaxNumSeqs: 256, KVCacheGiB: 20, PrefixCaching: engine.PrefixOn, Router: "random"}
	s.Apply(engine.Stated{MaxNumSeqs: 64, GPUMemoryUtilization: 0.8, PrefixCaching: &on, EnforceEager: &eager, KVCacheDtype: "FP8"})
	want := engine.Settings{BlockSize: 16, MaxNumSeqs: 64, GPUMemoryUtilization: 0.8, PrefixCaching: engine.PrefixOff, PrefillEager: true, DecodeEager: true, KVCacheDtype: "fp8", Router: "random"}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	off := false
	s.Apply(engine.Stated{AsyncScheduling: &off})
	if off = true; s.AsyncScheduling == nil || *s.AsyncScheduling {
		t.Errorf("stated --no-async-scheduling: %v, want an own false", s.AsyncScheduling)
	}
	// A profile written when the setting was a bool reads as stated on.
	var old engine.Settings
	if err := json.Unmarshal([]byte(`{"async_scheduling": true}`), &old); err != nil || old.AsyncScheduling == nil || !*old.AsyncScheduling {
		t.Errorf("async_scheduling true: %v %v", old.AsyncScheduling, err)
	}
	if z := (engine.Settings{}); z.Block() != engine.VLLMBlockSize || z.SeqCap() != engine.VLLMMaxNumSeqs || z.Budget() != engine.VLLMMaxBatchedTokens || len(z.CUDAGraphs(false)) != len(engine.GraphSizes(engine.VLLMGraphMax)) {
		t.Errorf("zero settings: block %d, seqs %d, budget %d: want vLLM's defaults", z.Block(), z.SeqCap(), z.Budget())
	}
}

// What a vLLM release keeps out of its KV cache follows its version as
// Parse reads it: two-number and rc labels take their release's figures,
// V0 and other engines the older rule.
func TestMemoryProfileByRelease(t *testing.T) {
	for _, c := range []struct {
		label             string
		sampler, nt, ntTP float64
	}{
		{"vllm", 0, 0, 0},
		{"vllm-0.10.1.1", 0, 0, 0},
		{"vllm-0.11.2", 0, 0, 0},
		{"vllm-0.12", 38.7, 0.13, 0.55},
		{"vllm-0.12.0rc1", 38.7, 0.13, 0.55},
		{"vllm-0.16.9", 38.7, 0.13, 0.55},
		{"vllm-0.17", 15.4, 0.13, 2.14},
		{"vllm-0.17.1", 15.4, 0.13, 2.14},
		{"vllm-0.19.0", 15.4, 0.25, 2.14},
		{"sglang-0.5.5", 0, 0, 0},
		{"dynamo-0.3.0", 0, 0, 0},
	} {
		s, nt, ntTP := engine.MemoryProfile(engine.Parse(c.label))
		if s != c.sampler || nt != c.nt || ntTP != c.ntTP {
			t.Errorf("%s: %g bytes a logit, %g and %g GiB outside PyTorch; want %g, %g, %g", c.label, s, nt, ntTP, c.sampler, c.nt, c.ntTP)
		}
	}
}
