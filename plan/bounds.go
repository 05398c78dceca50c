package plan

import (
	"math"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// budgetOf and maxSeqsOf are the step token budget and sequence cap the
// simulator will use for a pool, so the bounds price the same batches.
func budgetOf(p sim.PoolConfig) int { return p.MaxBatchedTokens }

func maxSeqsOf(p sim.PoolConfig) int { return p.MaxNumSeqs }

// poolBounds are per-worker limits of one pool shape, computed from its
// step costs alone: optimistic capacities (no queueing, perfect batching).
// The latencies no request can beat are latencyFloor's, of oneRequest.
type poolBounds struct {
	// prefillRate is prompts per second one worker can compute at best.
	prefillRate float64
	// decodeRate is requests per second one worker can decode at best.
	decodeRate float64
	// aggRate is requests per second one aggregated replica can serve at best.
	aggRate float64
}

// prefillTime is the time to compute one prompt of isl tokens alone, the
// first cached of them served by the prefix cache, chunked by the step
// token budget as the engine does.
func prefillTime(c sim.CostModel, budget, isl, cached int) float64 {
	t := 0.0
	for done := cached; done < isl; {
		n := min(budget, isl-done)
		t += c.StepTime(model.Step{PrefillTokens: n, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(done, n)})
		done += n
	}
	return t
}

// bestPrefillRate is the most prompts per second one worker computes:
// one prompt alone, or as many whole prompts (their isl−cached computed
// tokens) as fit in one step's budget.
func bestPrefillRate(c sim.CostModel, budget, maxSeqs, isl, cached int) float64 {
	best := 1 / prefillTime(c, budget, isl, cached)
	n := isl - cached
	for k := 2; k*n <= budget && k <= maxSeqs; k++ {
		t := c.StepTime(model.Step{PrefillTokens: k * n, PrefillSeqs: k, PrefillAttn: float64(k) * model.ChunkAttn(cached, n)})
		best = math.Max(best, float64(k)/t)
	}
	return best
}

// maxBatch is the most sequences one worker can hold at once: its sequence
// cap, and its KV cache at the mean context a request occupies over its
// life, with its sliding-window layers' blocks (sim.PoolConfig.WindowTokens).
func maxBatch(p sim.PoolConfig, isl, osl int) int {
	n := maxSeqsOf(p)
	if p.KVCapacity > 0 {
		n = min(n, int(float64(p.KVCapacity)/(float64(isl)+float64(osl)/2+float64(min(isl+osl, p.WindowTokens)))))
	}
	return max(n, 1)
}

// bestDecodeRate is the most requests per second one worker decodes:
// n sequences per step, each needing osl steps, at the best n.
func bestDecodeRate(p sim.PoolConfig, isl, osl int) float64 {
	ctx := float64(isl) + float64(osl)/2
	best := 0.0
	for n := 1; n <= maxBatch(p, isl, osl); n++ {
		base, perKV := p.Cost.DecodeAffine(n)
		step := base + perKV*float64(n)*ctx
		best = math.Max(best, float64(n)/(float64(osl)*step))
	}
	return best
}

// bestAggregatedRate is the most requests per second one replica serves
// with chunked prefill: each request's marginal prefill work (the fixed
// per-step cost shared with the decodes riding along) plus its share of
// decode steps at the best batch.
func bestAggregatedRate(p sim.PoolConfig, isl, osl, cached int) float64 {
	c := p.Cost
	budget := budgetOf(p)
	fixed := c.StepTime(model.Step{})
	prefill := math.Inf(1)
	n := isl - cached // tokens computed per prompt
	if n > budget {
		prefill = prefillTime(c, budget, isl, cached) - float64((n+budget-1)/budget)*fixed
	}
	for k := 1; k*n <= budget && k <= maxSeqsOf(p); k++ {
		t := c.StepTime(model.Step{PrefillTokens: k * n, PrefillSeqs: k, PrefillAttn: float64(k) * model.ChunkAttn(cached, n)})
		prefill = math.Min(prefill, (t-fixed)/float64(k))
	}
	prefill = math.Max(prefill, 0)
	ctx := float64(isl) + float64(osl)/2
	best := 0.0
	for n := 1; n <= maxBatch(p, isl, osl); n++ {
		base, perKV := c.DecodeAffine(n)
		step := base + perKV*float64(n)*ctx
		best = math.Max(best, 1/(prefill+float64(osl)*step/float64(n)))
	}
	return best
}

// boundsOf prices one worker of a pool for the workload, the first cached
// tokens of every prompt served by the prefix cache; role is "prefill",
// "decode" or "aggregated".
func boundsOf(p sim.PoolConfig, role string, isl, osl, cached int) poolBounds {
	var b poolBounds
	budget := budgetOf(p)
	switch role {
	case "prefill":
		b.prefillRate = bestPrefillRate(p.Cost, budget, maxSeqsOf(p), isl, cached)
	case "decode":
		b.decodeRate = bestDecodeRate(p, isl, osl)
	default:
		b.aggRate = bestAggregatedRate(p, isl, osl, cached)
	}
	return b
}

// oneRequest is how long a lone isl-token prompt (cached tokens of it
// from the prefix cache) takes to prefill on a worker of p, and one decode
// step at its context.
func oneRequest(p sim.PoolConfig, isl, cached int) (prefill, decode float64) {
	base, perKV := p.Cost.DecodeAffine(1)
	return prefillTime(p.Cost, budgetOf(p), isl, cached), base + perKV*float64(isl)
}

// latencyFloor is, per latency family, a value in ms no request of the
// deployment can beat: every statistic of the family is at least this.
// osl is the shortest output any request draws, longestOSL the longest.
// firstOnDecode is the part of TTFT after the prefill: the KV transfer
// and, disaggregated, the decode step that emits the first token.
func latencyFloor(prefillOne, firstOnDecode, decodeOne float64, osl, longestOSL int) map[string]float64 {
	ttft := prefillOne + firstOnDecode
	gap := decodeOne
	if longestOSL <= 1 {
		// One output token at most: no gaps between tokens, TPOT and ITL
		// are 0 (TPOT counts only requests of more than one token).
		gap = 0
	}
	return map[string]float64{
		"ttft": 1000 * ttft,
		"tpot": 1000 * gap,
		"itl":  1000 * gap,
		"e2el": 1000 * (ttft + float64(max(osl, 1)-1)*decodeOne),
	}
}
