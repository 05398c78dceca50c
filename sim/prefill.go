package sim

import (
	"fmt"

	"github.com/capsim/capsim/model"
)

// prefillPool is the disaggregated prefill pool: workers that only compute
// prompts, fed by one shared queue (Dynamo's) or by per-worker queues.
type prefillPool struct {
	s         *simulator
	mon       *poolMon
	cost      CostModel
	maxSeqs   int
	maxTokens int
	capTokens int // 0: unlimited
	routing   Routing
	block     int // KV block size, for the prefix caches
	rr        int
	shared    reqQueue
	workers   []*prefillWorker
}

type prefillWorker struct {
	p           *prefillPool
	idx         int
	queue       reqQueue // own queue unless the pool shares one
	busy        bool
	batch       []*request
	partial     *request // a prompt longer than the budget, continued next step
	held        int      // prompt tokens of the requests in progress
	outstanding int
	t0          float64
	// pc is the worker's prefix cache (PoolConfig.PrefixCaching with
	// shared prompts); nil without one.
	pc *prefixCache
}

func newPrefillPool(s *simulator, p PoolConfig) *prefillPool {
	pp := &prefillPool{s: s, mon: &poolMon{name: "prefill", workers: p.Workers}, cost: p.Cost,
		maxSeqs: p.MaxNumSeqs, maxTokens: p.MaxBatchedTokens, capTokens: p.KVCapacity, routing: s.cfg.PrefillRouter, block: p.BlockSize}
	for i := 0; i < p.Workers; i++ {
		pp.workers = append(pp.workers, &prefillWorker{p: pp, idx: i})
	}
	pp.mon.running = func() int {
		n := 0
		for _, w := range pp.workers {
			if w.busy {
				n += len(w.batch)
			}
		}
		return n
	}
	return pp
}

// submit queues r's prompt at t, after its decode worker reserved its KV blocks.
func (p *prefillPool) submit(t float64, r *request) {
	r.ptoks = r.cached
	p.mon.queueAdd(t, 1)
	if p.routing == SharedQueue {
		p.shared.pushBack(r)
		for _, w := range p.workers {
			if !w.busy {
				w.start(t)
				break
			}
		}
		return
	}
	var w *prefillWorker
	switch p.routing {
	case PrefixAware:
		w = p.routePrefix(r)
	case LeastOutstanding:
		w = p.workers[0]
		for _, x := range p.workers[1:] {
			if x.outstanding < w.outstanding {
				w = x
			}
		}
	default:
		w = p.workers[p.rr]
		p.rr = (p.rr + 1) % len(p.workers)
	}
	w.outstanding++
	w.queue.pushBack(r)
	if !w.busy {
		w.start(t)
	}
}

// start begins the worker's next step at t: the unfinished long prompt
// first, then queued prompts in order while the token budget, the
// sequence cap and the KV cache allow; the last may be a partial chunk.
func (w *prefillWorker) start(t float64) {
	p := w.p
	q := &w.queue
	if p.routing == SharedQueue {
		q = &p.shared
	}
	budget := p.maxTokens
	w.batch = w.batch[:0]
	toks := 0
	attn := 0.0
	if r := w.partial; r != nil {
		c := min(r.prompt-r.ptoks, budget)
		r.chunk = c
		attn += model.ChunkAttn(r.ptoks, c)
		budget -= c
		toks += c
		w.batch = append(w.batch, r)
	}
	for budget > 0 && len(w.batch) < p.maxSeqs && q.len() > 0 {
		r := q.peek()
		if p.capTokens > 0 && w.held+r.prompt > p.capTokens {
			break
		}
		q.pop()
		p.mon.queueAdd(t, -1)
		w.held += r.prompt
		w.takeCached(r)
		w.trimCache()
		c := min(r.prompt-r.ptoks, budget) // ptoks: the prefix-cache hit
		if c < r.prompt-r.ptoks {
			w.partial = r
		}
		r.chunk = c
		attn += model.ChunkAttn(r.ptoks, c)
		budget -= c
		toks += c
		w.batch = append(w.batch, r)
	}
	if len(w.batch) == 0 {
		w.busy = false
		return
	}
	st := model.Step{PrefillTokens: toks, PrefillSeqs: len(w.batch), PrefillAttn: attn}
	d := p.cost.StepTime(st)
	if !finiteNonNeg(d) {
		p.s.fail(fmt.Errorf("sim: Config.Prefill.Cost returned step time %v for %+v; want a finite non-negative number of seconds", d, st))
		return
	}
	w.busy = true
	w.t0 = t
	p.s.push(t+d, evPrefill, w.idx)
}

func (w *prefillWorker) onStepEnd(t float64) {
	p := w.p
	span := t - w.t0
	p.mon.busy += span
	p.mon.batchArea += float64(len(w.batch)) * span
	tr := &p.s.cfg.Transfer
	for _, r := range w.batch {
		r.ptoks += r.chunk
		r.chunk = 0
		if w.pc != nil && r.px != nil {
			// Computed blocks are shared at once, as the engines' are.
			w.pc.register(r, r.ptoks)
		}
		if r.ptoks < r.prompt {
			continue
		}
		if w.partial == r {
			w.partial = nil
		}
		w.held -= r.prompt
		w.outstanding--
		w.cache(r)
		// The whole prompt's KV moves, cached prefix included: an upper
		// bound with a prefix cache (see Config.PrefixHitRate).
		r.eng.expect(t+(tr.Latency+tr.PerToken*float64(r.prompt)), r)
	}
	w.start(t)
}

// routePrefix picks the worker whose prefix cache holds the longest prefix
// of r, ties to the fewest outstanding prompts (Dynamo's KV-aware router).
func (p *prefillPool) routePrefix(r *request) *prefillWorker {
	best, bestHit := p.workers[0], -1
	for _, w := range p.workers {
		h := 0
		if w.pc != nil && r.px != nil {
			h, _ = w.pc.hits(r, r.prompt)
		}
		if h > bestHit || (h == bestHit && w.outstanding < best.outstanding) {
			best, bestHit = w, h
		}
	}
	return best
}

// takeCached starts r's prompt after the longest prefix the worker's cache
// holds, in whole blocks (at least the hit rate's share, Config.PrefixHitRate).
func (w *prefillWorker) takeCached(r *request) {
	if w.pc == nil || r.px == nil {
		return
	}
	n, _ := w.pc.hits(r, r.prompt)
	if n == 0 {
		return
	}
	w.pc.acquire(r, n)
	if tok := n * w.p.block; tok > r.ptoks {
		r.ptoks = tok
		r.hit = tok
	}
}

// cache leaves r's computed prompt in the worker's prefix cache, idle, and
// evicts what the space its running prompts hold leaves no room for.
func (w *prefillWorker) cache(r *request) {
	if w.pc == nil || r.px == nil {
		return
	}
	w.pc.finish(r, r.prompt)
	w.trimCache()
}

// trimCache evicts the idle cached blocks the space the worker's running
// prompts leave no longer holds, as an engine does when it allocates.
func (w *prefillWorker) trimCache() {
	if w.pc == nil {
		return
	}
	free := int64(maxIdleUnbounded)
	if w.p.capTokens > 0 {
		free = int64(max(w.p.capTokens-w.held, 0) / w.p.block)
	}
	w.pc.trim(free)
}
