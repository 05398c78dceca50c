package plan

import (
	"context"
	"slices"
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// When the GPU cap cuts off cheaper GPUs (a deployment of many L4s that
// meets the SLOs and costs less than the H200s the search found), the
// result says the cap bound it and names that deployment; with one GPU
// type, nothing past the cap is cheaper.
func TestLimitBoundSaid(t *testing.T) {
	opts := Options{Model: "Llama-3.1-8B", GPUs: []string{"H200", "L4"}, GPUCost: map[string]float64{"H200": 10, "L4": 0.5}, SLOs: mustSLOs(t, "ttft_p99=5s,tpot_p99=200ms"), MaxGPUs: 2, TPs: []int{1}, TopK: 1, Aggregated: true, NoSweep: true, NoMargin: true, Steady: sim.SteadyOptions{MaxPrompts: 2000}, Workload: workload.Workload{ISL: 512, OSL: 128, Load: model.Open(20, 1), Seed: 1, NumPrompts: 500}}
	res, err := Run(context.Background(), &fakeProfile{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recommendations) == 0 {
		t.Fatalf("no recommendation: %s", res.Why)
	}
	lb, ok := limitOf(res, LimitMaxGPUs)
	if !ok {
		t.Fatalf("limits %+v, want the 2-GPU cap said to bind (recommended %s at %g)", res.Limits, res.Recommendations[0].Label(), res.Recommendations[0].Cost)
	}
	if lb.Limit != LimitMaxGPUs || lb.Value != 2 || lb.Untried == 0 || lb.Simulated == 0 || !lb.Meets || lb.CheapestGPUs <= 2 || !(lb.CheapestCost < res.Recommendations[0].Cost) ||
		lb.Against != res.Recommendations[0].Cost || lb.Cheapest[:2] != "L4" {
		t.Errorf("limit %+v against %s at %g", lb, res.Recommendations[0].Label(), res.Recommendations[0].Cost)
	}

	opts.GPUs, opts.GPUCost = []string{"H200"}, nil
	if res, err = Run(context.Background(), &fakeProfile{}, opts); err != nil {
		t.Fatal(err)
	}
	if _, ok := limitOf(res, LimitMaxGPUs); len(res.Recommendations) == 0 || ok {
		t.Errorf("one GPU type ranked by count: limits %+v, recommendations %d", res.Limits, len(res.Recommendations))
	}
}

func limitOf(r *Result, limit string) (LimitBound, bool) {
	for _, l := range r.Limits {
		if l.Limit == limit {
			return l, true
		}
	}
	return LimitBound{}, false
}

// TP degrees left out of the search bind it when a deployment at one of
// them meets the SLOs for less: searching Llama-3.1-70B on H200 at TP 8
// only, one TP4 replica (4 GPUs) does what a TP8 replica (8) does.
func TestLimitTPSaid(t *testing.T) {
	opts := Options{Model: "Llama-3.1-70B", GPUs: []string{"H200"}, SLOs: mustSLOs(t, "ttft_p99=10s,tpot_p99=500ms"), MaxGPUs: 8, TPs: []int{8}, TopK: 1, Aggregated: true, NoSweep: true, NoMargin: true, Steady: sim.SteadyOptions{MaxPrompts: 2000}, Workload: workload.Workload{ISL: 512, OSL: 128, Load: model.Open(1, 1), Seed: 1, NumPrompts: 500}}
	res, err := Run(context.Background(), &fakeProfile{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recommendations) == 0 || res.Recommendations[0].GPUs != 8 {
		t.Fatalf("recommendations %+v, want one TP8 replica", res.Recommendations)
	}
	lb, ok := limitOf(res, LimitTP)
	if !ok || !lb.Meets || lb.CheapestGPUs >= 8 || !slices.Contains(lb.Excluded, 4) {
		t.Errorf("limits %+v, want --tp said to bind with a cheaper TP4 deployment", res.Limits)
	}
	opts.TPs = nil // every default degree searched: nothing left out
	if res, err = Run(context.Background(), &fakeProfile{}, opts); err != nil {
		t.Fatal(err)
	}
	if _, ok := limitOf(res, LimitTP); ok {
		t.Errorf("default TPs: limits %+v", res.Limits)
	}
}
