package plan_test

import (
	"context"
	"fmt"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plan"
	"github.com/capsim/capsim/workload"
)

func ExampleParseSLOs() {
	slos, err := plan.ParseSLOs("ttft_p99=2s,tpot_p99=50ms,p50_e2el=4000")
	if err != nil {
		panic(err)
	}
	for _, s := range slos {
		fmt.Println(s.Metric(), "<=", s.LimitMs, "ms")
	}
	_, err = plan.ParseSLOs("ttft_p99=fast")
	fmt.Println(err)
	// Output:
	// p99_ttft_ms <= 2000 ms
	// p99_tpot_ms <= 50 ms
	// median_e2el_ms <= 4000 ms
	// plan: SLO "ttft_p99=fast": "fast" is not a duration (want e.g. 2000ms or 2s)
}

func ExampleNotation() {
	fmt.Println(plan.Notation(model.Disaggregated(model.Pool{Count: 6, TP: 2}, model.Pool{Count: 1, TP: 4})))
	fmt.Println(plan.Notation(model.Aggregated(model.Pool{Count: 4, TP: 4})))
	// Output:
	// 6P(TP2) 1D(TP4)
	// 4xTP4
}

// ExampleRun sizes H20 deployments of Qwen3-32B for 4 req/s of 3000:150
// requests with the embedded calibration.
func ExampleRun() {
	prof, err := calibrate.ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		panic(err)
	}
	slos, _ := plan.ParseSLOs("ttft_p99=2000ms,tpot_p99=50ms")
	res, err := plan.Run(context.Background(), prof, plan.Options{
		Model: "Qwen3-32B", GPUs: []string{"H20"}, SLOs: slos, MaxGPUs: 32,
		Workload: workload.Workload{ISL: 3000, OSL: 150, Load: model.Open(4, 1)},
	})
	if err != nil {
		panic(err)
	}
	if len(res.Recommendations) == 0 {
		fmt.Println("nothing qualifies:", res.Why)
		return
	}
	best := res.Recommendations[0]
	fmt.Printf("%s on %d× %s meets every SLO up to %.1f req/s\n", best.Notation, best.GPUs, best.GPU, best.Headroom.RequestRate)
}
