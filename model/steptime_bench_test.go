package model

import "testing"

// StepTime is the simulator's and the fitter's innermost call: a decode
// step of a dense model at TP8 (its all-reduces along the graph curve)
// and of a mixture of experts under expert parallelism.
func BenchmarkStepTime(b *testing.B) {
	graphs := []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
	for _, c := range []struct {
		name, gpu, llm string
		pool           Pool
		ep             bool
	}{
		{"dense-TP8", "H100", "Llama-3.1-70B-Instruct", Pool{Count: 1, TP: 8}, false},
		{"moe-EP8", "H100", "Qwen3-235B-A22B", Pool{Count: 1, TP: 8}, true},
	} {
		g, err := LookupGPU(c.gpu)
		if err != nil {
			b.Fatal(err)
		}
		m, err := LookupLLM(c.llm)
		if err != nil {
			b.Fatal(err)
		}
		if c.ep {
			m = m.WithExpertParallel(c.pool.TP)
		}
		sc := NewStepCost(g, m, c.pool, PriorCoeffs(false), graphs)
		b.Run(c.name, func(b *testing.B) {
			s := Step{DecodeSeqs: 1, DecodeKV: 1000}
			var sink float64
			for i := range b.N {
				s.DecodeSeqs = 1 + i%256
				s.DecodeKV = 1000 * float64(s.DecodeSeqs)
				sink += sc.StepTime(s)
			}
			if sink <= 0 {
				b.Fatal("no time")
			}
		})
	}
}
