package sim

import (
	"reflect"
	"testing"

	"github.com/capsim/capsim/model"
)

// sharedCfg is inference-perf's shared_prefix workload on workers
// replicas with prefix caching: G groups of an S-token system prompt, M
// questions each, prompts of isl tokens.
func sharedCfg(workers, kv int, load model.Load, sh model.Sharing, isl, n int) Config {
	c := testCost{Overhead: 0.002, PerPrefillToken: 1e-4, PerAttn: 1e-10, DecodeBase: 0.01, PerSeq: 1e-4, PerKV: 1e-8}
	return Config{Replicas: PoolConfig{Workers: workers, Cost: c, KVCapacity: kv, PrefixCaching: true, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load: load, Input: Fixed(isl), Output: Fixed(32), NumPrompts: n, Seed: 7, Sharing: sh}
}

// With every prompt cached (one replica, one request at a time, a cache
// larger than the run), the simulated hit rate is the analytic one: each
// group's first request hits nothing, a new question of a seen group its
// group's full blocks of system prompt, a repeated prompt its whole
// prompt's full blocks but the last token.
func TestSharedPrefixHitRateAnalytic(t *testing.T) {
	for _, tc := range []struct {
		sh  model.Sharing
		isl int
	}{
		{model.Sharing{Groups: 4, PromptsPerGroup: 8, SharedLen: 128}, 256},  // block-aligned
		{model.Sharing{Groups: 3, PromptsPerGroup: 5, SharedLen: 100}, 150},  // 100 = 6 full blocks + 4
		{model.Sharing{Groups: 5, PromptsPerGroup: 0, SharedLen: 512}, 1024}, // prefix_repetition: suffixes never repeat
		{model.Sharing{Groups: 2, PromptsPerGroup: 3, SharedLen: 160}, 160},  // the whole prompt is shared: its last token is computed
	} {
		const n = 400
		res := run(t, sharedCfg(1, 0, model.Closed(1), tc.sh, tc.isl, n))
		want := hitRate(tc.sh, tc.isl, 16, n, 1)
		if tc.sh.PromptsPerGroup == 0 {
			// Groups drawn at random: each group's first request misses;
			// all appear within 400 draws of 5.
			want = float64(n-tc.sh.Groups) * float64(tc.sh.SharedLen) / float64(n*tc.isl)
		}
		if want <= 0 || !near(res.PrefixHitRate, want, 1e-12) {
			t.Errorf("%+v isl %d: simulated hit rate %.6f, analytic %.6f", tc.sh, tc.isl, res.PrefixHitRate, want)
		}
	}
}

// A page size of 1 (SGLang's radix cache) is cached in units of 16
// tokens: the hit rate is the 16-token analytic one, prefill-first or not.
func TestSharedPrefixPageSizeOne(t *testing.T) {
	sh := model.Sharing{Groups: 3, PromptsPerGroup: 4, SharedLen: 200}
	for _, first := range []bool{false, true} {
		cfg := sharedCfg(1, 50_000, model.Closed(1), sh, 300, 200)
		cfg.Replicas.BlockSize, cfg.Replicas.PrefillFirst = 1, first
		res := run(t, cfg)
		if want := hitRate(sh, 300, 16, 200, 1); !near(res.PrefixHitRate, want, 1e-12) {
			t.Errorf("prefill-first %v: hit rate %v, want %v", first, res.PrefixHitRate, want)
		}
	}
}

// The analytic rate itself, by hand: 4 groups × 8 prompts of 256 tokens
// with a 128-token system prompt over 400 requests: 396 hit 128 tokens,
// 368 also the other 112 full-block tokens (255 capped to 240).
func TestSharingHitRateByHand(t *testing.T) {
	got := hitRate(model.Sharing{Groups: 4, PromptsPerGroup: 8, SharedLen: 128}, 256, 16, 400, 1)
	want := (396*128.0 + 368*112.0) / (400 * 256)
	if !near(got, want, 1e-15) {
		t.Errorf("HitRate = %v, want %v", got, want)
	}
}

// KV pressure evicts cached prefixes: a cache that holds a few prompts
// hits less than one that holds them all, and still every block comes
// back (run checks the ledger).
func TestSharedPrefixHitRateFallsUnderKVPressure(t *testing.T) {
	sh := model.Sharing{Groups: 16, PromptsPerGroup: 16, SharedLen: 512}
	var last float64 = 2
	for _, kv := range []int{4_000_000, 60_000, 20_000, 6_000} {
		res := run(t, sharedCfg(1, kv, model.Closed(4), sh, 1024, 1500))
		if !(res.PrefixHitRate < last) {
			t.Errorf("KV %d tokens: hit rate %.4f, not below %.4f with more cache", kv, res.PrefixHitRate, last)
		}
		last = res.PrefixHitRate
	}
}

// Round-robin and random routing spread a group over the replicas, each
// of which computes its prefix again; a prefix-aware router keeps it where
// it is cached.
func TestSharedPrefixRouting(t *testing.T) {
	sh := model.Sharing{Groups: 8, PromptsPerGroup: 32, SharedLen: 1024}
	rate := map[Routing]float64{}
	for _, r := range []Routing{RoundRobin, Random, PrefixAware} {
		cfg := sharedCfg(4, 40_000, model.Closed(16), sh, 1536, 1200)
		cfg.Router = r
		rate[r] = run(t, cfg).PrefixHitRate
	}
	if !(rate[PrefixAware] > rate[RoundRobin]+0.05 && rate[PrefixAware] > rate[Random]+0.05) {
		t.Errorf("hit rates %v: want prefix-aware clearly above round-robin and random", rate)
	}
}

// The same configuration gives the same bytes; without shared prompts a
// prefix cache changes nothing; a flat hit rate overrides the cache.
func TestPrefixCacheDeterministicAndInert(t *testing.T) {
	sh := model.Sharing{Groups: 6, PromptsPerGroup: 10, SharedLen: 300}
	cfg := sharedCfg(3, 30_000, model.Open(40, 1), sh, 700, 600)
	cfg.Router = PrefixAware
	a, b := run(t, cfg), run(t, cfg)
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs of one configuration differ")
	}
	if a.PrefixHitRate <= 0 {
		t.Errorf("hit rate %v with shared prompts", a.PrefixHitRate)
	}
	plain := cfg
	plain.Sharing, plain.Router = model.Sharing{}, RoundRobin
	off := plain
	off.Replicas.PrefixCaching = false
	if x, y := run(t, plain), run(t, off); !reflect.DeepEqual(x, y) || x.PrefixHitRate != 0 {
		t.Errorf("without shared prompts the cache changed the run (hit rate %v)", x.PrefixHitRate)
	}
	flat := cfg
	flat.PrefixHitRate = 0.25
	if got := run(t, flat).PrefixHitRate; !near(got, 0.25, 1e-3) {
		t.Errorf("flat rate 0.25 with shared prompts: hit rate %v", got)
	}
	noCache := cfg
	noCache.Replicas.PrefixCaching = false
	if got := run(t, noCache).PrefixHitRate; got != 0 {
		t.Errorf("caching off: hit rate %v", got)
	}
}

func TestSharingValidate(t *testing.T) {
	for _, sh := range []model.Sharing{{Groups: -1}, {PromptsPerGroup: 2}, {Groups: 2, SharedLen: -1}, {Groups: 1 << 20, PromptsPerGroup: 1 << 10}} {
		cfg := sharedCfg(1, 0, model.Closed(1), sh, 100, 10)
		if _, err := Run(t.Context(), cfg); err == nil {
			t.Errorf("Sharing %+v: no error", sh)
		}
	}
}

// Multi-turn conversations: each turn's prompt holds the system prompt,
// the turns before it and a new question, and hits the previous turn's
// cached blocks: all of its prompt and of its answer but the last token's
// block. One conversation of 4 turns (64-token system prompt, 64-token
// questions, 32-token answers), then a new one, which hits the system
// prompt only at its first turn.
func TestMultiTurnHitRate(t *testing.T) {
	sh := model.Sharing{Groups: 1, PromptsPerGroup: 1, SharedLen: 64, Turns: 4}
	cfg := sharedCfg(1, 0, model.Closed(1), sh, 128, 8)
	cfg.KeepRequests = true
	res := run(t, cfg)
	wantIn := []int{128, 224, 320, 416, 128, 224, 320, 416}
	for i, r := range res.Requests {
		if r.InputTokens != wantIn[i] {
			t.Errorf("request %d: prompt %d tokens, want %d", i, r.InputTokens, wantIn[i])
		}
	}
	// Hits: 0, 144, 240, 336 (the previous turn's KV, prompt + 31 answer
	// tokens, in full blocks), then 64 (the system prompt), 144, 240, 336.
	want := float64(0+144+240+336+64+144+240+336) / float64(2*(128+224+320+416))
	if !near(res.PrefixHitRate, want, 1e-12) {
		t.Errorf("hit rate %v, want %v", res.PrefixHitRate, want)
	}
	many := sharedCfg(2, 200_000, model.Open(20, 1), model.Sharing{Groups: 3, PromptsPerGroup: 5, SharedLen: 200, Turns: 6}, 400, 500)
	if a, b := run(t, many), run(t, many); !reflect.DeepEqual(a, b) || a.PrefixHitRate < 0.5 {
		t.Errorf("multi-turn runs differ, or hit only %v", a.PrefixHitRate)
	}
	// Without a cache the turns still grow (and hit nothing).
	off := cfg
	off.Replicas.PrefixCaching = false
	res = run(t, off)
	for i, r := range res.Requests {
		if r.InputTokens != wantIn[i] || res.PrefixHitRate != 0 {
			t.Errorf("caching off: request %d: prompt %d tokens, want %d; hit rate %v", i, r.InputTokens, wantIn[i], res.PrefixHitRate)
		}
	}
	// A conversation longer than the KV cache holds is refused as it grows.
	long := sharedCfg(1, 4096, model.Closed(1), model.Sharing{Groups: 1, PromptsPerGroup: 1, SharedLen: 64, Turns: 100}, 1024, 200)
	if _, err := Run(t.Context(), long); err == nil {
		t.Error("a 100-turn conversation of 1,000-token turns fits a 4,096-token cache")
	}
}

// disaggCfg is sharedCfg on a disaggregated deployment: prefill workers
// with prefix caches (capacity kv tokens each) and one decode worker.
func disaggCfg(prefill, kv int, router Routing, load model.Load, sh model.Sharing, isl, n int) Config {
	c := sharedCfg(1, 0, load, sh, isl, n)
	c.Prefill = PoolConfig{Workers: prefill, Cost: c.Replicas.Cost, KVCapacity: kv, PrefixCaching: true, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192}
	c.Decode = PoolConfig{Workers: 1, Cost: c.Replicas.Cost, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192}
	c.Replicas = PoolConfig{}
	c.PrefillRouter = router
	c.Transfer = Transfer{Latency: 0.001, PerToken: 1e-7}
	return c
}

// A disaggregated deployment's prefill workers keep prefix caches: one
// worker holding every prompt hits the analytic rate; a cache too small
// for the workload hits less; spreading prompts over workers by round robin
// hits less than routing them where their prefix is cached; and without
// PrefixCaching nothing hits.
func TestDisaggregatedPrefillPrefixCache(t *testing.T) {
	sh := model.Sharing{Groups: 4, PromptsPerGroup: 8, SharedLen: 128}
	const n = 400
	res := run(t, disaggCfg(1, 0, SharedQueue, model.Closed(1), sh, 256, n))
	if want := hitRate(sh, 256, 16, n, 1); want <= 0 || !near(res.PrefixHitRate, want, 1e-12) {
		t.Errorf("one prefill worker: simulated hit rate %.6f, analytic %.6f", res.PrefixHitRate, want)
	}
	off := disaggCfg(1, 0, SharedQueue, model.Closed(1), sh, 256, n)
	off.Prefill.PrefixCaching = false
	if r := run(t, off); r.PrefixHitRate != 0 || r.Metrics[model.MeanTTFT] <= res.Metrics[model.MeanTTFT] {
		t.Errorf("without prefix caching: hit rate %v, mean TTFT %v ms against %v with it; want 0 and slower", r.PrefixHitRate, r.Metrics[model.MeanTTFT], res.Metrics[model.MeanTTFT])
	}

	big := model.Sharing{Groups: 16, PromptsPerGroup: 16, SharedLen: 512}
	full := run(t, disaggCfg(1, 0, SharedQueue, model.Closed(4), big, 1024, 1500)).PrefixHitRate
	small := run(t, disaggCfg(1, 20_000, SharedQueue, model.Closed(4), big, 1024, 1500)).PrefixHitRate
	if !(small < full-0.05) {
		t.Errorf("a 20,000-token prefill cache hits %.3f, not clearly below %.3f unbounded", small, full)
	}

	wide := model.Sharing{Groups: 8, PromptsPerGroup: 32, SharedLen: 1024}
	rate := map[Routing]float64{}
	for _, r := range []Routing{RoundRobin, PrefixAware} {
		rate[r] = run(t, disaggCfg(4, 40_000, r, model.Closed(16), wide, 1536, 1200)).PrefixHitRate
	}
	if !(rate[PrefixAware] > rate[RoundRobin]+0.05) {
		t.Errorf("prefill hit rates %v: want prefix-aware clearly above round-robin", rate)
	}
}
