package model

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestParseTopology(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		gpus    int
		wantErr string
	}{
		{in: "4xTP4", want: "4xTP4", gpus: 16},
		{in: "2xtp4pp2", want: "2xTP4PP2", gpus: 16},
		{in: "prefill 6xTP2 + decode 1xTP4", want: "prefill 6xTP2 + decode 1xTP4", gpus: 16},
		{in: "3P(TP4) 1D(TP4)", want: "prefill 3xTP4 + decode 1xTP4", gpus: 16},
		{in: "12P(TP1) 1D(TP4)", want: "prefill 12xTP1 + decode 1xTP4", gpus: 16},
		{in: "P 3xTP4 D 1xTP4", want: "prefill 3xTP4 + decode 1xTP4", gpus: 16}, // as capsim data prints it
		{in: "3xTP4 and 1xTP4", wantErr: `model: topology "3xTP4 and 1xTP4": want NxTPk or NxTPkPPj (e.g. 6xTP2), or prefill and decode pools as "prefill 6xTP2 + decode 1xTP4", "6P(TP2) 1D(TP4)" or "P 6xTP2 D 1xTP4"`},
		{in: "6xTP", wantErr: `model: topology "6xTP": want NxTPk or NxTPkPPj, e.g. 6xTP2`},
		{in: "0xTP2", wantErr: `model: topology "0xTP2": worker count must be a positive integer`},
		{in: "2xTP0", wantErr: `model: topology "2xTP0": TP must be a positive integer`},
		{in: "2xTP2PP0", wantErr: `model: topology "2xTP2PP0": PP must be a positive integer`},
		{in: "", wantErr: `model: topology "": want NxTPk or NxTPkPPj, e.g. 6xTP2`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTopology(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want || got.GPUs() != tt.gpus {
				t.Errorf("got %s with %d GPUs, want %s with %d", got, got.GPUs(), tt.want, tt.gpus)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestTopologyValidate(t *testing.T) {
	bad := []Topology{
		{},
		{Prefill: Pool{Count: 1, TP: 1}},
		{Replicas: Pool{Count: 1, TP: 1}, Decode: Pool{Count: 1, TP: 1}},
	}
	for _, b := range bad {
		if err := b.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want error", b)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, name := range []string{"H20", "h20", "NVIDIA H20", "h100 sxm", "V100", "NVIDIA_L40S"} {
		if _, err := LookupGPU(name); err != nil {
			t.Errorf("LookupGPU(%q): %v", name, err)
		}
	}
	if _, err := LookupGPU("TPUv5"); err == nil {
		t.Error("LookupGPU(TPUv5) found something")
	}
	for _, name := range []string{"Qwen3-32B", "qwen/qwen3-32b", "Llama-3.1-8B-Instruct", "llama-3.2-3b"} {
		if _, err := LookupLLM(name); err != nil {
			t.Errorf("LookupLLM(%q): %v", name, err)
		}
	}
	if _, err := LookupLLM("Llama-3.1"); err == nil {
		t.Error("an ambiguous prefix (Llama-3.1-8B and -70B) was accepted")
	}
	if SameModel("Qwen/Qwen3-32B", "other/Qwen3-32B") {
		t.Error("models of different organisations compared equal")
	}
}

func ExampleParseTopology() {
	t, _ := ParseTopology("3P(TP4) 1D(TP4)")
	fmt.Println(t, "on", t.GPUs(), "GPUs")
	// Output: prefill 3xTP4 + decode 1xTP4 on 16 GPUs
}

func TestCheckTP(t *testing.T) {
	qwen, err := LookupLLM("Qwen3-32B")
	if err != nil {
		t.Fatal(err)
	}
	llama3b, err := LookupLLM("Llama-3.2-3B")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		m    LLM
		tp   int
		want bool
	}{
		{qwen, 1, true}, {qwen, 2, true}, {qwen, 4, true}, {qwen, 8, true},
		{qwen, 16, true}, // 8 KV heads replicated twice
		{qwen, 3, false}, {qwen, 6, false}, {qwen, 0, false},
		{llama3b, 3, false}, // 24 heads divide by 3, 8 KV heads neither divide nor replicate
		{llama3b, 8, true}, {llama3b, 16, false},
	}
	for _, tc := range tests {
		err := tc.m.CheckTP(tc.tp)
		if (err == nil) != tc.want {
			t.Errorf("%s TP%d: err %v, want ok=%v", tc.m.Name, tc.tp, err, tc.want)
		}
	}
	topo, _ := ParseTopology("prefill 6xTP3 + decode 1xTP4")
	if err := topo.CheckModel(qwen); err == nil || !strings.Contains(err.Error(), "TP3") {
		t.Errorf("6xTP3 prefill for Qwen3-32B: err %v, want a TP3 refusal", err)
	}
	h20, _ := LookupGPU("H20")
	if _, err := WorkerMemory(h20, qwen, Pool{Count: 1, TP: 6}, MemoryOptions{}); err == nil {
		t.Error("WorkerMemory accepted TP6 for 64-head Qwen3-32B")
	}
}

// One package prefix on a load's burstiness error, from Validate and from
// CheckBurstiness alike.
func TestBurstinessErrors(t *testing.T) {
	l := Open(2, math.Inf(1))
	if err := l.Validate(); err == nil || err.Error() != "model: load: burstiness must be a positive finite number, got +Inf" {
		t.Errorf("Validate: %v", err)
	}
	if err := CheckBurstiness(0); err == nil || err.Error() != "model: burstiness must be a positive finite number, got 0" {
		t.Errorf("CheckBurstiness: %v", err)
	}
	if err := CheckBurstiness(0.5); err != nil {
		t.Errorf("CheckBurstiness(0.5): %v", err)
	}
}
