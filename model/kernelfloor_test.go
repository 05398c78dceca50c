package model

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// h200Kernels is the part of docs/measurements/gpu_kernels_h200.json the
// kernel-floor constants come from.
type h200Kernels struct {
	Sections struct {
		Floor map[string]float64 `json:"floor"`
		GEMM  struct {
			Rows []struct {
				M     int     `json:"m"`
				Bytes float64 `json:"bytes"`
				Us    float64 `json:"us"`
			} `json:"rows"`
		} `json:"gemm"`
	} `json:"sections"`
}

// TestKernelFloorConstantsMatchMeasurement refits the constants from the
// recorded H200 run: the intercept of decode-shaped GEMM time against
// bytes, and the smallest kernel's latency in a CUDA graph.
func TestKernelFloorConstantsMatchMeasurement(t *testing.T) {
	b, err := os.ReadFile("../docs/measurements/gpu_kernels_h200.json")
	if err != nil {
		t.Fatal(err)
	}
	var k h200Kernels
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	for _, m := range []int{1, 16, 64, 128} {
		var n, sx, sy, sxx, sxy float64
		for _, r := range k.Sections.GEMM.Rows {
			if r.M != m {
				continue
			}
			n++
			sx, sy, sxx, sxy = sx+r.Bytes, sy+r.Us, sxx+r.Bytes*r.Bytes, sxy+r.Bytes*r.Us
		}
		if n < 20 {
			t.Fatalf("M=%d: %v GEMM timings, want the recorded sweep", m, n)
		}
		slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
		icpt := (sy - slope*sx) / n
		if math.Abs(icpt-GEMMKernelUs) > 0.8 {
			t.Errorf("M=%d: measured GEMM intercept %.2f µs, GEMMKernelUs %.2f", m, icpt, GEMMKernelUs)
		}
		if tbps := 1 / slope / 1e6; tbps < 3.8 || tbps > 4.8 {
			t.Errorf("M=%d: GEMMs stream at %.2f TB/s, outside the H200's achievable 3.8–4.8", m, tbps)
		}
	}
	// The fused layer's five small kernels: what the layer takes beyond its
	// linears and its attention, each timed alone in the same run.
	b, err = os.ReadFile("../docs/measurements/gpu_fused_layer_h200.json")
	if err != nil {
		t.Fatal(err)
	}
	var fused struct {
		Rows []struct {
			TP    int     `json:"tp"`
			Batch int     `json:"batch"`
			Rest  float64 `json:"rest_us"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &fused); err != nil || len(fused.Rows) < 4 {
		t.Fatalf("fused-layer rows: %d (%v)", len(fused.Rows), err)
	}
	// At batch 1 they move next to nothing; at 32 their activation traffic
	// (priced apart, ActivationKernels) adds a little.
	for _, r := range fused.Rows {
		per, slack := r.Rest/5, 0.4
		if r.Batch > 1 {
			slack = 0.8
		}
		if math.Abs(per-SmallKernelUs) > slack {
			t.Errorf("TP%d batch %d: fused small kernels take %.2f µs each, SmallKernelUs %.2f", r.TP, r.Batch, per, SmallKernelUs)
		}
	}
	if tiny := k.Sections.Floor["add_1024_graph_us"]; tiny <= 0 || tiny > SmallKernelUs {
		t.Errorf("a tiny kernel in a CUDA graph takes %.2f µs: the floor under SmallKernelUs %.2f", tiny, SmallKernelUs)
	}
}

// TestKernelFloorIndependentOfTP checks the floor's form: the same for any
// TP degree and every GPU, paid by graph workers and not eager ones, and
// the share of a c=1 decode step that makes a wide TP run above its
// weight-read roofline.
func TestKernelFloorIndependentOfTP(t *testing.T) {
	g, _ := LookupGPU("H100")
	m, _ := LookupLLM("Qwen3-32B")
	heavy, small := m.KernelsPerStep()
	if heavy != 5*64+1 || small != 6*64+6 {
		t.Fatalf("Qwen3-32B kernels per step: %v heavy, %v small; want 321, 390", heavy, small)
	}
	want := (heavy*GEMMKernelUs + small*SmallKernelUs) * 1e-6
	step := Step{DecodeSeqs: 1, DecodeKV: 1024}
	c := PriorCoeffs(false)
	for _, tp := range []int{1, 2, 4, 8} {
		p := Pool{Count: 1, TP: tp}
		graph := NewStepCost(g, m, p, c, []int{1, 2, 4, 8})
		eager := NewStepCost(g, m, p, c, nil)
		if got := graph.KernelFloor(); math.Abs(got-want) > 1e-12 {
			t.Errorf("TP%d: kernel floor %.3f ms, want %.3f", tp, 1000*got, 1000*want)
		}
		if eager.KernelFloor() != 0 {
			t.Errorf("TP%d: an eager worker pays launches in its overhead row, not the graph floor", tp)
		}
		if d := graph.StepTime(step) - c.Dot(graph.Roofline.Terms(step, 1, c)); math.Abs(d-want) > 1e-12 {
			t.Errorf("TP%d: step time carries %.3f ms beyond its terms, want the floor %.3f", tp, 1000*d, 1000*want)
		}
	}
	moe, _ := LookupLLM("Mixtral-8x7B")
	if h, s := moe.KernelsPerStep(); h <= 5*float64(moe.Layers) || s <= 6*float64(moe.Layers) {
		t.Errorf("a mixture of experts launches more kernels than a dense layer: %v, %v", h, s)
	}
}
