package sim

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

// NoITL drops the ITL metrics and NoSeries the pools' series, and they
// change nothing else, in replay and in steady state, aggregated (chunked
// prefill, delayed output, prefill-first steps) and disaggregated.
func TestNoITLNoSeriesChangeNothingElse(t *testing.T) {
	agg := Config{Replicas: PoolConfig{Workers: 2, Cost: h20Like, KVCapacity: 60_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load: model.Closed(48), Input: Fixed(1500), Output: LengthDist{Kind: "uniform", Min: 100, Max: 300}, NumPrompts: 400, Seed: 1}
	delayed := agg
	delayed.Replicas.DelayedOutput = true
	pfirst := agg
	pfirst.Replicas.PrefillFirst = true
	pfirstDelayed := delayed
	pfirstDelayed.Replicas.PrefillFirst = true
	dis := benchDisagg(2000, 200, 300)
	dis.Load = model.Open(8, 0.5)
	for name, c := range map[string]Config{"aggregated": agg, "delayed output": delayed, "prefill first": pfirst, "prefill first, delayed output": pfirstDelayed, "disaggregated": dis} {
		for _, mode := range []Mode{BenchmarkReplay, SteadyState} {
			c.Mode = mode
			full, err := Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			c.NoITL, c.NoSeries = true, true
			lean, err := Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			c.NoITL, c.NoSeries = false, false
			if full.Metrics[model.MeanITL] <= 0 {
				t.Fatalf("%s %s: no ITL in the full run: %v", name, mode, full.Metrics)
			}
			for k, v := range full.Metrics {
				got, ok := lean.Metrics[k]
				if strings.HasSuffix(k, "_itl_ms") {
					if ok {
						t.Errorf("%s %s: %s = %v with NoITL", name, mode, k, got)
					}
					continue
				}
				if !ok || got != v {
					t.Errorf("%s %s: %s = %v with NoITL, %v without", name, mode, k, got, v)
				}
			}
			if len(full.Pools) != len(lean.Pools) {
				t.Fatalf("%s %s: %d pools with NoSeries, %d without", name, mode, len(lean.Pools), len(full.Pools))
			}
			for i, p := range full.Pools {
				if len(p.Series) == 0 {
					t.Errorf("%s %s: pool %s has no series in the full run", name, mode, p.Name)
				}
				q := lean.Pools[i]
				if len(q.Series) != 0 {
					t.Errorf("%s %s: pool %s has %d samples with NoSeries", name, mode, q.Name, len(q.Series))
				}
				q.Series = p.Series
				if !reflect.DeepEqual(p, q) {
					t.Errorf("%s %s: pool stats %+v with NoSeries, %+v without", name, mode, q, p)
				}
			}
		}
	}
}

// affineCounter counts DecodeAffine calls by batch size.
type affineCounter struct {
	testCost
	calls map[int]int
}

func (c *affineCounter) DecodeAffine(n int) (float64, float64) {
	c.calls[n]++
	return c.testCost.DecodeAffine(n)
}

// A run prices a decode batch size once for all its engines.
func TestDecodeAffinePricedOncePerRun(t *testing.T) {
	cost := &affineCounter{testCost: h20Like, calls: map[int]int{}}
	c := Config{Replicas: PoolConfig{Workers: 4, Cost: cost, KVCapacity: 200_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load: model.Closed(32), Input: Fixed(500), Output: LengthDist{Kind: "uniform", Min: 50, Max: 150}, NumPrompts: 200, Seed: 1}
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if len(cost.calls) == 0 {
		t.Fatal("no decode run was priced")
	}
	for n, k := range cost.calls {
		if k > 1 {
			t.Errorf("batch size %d priced %d times in one run", n, k)
		}
	}
}

// A run's allocations do not grow with its requests: requests come in
// blocks and the latency samples have their room up front.
func TestRunAllocationsFlatInRequests(t *testing.T) {
	allocs := func(n int) float64 {
		c := Config{Replicas: PoolConfig{Workers: 2, Cost: h20Like, KVCapacity: 1_000_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
			Load: model.Open(400, 0), Input: Fixed(200), Output: Fixed(20), NumPrompts: n, Seed: 1, NoITL: true, NoSeries: true}
		return testing.AllocsPerRun(2, func() {
			if _, err := Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(500), allocs(4000)
	t.Logf("allocations: %v for 500 requests, %v for 4000", small, large)
	if large-small > 200 {
		t.Errorf("allocations %v for 500 requests, %v for 4000: they grow with the requests", small, large)
	}
}

// Percentiles computes the percentiles it names, to the bit, and no
// other; every other metric is the same.
func TestPercentilesOnlyThoseNamed(t *testing.T) {
	c := Config{Replicas: PoolConfig{Workers: 2, Cost: h20Like, KVCapacity: 60_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load: model.Closed(48), Input: Fixed(1500), Output: LengthDist{Kind: "uniform", Min: 100, Max: 300}, NumPrompts: 400, Seed: 1}
	full, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.Percentiles = []string{model.P99TTFT, model.MedianTPOT, model.MeanE2EL}
	lean, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	isPercentile := func(k string) bool {
		for _, p := range []string{"median_", "p90_", "p95_", "p99_"} {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
		return false
	}
	for k, v := range full.Metrics {
		got, ok := lean.Metrics[k]
		if isPercentile(k) && k != model.P99TTFT && k != model.MedianTPOT {
			if ok {
				t.Errorf("%s = %v, not named in Percentiles", k, got)
			}
			continue
		}
		if !ok || got != v {
			t.Errorf("%s = %v with Percentiles, %v without", k, got, v)
		}
	}
	c.Percentiles = []string{}
	none, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for k := range none.Metrics {
		if isPercentile(k) {
			t.Errorf("%s computed with an empty Percentiles", k)
		}
	}
}
