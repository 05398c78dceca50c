package engine

import (
	"strings"
	"testing"
)

func TestOverheadFor(t *testing.T) {
	tests := []struct{ label, want string }{
		{"vllm-0.9.0.1", "V1"},
		{"vllm-0.8.4", "V1"},
		{"vllm-0.6.0", "V0 async output"},
		{"vllm-0.5.4", "V0 synchronous"},
		{"vllm-0.10.1.1", "V1"}, // --async-scheduling was opt-in before 0.14
		{"vllm-v0.11.0", "V1"},
		{"vllm-0.13.0", "V1"},
		{"vllm-0.14.0", "V1 with async scheduling"},
		{"vllm-0.19.0", "V1 with async scheduling"},
		{"vllm", "V0 (unversioned label)"},
		{"dynamo-0.3.0", "Dynamo with vLLM V0 workers"},
		{"sglang-0.3.0", "SGLang overlap scheduler"},
		{"llm-d-inference-sim-0.10.2", "unknown engine"},
		{"", "unknown engine"},
	}
	for _, tt := range tests {
		if got := OverheadFor(tt.label); got.Generation != tt.want {
			t.Errorf("OverheadFor(%q) = %q, want %q", tt.label, got.Generation, tt.want)
		}
	}
	for _, o := range overheads {
		if !(o.StepS > 0 && o.EagerStepS > o.StepS && o.PerSeqS > 0 && o.Source != "") {
			t.Errorf("row %+v: want positive overheads, eager above graphs, and a source", o)
		}
	}
}

// A run that states async scheduling is priced by vLLM's rule: 0.10 to
// 0.13 with --async-scheduling as the async V1 row, 0.14 on with
// --no-async-scheduling as the synchronous one; unstated, a version's own
// row; where the flag does not exist (before 0.10, other engines,
// unversioned labels), the label's row.
func TestOverheadWithAsyncScheduling(t *testing.T) {
	on, off := new(bool), new(bool)
	*on = true
	tests := []struct {
		label string
		async *bool
		want  string
	}{
		{"vllm-0.10.1.1", on, "V1 with async scheduling"},
		{"vllm-0.13.0", on, "V1 with async scheduling"},
		{"vllm-0.11.0", off, "V1"},
		{"vllm-0.11.0", nil, "V1"},
		{"vllm-0.9.0.1", on, "V1"},
		{"vllm-0.14.0", on, "V1 with async scheduling"},
		{"vllm-0.14.0", nil, "V1 with async scheduling"},
		{"vllm-0.14.0", off, "V1"},
		{"vllm-0.19.0", off, "V1"},
		{"vllm-0.6.3", on, "V0 async output"},
		{"vllm", on, "V0 (unversioned label)"},
		{"sglang-0.5.5", on, "SGLang overlap scheduler"},
		{"sglang-0.5.5", off, "SGLang overlap scheduler"},
		{"dynamo-0.3.0", on, "Dynamo with vLLM V0 workers"},
	}
	for _, tt := range tests {
		got := OverheadWith(tt.label, Settings{AsyncScheduling: tt.async})
		if got.Generation != tt.want {
			t.Errorf("OverheadWith(%q, %v) = %q, want %q", tt.label, tt.async, got.Generation, tt.want)
		}
		if tt.async == nil && got != OverheadFor(tt.label) {
			t.Errorf("OverheadWith(%q, nil) differs from OverheadFor", tt.label)
		}
		if id := Parse(tt.label); AsyncSchedulingOn(id, tt.async) != (got.Generation == "V1 with async scheduling") {
			t.Errorf("AsyncSchedulingOn(%q, %v) disagrees with the row %q", tt.label, tt.async, got.Generation)
		}
	}
	if o := OverheadWith("vllm-0.11.0", Settings{AsyncScheduling: on}); !strings.Contains(o.Source, "states --async-scheduling") || o.StepS >= OverheadFor("vllm-0.11.0").StepS {
		t.Errorf("async row for 0.11: %+v; want a source naming the flag and a lower step overhead than synchronous V1", o)
	}
	if o := OverheadWith("vllm-0.14.0", Settings{AsyncScheduling: off}); !strings.Contains(o.Source, "--no-async-scheduling") || o.StepS <= OverheadFor("vllm-0.14.0").StepS {
		t.Errorf("synchronous row for 0.14: %+v; want a source naming --no-async-scheduling and a higher step overhead than async V1", o)
	}
}

// A vLLM run that states its engine generation (VLLM_USE_V1) is priced
// as that generation's release: 0.8.4 run on V0 by the V0 row, 0.7.2 run
// on V1 by the V1 row, a release's own generation or another engine as
// its label; a V0 run's async-scheduling flag has no V1 row to move to.
func TestOverheadWithGeneration(t *testing.T) {
	on := new(bool)
	*on = true
	for _, tt := range []struct {
		label string
		gen   Generation
		async *bool
		want  string
	}{
		{"vllm-0.8.4", "v0", nil, "V0 async output"},
		{"vllm-0.10.1", "v0", on, "V0 async output"},
		{"vllm-0.7.2", "v1", nil, "V1"},
		{"vllm-0.7.2", "", nil, "V0 async output"},
		{"vllm-0.9.0.1", "v1", nil, "V1"},
		{"vllm-0.6.3", "v0", nil, "V0 async output"},
		{"sglang-0.5.5", "v0", nil, "SGLang overlap scheduler"},
	} {
		o := OverheadWith(tt.label, Settings{Generation: tt.gen, AsyncScheduling: tt.async})
		if o.Generation != tt.want {
			t.Errorf("OverheadWith(%q, generation %q) = %q, want %q", tt.label, tt.gen, o.Generation, tt.want)
		}
		moved := o.Generation != OverheadFor(tt.label).Generation
		if named := strings.Contains(o.Source, "VLLM_USE_V1"); named != moved {
			t.Errorf("OverheadWith(%q, generation %q): row moved %v but the source names the setting %v", tt.label, tt.gen, moved, named)
		}
	}
}

// A stated async-scheduling flag is refused, in one line naming it, where
// vLLM has no such flag.
func TestCheckAsyncScheduling(t *testing.T) {
	on, off := new(bool), new(bool)
	*on = true
	for _, tt := range []struct {
		label string
		async *bool
		want  string // "" for no error
	}{
		{"vllm-0.12.0", on, ""},
		{"vllm-0.10.0", off, ""},
		{"vllm-0.14.0", off, ""},
		{"vllm-0.9.0.1", nil, ""},
		{"sglang-0.5.5", nil, ""},
		{"vllm-0.9.0.1", on, "--async-scheduling needs vLLM 0.10 or later; the engine is vllm-0.9.0.1"},
		{"vllm-0.9.0.1", off, "--no-async-scheduling needs vLLM 0.10 or later"},
		{"vllm", on, "--async-scheduling needs vLLM 0.10 or later; the engine vllm names no version"},
		{"sglang-0.5.5", on, "--async-scheduling is vLLM's flag (0.10 or later); the engine is sglang-0.5.5"},
		{"dynamo-0.3.0", off, "--no-async-scheduling is vLLM's flag"},
	} {
		err := CheckAsyncScheduling(Parse(tt.label), tt.async)
		if (err == nil) != (tt.want == "") || (err != nil && (!strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n"))) {
			t.Errorf("CheckAsyncScheduling(%q, %v) = %v, want %q", tt.label, tt.async, err, tt.want)
		}
	}
}
