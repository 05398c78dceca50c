package sim

import (
	"context"
	"runtime"
	"syscall"
	"testing"

	"github.com/capsim/capsim/model"
)

// benchDisagg is the speed scenario: 6 prefill workers (TP2-like:
// twice the TP4 per-token prefill cost) and one decode worker (H20-like
// TP4 costs) at concurrency 128.
func benchDisagg(isl, osl, prompts int) Config {
	prefill := h20Like
	prefill.PerPrefillToken *= 2
	return Config{
		Prefill:    PoolConfig{Workers: 6, Cost: prefill, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Decode:     PoolConfig{Workers: 1, Cost: h20Like, KVCapacity: 1_000_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Transfer:   Transfer{Latency: 0.002, PerToken: 1e-7},
		Load:       model.Closed(128),
		Input:      Fixed(isl),
		Output:     Fixed(osl),
		NumPrompts: prompts,
		Seed:       1,
	}
}

// benchRun reports simulated requests per wall-clock second (simreq/s) and
// per second of this process's CPU time (simreq/cpu-s, user + system, all
// threads including the garbage collector): on a shared, loaded machine the
// wall-clock rate understates what one core does.
func benchRun(b *testing.B, cfg Config) {
	b.ReportAllocs()
	cpu0 := cpuSeconds()
	for b.Loop() {
		if _, err := Run(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(cfg.NumPrompts) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "simreq/s")
	b.ReportMetric(n/(cpuSeconds()-cpu0), "simreq/cpu-s")
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func BenchmarkDisagg3000x150(b *testing.B)  { benchRun(b, benchDisagg(3000, 150, 200_000)) }
func BenchmarkDisagg1000x1000(b *testing.B) { benchRun(b, benchDisagg(1000, 1000, 200_000)) }

// BenchmarkAggregated1000x1000 runs 4 replicas with chunked prefill at concurrency 128.
func BenchmarkAggregated1000x1000(b *testing.B) {
	benchRun(b, Config{Replicas: PoolConfig{Workers: 4, Cost: h20Like, KVCapacity: 500_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load: model.Closed(128), Input: Fixed(1000), Output: Fixed(1000), NumPrompts: 100_000, Seed: 1})
}

// BenchmarkAggregatedFrontend1000x1000 is BenchmarkAggregated1000x1000 on
// 64 replicas behind their own API servers (FrontendService): every
// request queues at the server of the replica the router picks.
func BenchmarkAggregatedFrontend1000x1000(b *testing.B) {
	benchRun(b, Config{Replicas: PoolConfig{Workers: 64, Cost: h20Like, KVCapacity: 500_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		FrontendLatency: 0.02, FrontendService: 0.01, FrontendServers: 64,
		Load: model.Closed(2048), Input: Fixed(1000), Output: Fixed(1000), NumPrompts: 100_000, Seed: 1})
}

// BenchmarkAggregatedDelayed1000x1000 is BenchmarkAggregated1000x1000 with
// vLLM V0's delayed output (a decode run is cut while completions wait).
func BenchmarkAggregatedDelayed1000x1000(b *testing.B) {
	benchRun(b, Config{Replicas: PoolConfig{Workers: 4, Cost: h20Like, KVCapacity: 500_000, DelayedOutput: true, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load: model.Closed(128), Input: Fixed(1000), Output: Fixed(1000), NumPrompts: 100_000, Seed: 1})
}

// BenchmarkAggregatedPrefillFirst1000x1000 is BenchmarkAggregated1000x1000
// with SGLang's prefill-first steps (every arrival pauses the decodes).
func BenchmarkAggregatedPrefillFirst1000x1000(b *testing.B) {
	benchRun(b, Config{Replicas: PoolConfig{Workers: 4, Cost: h20Like, KVCapacity: 500_000, PrefillFirst: true, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load: model.Closed(128), Input: Fixed(1000), Output: Fixed(1000), NumPrompts: 100_000, Seed: 1})
}

// BenchmarkBurstPrefillFirst is a 40,000-request burst on one SGLang-like
// replica running up to 4096 requests: the decodes pause for every prefill.
func BenchmarkBurstPrefillFirst(b *testing.B) {
	benchRun(b, Config{Replicas: PoolConfig{Workers: 1, Cost: h20Like, MaxNumSeqs: 4096, PrefillFirst: true, BlockSize: 1, MaxBatchedTokens: 8192},
		Load: model.Load{Kind: model.Burst}, Input: Fixed(200), Output: Fixed(200), NumPrompts: 40_000, Seed: 1})
}

// BenchmarkMemory10M simulates 10 million requests (lengths drawn, so
// nothing is constant) and reports the bytes allocated by the run and the
// memory the process obtained from the OS (sysbytes, an upper bound on the
// peak heap).
func BenchmarkMemory10M(b *testing.B) {
	cfg := benchDisagg(3000, 150, 10_000_000)
	cfg.Input = LengthDist{Kind: "uniform", Min: 2000, Max: 4000}
	cfg.Output = LengthDist{Kind: "uniform", Min: 100, Max: 200}
	cpu0 := cpuSeconds()
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Run(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc), "allocbytes/run")
		b.ReportMetric(float64(after.Sys), "sysbytes")
	}
	n := float64(cfg.NumPrompts) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "simreq/s")
	b.ReportMetric(n/(cpuSeconds()-cpu0), "simreq/cpu-s")
}

// BenchmarkAggregatedSharedPrefix1000x1000 is BenchmarkAggregated1000x1000
// with a shared-prefix workload served by each replica's prefix cache
// (inference-perf's shared_prefix: 16 groups × 32 prompts, 512 shared tokens).
func BenchmarkAggregatedSharedPrefix1000x1000(b *testing.B) {
	benchRun(b, Config{Replicas: PoolConfig{Workers: 4, Cost: h20Like, KVCapacity: 500_000, PrefixCaching: true, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Sharing: model.Sharing{Groups: 16, PromptsPerGroup: 32, SharedLen: 512},
		Load:    model.Closed(128), Input: Fixed(1000), Output: Fixed(1000), NumPrompts: 100_000, Seed: 1})
}
