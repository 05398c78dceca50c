package sim

import (
	"context"
	"testing"

	"github.com/capsim/capsim/model"
)

// A prefix-cache hit of h skips the prefill of the first ⌊h·P⌋ prompt
// tokens, chunk by chunk as the budget allows, while the rest attends to
// them; the KV the request holds is the whole prompt's either way.
func TestPrefixHitRateLoneLongPrompt(t *testing.T) {
	const P, O, budget = 10000, 3, 4096
	c := testCost{Overhead: 0.002, PerPrefillToken: 1e-4, PerAttn: 1e-9, DecodeBase: 0.01, PerSeq: 1e-4, PerKV: 1e-8}
	chunks := func(from int) float64 {
		d := 0.0
		for done := from; done < P; done += budget {
			n := min(budget, P-done)
			d += c.StepTime(model.Step{PrefillTokens: n, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(done, n)})
		}
		return d
	}
	cases := []struct {
		name string
		hit  float64
		agg  bool
		want float64 // TTFT in seconds
	}{
		{"no hit, aggregated", 0, true, chunks(0)},
		{"half hit, aggregated", 0.5, true, chunks(5000)},                      // 4096 + 904 tokens after 5000 cached
		{"tiny hit rounds down", 0.00005, true, chunks(0)},                     // ⌊0.5⌋ = 0 tokens
		{"almost all cached", 0.99999, true, chunks(P - 1)},                    // the last token is always computed
		{"half hit, disaggregated", 0.5, false, chunks(5000) + 0.001 + 2e-7*P}, // + transfer, first decode below
	}
	var kv0 float64
	ttft := map[string]float64{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Load: model.Closed(1), Input: Fixed(P), Output: Fixed(O), NumPrompts: 1, KeepRequests: true, PrefixHitRate: tc.hit}
			want := tc.want
			if tc.agg {
				cfg.Replicas = PoolConfig{Workers: 1, Cost: c, MaxBatchedTokens: budget, KVCapacity: 1 << 20, BlockSize: 16, MaxNumSeqs: 256}
			} else {
				cfg.Prefill = PoolConfig{Workers: 1, Cost: c, MaxBatchedTokens: budget, BlockSize: 16, MaxNumSeqs: 256}
				cfg.Decode = PoolConfig{Workers: 1, Cost: c, KVCapacity: 1 << 20, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192}
				cfg.Transfer = Transfer{Latency: 0.001, PerToken: 2e-7}
				base, perKV := c.DecodeAffine(1)
				want += base + perKV*(P+1)
			}
			res := run(t, cfg)
			ttft[tc.name] = res.Requests[0].FirstToken
			if got := res.Requests[0].FirstToken; !near(got, want, 1e-12) {
				t.Errorf("TTFT %.17g s, want %.17g", got, want)
			}
			// KV usage: the whole prompt and the output, hit or not.
			kv := res.Pools[len(res.Pools)-1].MaxKVUsage
			if tc.agg && tc.hit == 0 {
				kv0 = kv
			}
			if tc.agg && kv0 > 0 && kv != kv0 {
				t.Errorf("max KV usage %v, want %v as without a hit", kv, kv0)
			}
		})
	}
	// A 50% hit roughly halves the simulated TTFT of a lone long prompt
	// (aggregated: the TTFT is its prefill).
	if r := ttft["half hit, aggregated"] / ttft["no hit, aggregated"]; !(r > 0.4 && r < 0.6) {
		t.Errorf("half hit: simulated TTFT ratio %v, want about 0.5", r)
	}
}

// CachedPrefix is ⌊h·prompt⌋ exactly, even where h·prompt falls just short
// of a whole number in floating point, and at most prompt−1.
func TestCachedPrefix(t *testing.T) {
	for _, tt := range []struct {
		h      float64
		prompt int
		want   int
	}{
		{0, 100, 0},
		{0.29, 100, 29}, // 0.29·100 = 28.999999999999996
		{0.57, 100, 57}, // 56.99999999999999
		{0.07, 100, 7},  // 7.000000000000001
		{0.1, 30, 3},    // 3.0000000000000004
		{0.3, 10, 3},
		{0.999, 10, 9},
		{0.25, 3, 0},
		{0.5, 2, 1},
		{0.99, 1000, 990},
		{0.9999, 100, 99}, // capped at prompt−1
		{0.5, 1, 0},
		{0.5, 0, 0},
	} {
		if got := CachedPrefix(tt.h, tt.prompt); got != tt.want {
			t.Errorf("CachedPrefix(%v, %d) = %d, want %d", tt.h, tt.prompt, got, tt.want)
		}
	}
}

// A disaggregated decode worker whose cache is too small for its batch
// preempts; the preempted request recomputes locally, hitting its cached
// prefix again, and still finishes; every KV block taken is given back.
func TestPrefixHitDisaggregatedDecodePreempts(t *testing.T) {
	c := testCost{Overhead: 0.002, PerPrefillToken: 1e-4, PerAttn: 1e-10, DecodeBase: 0.01, PerSeq: 1e-4, PerKV: 1e-8}
	cfg := Config{Prefill: PoolConfig{Workers: 2, Cost: c, MaxBatchedTokens: 4096, BlockSize: 16, MaxNumSeqs: 256}, Decode: PoolConfig{Workers: 1, Cost: c, KVCapacity: 40_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Transfer: Transfer{Latency: 0.001, PerToken: 1e-7}, Load: model.Closed(16), Input: Fixed(3000), Output: Fixed(1500),
		NumPrompts: 48, PrefixHitRate: 0.6, Seed: 5, KeepRequests: true}
	res := run(t, cfg) // every request completes (checkInvariants)
	dec := res.Pools[len(res.Pools)-1]
	if dec.Name != "decode" || dec.Preemptions == 0 {
		t.Fatalf("pool %s: %d preemptions; the test no longer covers a decode worker preempting", dec.Name, dec.Preemptions)
	}
	n := 0
	for _, r := range res.Requests {
		n += r.Preemptions
	}
	if n != dec.Preemptions {
		t.Errorf("requests record %d preemptions, the decode pool %d", n, dec.Preemptions)
	}
	// The same run, inspected inside: no block still held at the end.
	s, err := newSimulator(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	for _, e := range s.engines {
		if e.used != 0 || len(e.heap) != 0 || len(e.prefilling) != 0 || e.waiting.len() != 0 {
			t.Errorf("decode worker %d after the run: %d blocks used, %d decoding, %d prefilling, %d waiting", e.idx, e.used, len(e.heap), len(e.prefilling), e.waiting.len())
		}
	}
	for _, w := range s.prefill.workers {
		if w.held != 0 {
			t.Errorf("prefill worker %d holds %d prompt tokens after the run", w.idx, w.held)
		}
	}
	if s.enginePool.used != 0 {
		t.Errorf("decode pool: %d blocks used after the run", s.enginePool.used)
	}
}

// Under load, a hit rate raises throughput and lowers TTFT; KV usage
// does not fall (every request still holds its whole prompt).
func TestPrefixHitRateUnderLoad(t *testing.T) {
	c := testCost{Overhead: 0.002, PerPrefillToken: 1e-4, PerAttn: 1e-10, DecodeBase: 0.01, PerSeq: 1e-4, PerKV: 1e-8}
	cfg := func(h float64) Config {
		return Config{Replicas: PoolConfig{Workers: 1, Cost: c, KVCapacity: 200_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192}, Load: model.Closed(32),
			Input: Fixed(4000), Output: Fixed(64), NumPrompts: 256, PrefixHitRate: h, Seed: 3}
	}
	base, hit := run(t, cfg(0)), run(t, cfg(0.6))
	if !(hit.Metrics[model.RequestThroughput] > 1.2*base.Metrics[model.RequestThroughput]) {
		t.Errorf("req/s %v with a 60%% hit, %v without: want clearly more", hit.Metrics[model.RequestThroughput], base.Metrics[model.RequestThroughput])
	}
	if !(hit.Metrics[model.MeanTTFT] < base.Metrics[model.MeanTTFT]) {
		t.Errorf("mean TTFT %v ms with a hit, %v without", hit.Metrics[model.MeanTTFT], base.Metrics[model.MeanTTFT])
	}
	if hit.Pools[0].MaxKVUsage < 0.9*base.Pools[0].MaxKVUsage {
		t.Errorf("max KV usage %v with a hit, %v without: the cached prefix still holds blocks", hit.Pools[0].MaxKVUsage, base.Pools[0].MaxKVUsage)
	}
	// A cache too small for the batch preempts; recomputing requests hit
	// their prefix again, and every request still finishes (run checks).
	tight := cfg(0.6)
	tight.Replicas.KVCapacity, tight.Output, tight.NumPrompts = 60_000, Fixed(2000), 64
	if res := run(t, tight); res.Pools[0].Preemptions == 0 {
		t.Errorf("no preemption with a %d-token cache; the test no longer covers recomputation", tight.Replicas.KVCapacity)
	}
}
