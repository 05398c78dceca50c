package plan

import (
	"context"
	"syscall"
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/workload"
)

// BenchmarkPlan is the search: Qwen3-32B at 3000:150 tokens and
// 20 req/s under ttft_p99 ≤ 2 s and tpot_p99 ≤ 50 ms, on H20, H100-SXM and
// H200 up to 64 GPUs, ranked by price, frontier sweep included. It reports
// candidate deployments considered per second and simulator runs per second.
func BenchmarkPlan(b *testing.B) {
	benchmarkPlan(b, h20Profile(b))
}

// BenchmarkPlanLlama70B is issue 13's example: Llama-3.1-70B at 1024:256
// tokens and 30 req/s under ttft_p99 ≤ 2 s and tpot_p99 ≤ 50 ms on H100
// and H200, margin search and frontier sweep included.
func BenchmarkPlanLlama70B(b *testing.B) {
	opts := Options{Model: "Llama-3.1-70B", SLOs: mustSLOs(b, "ttft_p99=2s,tpot_p99=50ms"), GPUs: []string{"H100", "H200"}, Workload: workload.Workload{ISL: 1024, OSL: 256, Load: model.Open(30, 1), Seed: 1}}
	runPlanBench(b, h20Profile(b), opts)
}

// BenchmarkPlanFake is the same search on the roofline-prior fake profile.
func BenchmarkPlanFake(b *testing.B) {
	benchmarkPlan(b, &fakeProfile{})
}

func benchmarkPlan(b *testing.B, prof Profile) {
	opts := Options{Model: "Qwen3-32B", SLOs: mustSLOs(b, "ttft_p99=2000ms,tpot_p99=50ms"), GPUs: []string{"H20", "H100-SXM", "H200"}, GPUCost: map[string]float64{"H20": 1.9, "H100-SXM": 2.5, "H200": 3.5}, MaxGPUs: 64, Workload: workload.Workload{ISL: 3000, OSL: 150, Load: model.Open(20, 1), Seed: 1}}
	runPlanBench(b, prof, opts)
}

// runPlanBench reports candidates and simulator runs per wall-clock
// second, and the CPU seconds of one search (user + system, all threads):
// on a shared machine the wall clock overstates what two free cores take.
func runPlanBench(b *testing.B, prof Profile, opts Options) {
	var cands, sims int
	cpu0 := cpuSeconds()
	for b.Loop() {
		res, err := Run(context.Background(), prof, opts)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Recommendations) == 0 {
			b.Fatalf("no recommendation: %s", res.Why)
		}
		cands += res.Search.Candidates
		sims += res.Search.Simulations
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(cands)/sec, "candidates/s")
	b.ReportMetric(float64(sims)/sec, "simulations/s")
	b.ReportMetric(float64(cands)/float64(b.N), "candidates/op")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// BenchmarkEnumerate512 is the candidate enumeration and pruning of a
// search up to 512 GPUs (no simulation): candidates considered per second.
func BenchmarkEnumerate512(b *testing.B) {
	prof := h20Profile(b)
	opts := Options{Model: "Qwen3-32B", SLOs: mustSLOs(b, "ttft_p99=2000ms,tpot_p99=50ms"), GPUs: []string{"H20", "H100-SXM", "H200"}, MaxGPUs: 512, Workload: workload.Workload{ISL: 3000, OSL: 150, Load: model.Open(200, 1), Seed: 1}}.withDefaults()
	s, err := newSearch(prof, opts)
	if err != nil {
		b.Fatal(err)
	}
	cands := 0
	b.ReportAllocs()
	for b.Loop() {
		s.res.Search, s.cands = Search{}, nil
		s.enumerate()
		cands += s.res.Search.Candidates
	}
	b.ReportMetric(float64(cands)/b.Elapsed().Seconds(), "candidates/s")
	b.ReportMetric(float64(s.res.Search.Candidates), "candidates/op")
	b.ReportMetric(float64(len(s.cands)), "survivors/op")
}
