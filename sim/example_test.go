package sim_test

import (
	"context"
	"fmt"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// flatCost prices every step at 20 ms whatever it holds.
type flatCost struct{}

func (flatCost) StepTime(model.Step) float64         { return 0.020 }
func (flatCost) DecodeAffine(int) (float64, float64) { return 0.020, 0 }

func ExampleRun() {
	res, err := sim.Run(context.Background(), sim.Config{
		Replicas:   sim.PoolConfig{Workers: 1, Cost: flatCost{}, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load:       model.Closed(4),
		Input:      sim.Fixed(512),
		Output:     sim.Fixed(100),
		NumPrompts: 40,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := res.Metrics
	// Four clients in lock step: prefill together (TTFT one step), then 99
	// decode steps; 4 requests every 100 steps of 20 ms.
	fmt.Printf("TTFT %.0f ms, TPOT %.0f ms, E2E %.0f ms\n", m[model.MeanTTFT], m[model.MeanTPOT], m[model.MeanE2EL])
	fmt.Printf("%.1f req/s, %.0f output tok/s over %.0f s\n", m[model.RequestThroughput], m[model.OutputThroughput], res.Duration)
	// Output:
	// TTFT 20 ms, TPOT 20 ms, E2E 2000 ms
	// 2.0 req/s, 200 output tok/s over 20 s
}
