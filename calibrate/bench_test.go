package calibrate

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/results"
)

// cpuSeconds is this process's user + system CPU time: on a shared
// machine the benchmarks report it (cpu-s/op) beside wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// reportCPU reports the CPU seconds per op since cpu0.
func reportCPU(b *testing.B, cpu0 float64) {
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

func fixtureRecords(b *testing.B, source string) []results.Record {
	recs, err := fixtures.Records()
	if err != nil {
		b.Fatal(err)
	}
	var out []results.Record
	for _, r := range recs {
		if strings.Contains(r.Source.File, source) {
			out = append(out, r)
		}
	}
	return out
}

// BenchmarkFitDefault is the whole default fit as `capsim fit` runs it:
// every seed record, both stages, then the public corpus as the transfer
// pool. Run with -benchtime=1x.
func BenchmarkFitDefault(b *testing.B) {
	recs, pool, err := fixtures.ProfileRecords(false)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, _, err := Fit(context.Background(), recs, Options{Pool: pool}, nil); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
	b.ReportMetric(float64(len(recs)+len(pool)), "records")
}

// BenchmarkFitSeeds fits the seed records only (no transfer pool).
func BenchmarkFitSeeds(b *testing.B) {
	recs := fixtureRecords(b, "")
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, _, err := Fit(context.Background(), recs, Options{}, nil); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
	b.ReportMetric(float64(len(recs)), "records")
}

// BenchmarkFitH20 fits the seed-004 groups (Dynamo and two vLLM versions on H20).
func BenchmarkFitH20(b *testing.B) {
	recs := fixtureRecords(b, "004_")
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, _, err := Fit(context.Background(), recs, Options{}, nil); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

// BenchmarkFitCV is `capsim fit --cv`: seeds and corpus fitted together,
// every within-group and cross-group fold. Run with -benchtime=1x.
func BenchmarkFitCV(b *testing.B) {
	recs, _, err := fixtures.ProfileRecords(true)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, _, err := Fit(context.Background(), recs, Options{CV: true}, nil); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
	b.ReportMetric(float64(len(recs)), "records")
}
