package model

import (
	"math"
	"strings"
	"testing"
)

func TestRooflineH20Qwen3(t *testing.T) {
	g, _ := LookupGPU("h20")
	m, _ := LookupLLM("qwen3-32b")
	r := NewRoofline(g, m, Pool{Count: 1, TP: 4})
	// 65.6 GB of BF16 weights over 4 GPUs at 4 TB/s each: 4.1 ms.
	if got, want := r.WeightRead, 65.6e9/16e12; math.Abs(got-want)/want > 0.01 {
		t.Errorf("WeightRead = %g, want %g", got, want)
	}
	// 2,500 prompt tokens at TP1 need about 2·31.2e9·2500 FLOPs at 148 TFLOPS: about 1.05 s.
	r1 := NewRoofline(g, m, Pool{Count: 1, TP: 1})
	if got := r1.BodyToken * 2500; got < 1.0 || got > 1.15 {
		t.Errorf("2500-token body compute at TP1 = %g s, want about 1.05", got)
	}
	if r1.CommStep != 0 || r1.CommToken != 0 {
		t.Errorf("TP1 has communication cost %+v", r1)
	}
}

func TestStepCostDecodeAffine(t *testing.T) {
	g, _ := LookupGPU("H20")
	m, _ := LookupLLM("Qwen/Qwen3-32B")
	c := NewStepCost(g, m, Pool{Count: 1, TP: 4}, PriorCoeffs(false), VLLMGraphSizes(128))
	for _, n := range []int{1, 3, 9, 128, 200} {
		base, perKV := c.DecodeAffine(n)
		for _, k := range []float64{0, 1e3, 5e5} {
			got := c.StepTime(Step{DecodeSeqs: n, DecodeKV: k})
			if want := base + perKV*k; math.Abs(got-want) > 1e-12 {
				t.Errorf("n=%d k=%g: StepTime %g != affine %g", n, k, got, want)
			}
		}
	}
	if a, b := c.StepTime(Step{DecodeSeqs: 9}), c.StepTime(Step{DecodeSeqs: 16}); a != b {
		t.Errorf("batch 9 should pad to 16: %g vs %g", a, b)
	}
}

func TestWorkerMemory(t *testing.T) {
	g, _ := LookupGPU("H20")
	m, _ := LookupLLM("Qwen3-32B")
	mem, err := WorkerMemory(g, m, Pool{Count: 1, TP: 4}, MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 4×96×0.9 = 345.6 GB usable, 65.6 weights, 8 reserve: 272 GB of KV at 256 KiB per token.
	if want := 272e9 / 262144; math.Abs(float64(mem.KVTokens)-want) > 0.01*want {
		t.Errorf("KVTokens = %d, want about %.0f", mem.KVTokens, want)
	}
	l4, _ := LookupGPU("L4")
	if _, err := WorkerMemory(l4, m, Pool{Count: 1, TP: 1}, MemoryOptions{}); err == nil {
		t.Error("Qwen3-32B on one L4 should not fit")
	} else if want := "smallest TP that fits: TP4"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
}
