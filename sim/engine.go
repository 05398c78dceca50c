package sim

import (
	"fmt"
	"math/bits"

	"github.com/capsim/capsim/model"
)

// Engine states.
const (
	engIdle       uint8 = iota
	engStep             // one step with prefill work (chunked prefill mixed with decodes)
	engRun              // a run of pure decode steps with constant membership
	engProcessing       // inside onStepEnd/startStep: new work waits for startStep
	engWaking           // idle engine with new work: starts at nextT (now, after the other events of this instant, or when a transfer arrives)
)

// engine is one aggregated replica or one disaggregated decode worker: a
// vLLM V1-style scheduler with continuous batching and chunked prefill.
//
// Decoding requests form the "decode set". They all advance one token per
// step, so the engine keeps only aggregates over them: a step counter S,
// per request offsets (KV tokens = S + off), the sum of offsets, the count
// of offsets per residue modulo the block size (to know how many blocks
// the next steps allocate) and a heap of completion step indices. A run of
// pure decode steps is advanced in one event.
type engine struct {
	s         *simulator
	idx       int
	field     string // "Replicas" or "Decode", for errors
	mon       *poolMon
	cost      CostModel
	disagg    bool
	block     int64
	shift     int8  // log2(block) when a power of two, else −1
	capBlocks int64 // 0: unlimited
	maxSeqs   int
	maxTokens int
	// delayed: tokens reach clients one step late (PoolConfig.DelayedOutput);
	// lagFirst wait for their first token's delivery, lagDone for their last.
	delayed bool
	// pfirst: prefill work runs in steps of its own while the decodes wait
	// (PoolConfig.PrefillFirst). pause is the total time decodes have so
	// waited, pmark its value when the last run of decode steps ended: the
	// decodes that were running then have all waited pause − pmark since
	// their last token, one that joined later pause − its pauseAt.
	pfirst bool
	pause  float64
	pmark  float64
	// With delayed output, a request whose first token reaches the client
	// as a prefill-first step ends (late) waits through the next decode
	// step too before its second token's gap ends: that step's time is
	// carried into its next gap. nLate and nCarry count them.
	nLate, nCarry int
	// reserve: admissions keep KV blocks for every admitted request's last
	// token (PoolConfig.ReserveOutput); reserved counts them.
	reserve  bool
	reserved int64
	// window: each admitted request also holds blocks for min(its length,
	// window) tokens of its sliding-window layers (PoolConfig.WindowTokens).
	window   int64
	lagFirst []*request
	lagDone  []*request

	waiting    reqQueue    // needs a local prefill: new (aggregated) or preempted requests
	remote     reqQueue    // disaggregated: waiting for KV blocks before their remote prefill
	ready      reqQueue    // disaggregated: KV transferred, waiting to join the decode set
	inbound    inboundHeap // disaggregated: KV transfers in flight, by arrival time
	prefilling []*request  // running requests in prefill, in admission order

	heap       finHeap
	sumOff     int64
	residues   []int64 // residues[off mod block] = decoding requests with that offset
	S          int64
	used       int64 // KV blocks allocated
	firstTimer []*request
	// gapless are the decodes whose first token is not yet seen in the
	// current step (noGap, counted in nFirst); firstLag the disaggregated
	// ones whose first token, with delayed output, is delivered a step late.
	// startStep clears gapless before marking anew, and every step end
	// calls startStep, so a completed (recycled) request is never marked.
	gapless, firstLag []*request
	nFirst            int
	nextAdmit         uint64

	outstanding int // routed and not completed, for LeastOutstanding
	server      int // the API server its requests pass (simulator.servers)
	// pc is the replica's prefix cache (PoolConfig.PrefixCaching with
	// Config.Sharing); nil without one. Its referenced blocks count in
	// used, its idle ones sit in the free space.
	pc *prefixCache

	state uint8
	// position in the simulator's engine heap (-1: none) and the time and
	// sequence number of the engine's next event
	hpos    int
	nextT   float64
	nextSeq uint64
	// the step or run of steps in progress
	t0, dur, base, perKV, k1 float64
	j                        int64
	n, pseqs                 int
}

type affineCoef struct {
	base, perKV float64
	ok          bool
}

func newEngine(s *simulator, idx int, p PoolConfig, mon *poolMon, disagg bool) *engine {
	field := "Replicas"
	if disagg {
		field = "Decode"
	}
	// A run takes its engines, with their emptied buffers, from the
	// previous run's (runBufs).
	b := s.bufs
	var e *engine
	if idx < len(b.engines) {
		e = b.engines[idx]
	} else {
		e = new(engine)
		b.engines = append(b.engines, e)
	}
	// recycle leaves only its buffers, emptied (a run's end recycled it
	// already; this one call makes newEngine not depend on that), so the
	// fields below are all a new engine starts with.
	e.recycle()
	e.s, e.idx, e.field, e.mon, e.cost, e.disagg = s, idx, field, mon, p.Cost, disagg
	e.block, e.capBlocks = int64(p.BlockSize), int64(p.KVCapacity/p.BlockSize)
	e.maxSeqs, e.maxTokens = p.MaxNumSeqs, p.MaxBatchedTokens
	e.delayed, e.pfirst, e.reserve = p.DelayedOutput, p.PrefillFirst, p.ReserveOutput
	e.window, e.hpos = int64(p.WindowTokens), -1
	if cap(e.residues) >= p.BlockSize {
		e.residues = e.residues[:p.BlockSize]
		clear(e.residues)
	} else {
		e.residues = make([]int64, p.BlockSize)
	}
	e.shift = -1
	if e.block&(e.block-1) == 0 {
		e.shift = int8(bits.TrailingZeros64(uint64(e.block)))
	}
	mon.capBlocks = e.capBlocks
	return e
}

// recycle empties e for the next run's newEngine, keeping only its
// buffers, their pointers cleared: the one list of an engine's buffers.
func (e *engine) recycle() {
	e.waiting.reset()
	e.remote.reset()
	e.ready.reset()
	*e = engine{lagFirst: clearAll(e.lagFirst), lagDone: clearAll(e.lagDone),
		waiting: e.waiting, remote: e.remote, ready: e.ready, inbound: clearAll(e.inbound),
		prefilling: clearAll(e.prefilling), heap: clearAll(e.heap), residues: e.residues,
		firstTimer: clearAll(e.firstTimer), gapless: clearAll(e.gapless), firstLag: clearAll(e.firstLag)}
}

func (e *engine) running() int { return len(e.heap) + len(e.prefilling) }

// blocksFor is the blocks tokens tokens fill: a shift for a block size
// that is a power of two (vLLM's 16), not a division at every admission,
// chunk and completion.
func (e *engine) blocksFor(tokens int64) int64 {
	x := tokens + e.block - 1
	if e.shift >= 0 && x >= 0 {
		return x >> e.shift
	}
	return x / e.block
}

// windowBlocks are the blocks r's sliding-window layers hold while it runs.
func (e *engine) windowBlocks(r *request) int64 {
	return windowBlocks(int64(r.prompt+r.out), e.window, e.block)
}

// dropWindow returns the blocks r's sliding-window layers held.
func (e *engine) dropWindow(t float64, r *request) {
	e.addUsed(t, -r.wblocks)
	r.wblocks = 0
}

func (e *engine) mod(x int64) int64 {
	if e.shift >= 0 {
		return x & (e.block - 1) // two's complement: correct for negative x too
	}
	m := x % e.block
	if m < 0 {
		m += e.block
	}
	return m
}

// growth is the number of blocks the decode set allocates in its next k steps.
func (e *engine) growth(k int64) int64 {
	n := int64(len(e.heap))
	if n == 0 || k <= 0 {
		return 0
	}
	if k == 1 && e.block > 1 { // the next step (free): one residue
		return e.residues[e.mod(-e.S)]
	}
	var full int64
	if e.shift >= 0 {
		full = k >> e.shift
	} else {
		full = k / e.block
	}
	g := full * n
	for t := full * e.block; t < k; t++ {
		g += e.residues[e.mod(-(e.S + t))]
	}
	return g
}

// stepsFitting is the largest k ≤ limit whose growth fits in the free blocks.
func (e *engine) stepsFitting(limit int64) int64 {
	n := int64(len(e.heap))
	free := e.capBlocks - e.used
	if n == 0 {
		return limit
	}
	full := free / n
	if full > limit/e.block+1 {
		return limit
	}
	k := full * e.block
	if k >= limit {
		return limit
	}
	rem := free - full*n
	for t := int64(0); t < e.block; t++ {
		g := e.residues[e.mod(-(e.S + k + t))]
		if g > rem {
			return min(k+t, limit)
		}
		rem -= g
	}
	return limit
}

// free is the number of blocks left after the decode set's next step.
func (e *engine) free() int64 {
	return e.capBlocks - e.used - e.growth(1)
}

func (e *engine) addUsed(t float64, d int64) {
	if d == 0 {
		return
	}
	e.mon.kvTouch(t)
	e.used += d
	e.mon.used += d
	if e.pc != nil && d > 0 {
		e.trimCache()
	}
	if e.used > e.mon.kvMaxUsed {
		e.mon.kvMaxUsed = e.used
	}
}

// join puts r into the decode set with c KV tokens cached and g tokens emitted.
// The blocks r holds become part of the decode set's implicit accounting.
func (e *engine) join(r *request, c, g int) {
	r.off = int64(c) - e.S
	r.goff = int64(g) - e.S
	r.fin = int64(r.out) - 1 - r.goff
	r.blocks = 0
	r.pauseAt = e.pause
	e.residues[e.mod(r.off)]++
	e.sumOff += r.off
	e.heap.push(r)
}

// leave takes r out of the decode set and returns the blocks it held.
func (e *engine) leave(r *request) int64 {
	e.residues[e.mod(r.off)]--
	e.sumOff -= r.off
	e.heap.remove(r)
	r.g = int(e.S + r.goff)
	return e.blocksFor(e.S+r.off) - r.shared
}

// trimCache evicts idle cached blocks the free space no longer holds.
func (e *engine) trimCache() {
	free := int64(maxIdleUnbounded)
	if e.capBlocks > 0 {
		free = e.capBlocks - e.used
	}
	e.pc.trim(free)
}

// dropCache returns r's references to cached blocks (preempted, or
// finished after caching its full blocks of kv tokens: kv ≥ 0).
func (e *engine) dropCache(t float64, r *request, kv int) {
	if e.pc == nil || r.px == nil {
		return
	}
	var idle int64
	if kv >= 0 {
		idle = e.pc.finish(r, kv)
	} else {
		idle = e.pc.release(r)
	}
	r.shared = 0
	e.addUsed(t, -idle)
	e.trimCache()
}

// enqueue accepts a newly routed request at t.
func (e *engine) enqueue(t float64, r *request) {
	e.mon.queueAdd(t, 1)
	if e.disagg {
		e.remote.pushBack(r)
	} else {
		r.target, r.done = r.prompt, r.cached
		e.waiting.pushBack(r)
	}
	e.poke(t)
}

// expect registers that r's KV cache, sent by its prefill worker, reaches
// this engine at time at (in the future or now). The request joins at the
// first step boundary at or after at; knowing the time in advance saves an
// event and lets a run of decode steps end exactly there.
func (e *engine) expect(at float64, r *request) {
	e.s.seq++
	e.inbound.push(inboundEntry{at, e.s.seq, r})
	e.wake(at, e.running() < e.maxSeqs)
}

// receive moves the transfers that have arrived by t to the ready queue.
func (e *engine) receive(t float64) {
	for len(e.inbound) > 0 && e.inbound[0].t <= t {
		x := e.inbound.pop()
		// It has waited since its arrival, not since this boundary.
		e.mon.queueArea += t - x.t
		e.mon.queueAdd(t, 1)
		e.ready.pushBack(x.r)
	}
}

// poke reacts to new work at t: an idle engine starts a step; a run of
// decode steps is cut at the next step boundary if the work could start there.
func (e *engine) poke(t float64) {
	e.wake(t, e.state == engRun && e.canStartNew())
}

// wake makes the engine look at new work at t: an idle engine starts a
// step then, a waking one no later than then, and a running one cuts its
// run of decode steps at the next boundary when cut is true (the work
// could join that step).
func (e *engine) wake(t float64, cut bool) {
	switch e.state {
	case engIdle:
		// Start after the other events of this instant (requests sent
		// together are scheduled together, as the engine would see them).
		e.state = engWaking
		e.s.schedule(e, t)
	case engWaking:
		if t < e.nextT {
			e.s.schedule(e, t)
		}
	case engRun:
		if cut {
			e.truncate(t)
		}
	}
}

func (e *engine) canStartNew() bool {
	if e.running() < e.maxSeqs && (e.ready.len() > 0 || e.waiting.len() > 0) {
		return true
	}
	if e.remote.len() > 0 {
		r := e.remote.peek()
		return e.capBlocks == 0 || e.blocksFor(int64(r.prompt))+e.windowBlocks(r) <= e.capBlocks-e.used
	}
	return false
}

// runEnd is the end time of the k-th step of the current run: with n
// sequences whose total KV grows by n per step, step i takes
// base + perKV·(k1 + i·n), a quadratic in k.
func (e *engine) runEnd(k int64) float64 {
	fk := float64(k)
	return e.t0 + (fk*e.base + e.perKV*(fk*e.k1+float64(e.n)*fk*float64(k-1)/2))
}

// boundaryAfter is the first step k ≤ j of the current run ending at or
// after t (j when t is beyond the run).
func (e *engine) boundaryAfter(t float64) int64 {
	if t >= e.runEnd(e.j) {
		return e.j
	}
	// A run already cut at the boundary after an earlier request's
	// arrival, which this one follows within the same step: runEnd
	// rises with k (each operation rounds monotonically), so the search
	// below would find j.
	if e.j <= 1 || e.runEnd(e.j-1) < t {
		return e.j
	}
	lo, hi := int64(1), e.j
	for lo < hi {
		mid := lo + (hi-lo)/2
		if e.runEnd(mid) >= t {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// truncate cuts the run of steps at the first step boundary at or after t.
func (e *engine) truncate(t float64) {
	if k := e.boundaryAfter(t); k < e.j {
		e.j = k
		e.s.schedule(e, e.runEnd(k))
	}
}

// latest is the most recently admitted running request (vLLM preempts it first).
func (e *engine) latest() *request {
	var best *request
	if k := len(e.prefilling); k > 0 {
		best = e.prefilling[k-1]
	}
	for _, x := range e.heap {
		if best == nil || x.admit > best.admit {
			best = x.r
		}
	}
	return best
}

// preempt evicts r (recompute): it frees its blocks and waits at the front
// of the queue to prefill its prompt and the tokens generated so far again.
func (e *engine) preempt(t float64, r *request) {
	e.unreserve(r)
	e.dropCarry(r)
	e.dropWindow(t, r)
	if r.decoding {
		e.addUsed(t, -e.leave(r))
		r.lastTok = t
	} else {
		for i, p := range e.prefilling {
			if p == r {
				copy(e.prefilling[i:], e.prefilling[i+1:])
				e.prefilling[len(e.prefilling)-1] = nil
				e.prefilling = e.prefilling[:len(e.prefilling)-1]
				break
			}
		}
		e.addUsed(t, -r.blocks)
	}
	e.dropCache(t, r, -1)
	r.blocks, r.done, r.chunk = 0, r.cached, 0
	r.target = r.prompt + r.g
	r.preempt++
	e.mon.preemptions++
	e.mon.queueAdd(t, 1)
	e.waiting.pushFront(r)
}

// dropCarry forgets r's pending late first token or carried gap.
func (e *engine) dropCarry(r *request) {
	if r.late {
		r.late = false
		e.nLate--
	}
	if r.carry > 0 {
		r.carry = 0
		e.nCarry--
	}
}

// unreserve returns the KV blocks r kept for its last token (ReserveOutput).
func (e *engine) unreserve(r *request) {
	e.reserved -= r.resv
	r.resv = 0
}

func (e *engine) stepTime(st model.Step) (float64, bool) {
	d := e.cost.StepTime(st)
	if !finiteNonNeg(d) {
		e.s.fail(fmt.Errorf("sim: Config.%s.Cost returned step time %v for %+v; want a finite non-negative number of seconds", e.field, d, st))
		return 0, false
	}
	return d, true
}

// affineFor is the decode run's affine cost of n sequences, priced once a
// run for every engine (they share one pool's Cost).
func (e *engine) affineFor(n int) (float64, float64, bool) {
	s := e.s
	if n >= len(s.affine) {
		s.affine = append(s.affine, make([]affineCoef, n+1-len(s.affine))...)
	}
	a := &s.affine[n]
	if !a.ok {
		a.base, a.perKV = e.cost.DecodeAffine(n)
		if !finiteNonNeg(a.base) || !finiteNonNeg(a.perKV) {
			e.s.fail(fmt.Errorf("sim: Config.%s.Cost.DecodeAffine(%d) returned base %v, perKV %v; want finite non-negative numbers", e.field, n, a.base, a.perKV))
			return 0, 0, false
		}
		a.ok = true
	}
	return a.base, a.perKV, true
}

// startStep schedules the engine's next step at t, as vLLM V1's scheduler
// does: running decodes first (preempting the latest admitted when their
// KV blocks do not fit), then running partial prefills, then new requests
// while the token budget, the sequence cap and the KV cache allow.
func (e *engine) startStep(t float64) {
	e.state = engProcessing
	e.receive(t)
	// Requests whose KV arrived join the decode set (disaggregated).
	for e.ready.len() > 0 && e.running() < e.maxSeqs {
		r := e.ready.pop()
		e.mon.queueAdd(t, -1)
		r.admit = e.nextAdmit
		e.nextAdmit++
		e.join(r, r.prompt, 0)
		e.firstTimer = append(e.firstTimer, r)
	}
	preempted := e.mon.preemptions
	if e.capBlocks > 0 {
		for len(e.heap) > 0 && e.growth(1) > e.capBlocks-e.used {
			e.preempt(t, e.latest())
		}
	}
	n := len(e.heap)
	budget := e.maxTokens - n
	if e.pfirst {
		budget = e.maxTokens
	}
	ptoks, pseqs := 0, 0
	attn := 0.0
	i := 0
	for i < len(e.prefilling) && budget > 0 {
		r := e.prefilling[i]
		c := min(r.target-r.done, budget)
		if e.capBlocks > 0 {
			need := e.blocksFor(int64(r.done+c)) - r.shared - r.blocks
			evicted := false
			for need > e.free() {
				v := e.latest()
				e.preempt(t, v)
				if v == r {
					evicted = true
					break
				}
			}
			if evicted {
				continue
			}
			r.blocks += need
			e.addUsed(t, need)
		}
		r.chunk = c
		budget -= c
		ptoks += c
		pseqs++
		attn += model.ChunkAttn(r.done, c)
		i++
	}
	for ; i < len(e.prefilling); i++ {
		e.prefilling[i].chunk = 0
	}
	n = len(e.heap) // preemption may have shrunk the decode set
	// A step that had to preempt admits nothing from the queue: the cache
	// is oversubscribed, and admitting would only evict again (vLLM V1's
	// scheduler skips its waiting queue after a preemption; with nothing
	// left running, its next, empty step admits, which is now).
	admit := e.mon.preemptions == preempted || e.running() == 0
	for admit && budget > 0 && e.running() < e.maxSeqs && e.waiting.len() > 0 {
		r := e.waiting.peek()
		hit, idle := 0, 0
		if e.pc != nil && r.px != nil {
			hit, idle = e.pc.hits(r, r.target)
			r.done = hit * int(e.block)
		}
		c := min(r.target-r.done, budget) // done: the prefix-cache hit
		need := e.blocksFor(int64(r.done+c)) - int64(hit)
		win := e.windowBlocks(r)
		if e.capBlocks > 0 && need+win+int64(idle) > e.free() {
			break
		}
		if e.reserve && e.capBlocks > 0 {
			f := e.blocksFor(int64(r.prompt+r.out)) + win
			if e.reserved+f > e.capBlocks {
				break
			}
			r.resv = f
			e.reserved += f
		}
		e.waiting.pop()
		e.mon.queueAdd(t, -1)
		r.admit = e.nextAdmit
		e.nextAdmit++
		if hit > 0 {
			e.pc.acquire(r, hit)
			r.shared = int64(hit)
			if r.preempt == 0 {
				r.hit = r.done
			}
		}
		r.blocks, r.wblocks = need, win
		e.addUsed(t, need+win+int64(idle))
		r.chunk = c
		e.prefilling = append(e.prefilling, r)
		budget -= c
		ptoks += c
		pseqs++
		attn += model.ChunkAttn(r.done, c)
	}

	// Disaggregated: reserve KV blocks for new requests, then send them to
	// prefill; preempted requests waiting to recompute go first.
	for e.waiting.len() == 0 && e.remote.len() > 0 {
		r := e.remote.peek()
		need := e.blocksFor(int64(r.prompt))
		win := e.windowBlocks(r)
		if e.capBlocks > 0 && need+win > e.free() {
			break
		}
		e.remote.pop()
		e.mon.queueAdd(t, -1)
		r.blocks, r.wblocks = need, win
		e.addUsed(t, need+win)
		e.s.prefill.submit(t, r)
	}

	if e.pfirst && ptoks > 0 {
		n = 0 // the decodes wait for the prefill step
	}
	e.t0, e.n, e.pseqs = t, n, pseqs
	e.k1 = 0
	if n > 0 {
		e.k1 = float64(int64(n)*(e.S+1) + e.sumOff)
	}
	var first float64
	switch {
	case ptoks > 0:
		d, ok := e.stepTime(model.Step{PrefillTokens: ptoks, PrefillSeqs: pseqs, PrefillAttn: attn, DecodeSeqs: n, DecodeKV: e.k1})
		if !ok {
			return
		}
		e.state, e.dur, e.j = engStep, d, 1
		first = t + d
		e.s.schedule(e, t+d)
	case n > 0:
		base, perKV, ok := e.affineFor(n)
		if !ok {
			return
		}
		j := e.heap[0].fin - e.S + 1
		if e.capBlocks > 0 {
			j = e.stepsFitting(j)
		}
		e.state, e.base, e.perKV, e.j = engRun, base, perKV, j
		if len(e.inbound) > 0 && e.running() < e.maxSeqs {
			e.j = e.boundaryAfter(e.inbound[0].t)
		}
		if len(e.lagDone) > 0 || e.nLate > 0 || (e.delayed && len(e.firstTimer) > 0) {
			// The finished requests' last tokens arrive when this step ends;
			// a late first token's gap spans it; a joined decode's first
			// token, with delayed output, arrives as the next step ends.
			e.j = 1
		}
		first = t + (base + perKV*e.k1)
		e.s.schedule(e, e.runEnd(e.j))
	case len(e.inbound) > 0:
		e.state = engWaking
		e.s.schedule(e, e.inbound[0].t)
	default:
		e.state = engIdle
	}
	e.nFirst = 0
	for _, r := range e.gapless {
		r.noGap = false
	}
	clear(e.gapless)
	e.gapless = e.gapless[:0]
	if n > 0 || ptoks == 0 { // a prefill-first step gives the joined decodes no token yet
		for _, r := range e.firstTimer {
			if r.decoding && r.g == 0 {
				if e.delayed {
					e.firstLag = append(e.firstLag, r) // produced as this step ends, delivered as the next does
				} else {
					r.first = first
				}
				e.markGapless(r)
			}
		}
		clear(e.firstTimer)
		e.firstTimer = e.firstTimer[:0]
	}
	if e.delayed {
		e.deliver(t, first)
	}
}

// markGapless excludes r from the current step's inter-token gaps.
func (e *engine) markGapless(r *request) {
	r.noGap = true
	e.nFirst++
	e.gapless = append(e.gapless, r)
}

// deliver hands out, with delayed output, the tokens of the step that just
// ended: they reach the clients when the step that starts now ends (first),
// or now when none starts. Finished requests complete then (onStepEnd).
func (e *engine) deliver(t, first float64) {
	if first == 0 {
		first = t
	}
	for _, r := range e.lagFirst {
		r.first = first
		switch {
		case !r.decoding:
		case e.n == 0:
			// A prefill-first step delivers it while the decodes wait:
			// its wait counts from this step's end on.
			r.pauseAt = e.pause + (first - t)
			if !r.late {
				r.late = true
				e.nLate++
			}
		default:
			e.markGapless(r) // decoding in this step, its first token not yet seen: no gap
		}
	}
	clear(e.lagFirst)
	e.lagFirst = e.lagFirst[:0]
	if first == t {
		// Nothing runs: the last tokens arrive right after the ones before.
		e.lagGaps(0)
		e.flushDone(t)
	}
}

// lagGaps records, for every finished request awaiting delivery, the gap
// before its last token: d, the step that delivers it.
func (e *engine) lagGaps(d float64) {
	if !e.s.itlOn {
		return
	}
	k := 0
	for _, r := range e.lagDone {
		switch {
		case r.out <= 1:
		case r.carry > 0:
			e.s.itl.add(d+r.carry, 1)
		default:
			k++
		}
	}
	if k > 0 {
		e.s.itl.add(d, k)
	}
}

// flushDone completes the finished requests whose last token is delivered at t.
func (e *engine) flushDone(t float64) {
	for len(e.lagDone) > 0 {
		r := e.lagDone[len(e.lagDone)-1]
		e.lagDone[len(e.lagDone)-1] = nil
		e.lagDone = e.lagDone[:len(e.lagDone)-1]
		e.dropCarry(r)
		e.s.complete(t, r)
	}
}

// onStepEnd completes the step or run of steps that ends at t.
func (e *engine) onStepEnd(t float64) {
	if e.state == engWaking {
		e.startStep(t)
		return
	}
	e.state = engProcessing
	if len(e.lagDone) > 0 {
		// Finished in the previous step, delivered as this one (a single
		// step: startStep cut the run) ends.
		if e.pseqs > 0 {
			e.lagGaps(e.dur)
		} else {
			e.lagGaps(e.base + e.perKV*e.k1)
		}
		e.flushDone(t)
	}
	n := e.n
	span := t - e.t0
	e.mon.busy += span
	e.mon.batchArea += float64(n+e.pseqs) * span
	if n == 0 && len(e.heap) > 0 {
		// A prefill-first step: the decoding requests waited through it.
		e.pause += span
	}
	if n > 0 {
		s := e.s
		first, delta := e.base+e.perKV*e.k1, e.perKV*float64(n)
		switch {
		case e.pseqs > 0:
			if s.itlOn {
				s.itl.add(e.dur, n-e.nFirst)
			}
		case !s.itlOn && e.nLate == 0 && e.nCarry == 0:
			// Nothing below but the gaps, which are not recorded.
		case e.pause > e.pmark || e.nLate > 0 || e.nCarry > 0:
			// The run's first gap also spans the prefill steps each
			// request waited through: since the last run for those that
			// ran in it, since they joined (or saw their first token) for
			// the others.
			own := 0
			for _, h := range e.heap {
				r := h.r
				switch {
				case r.noGap:
				case r.late: // its gap ends a step later (e.j is 1)
					r.carry = first + e.pause - r.pauseAt
					r.late = false
					e.nLate--
					e.nCarry++
					own++
				case r.carry > 0:
					if s.itlOn {
						s.itl.add(first+e.pause-max(r.pauseAt, e.pmark)+r.carry, 1)
					}
					r.carry = 0
					e.nCarry--
					own++
				case r.pauseAt > e.pmark:
					if s.itlOn {
						s.itl.add(first+e.pause-r.pauseAt, 1)
					}
					own++
				}
			}
			if s.itlOn {
				s.itl.add(first+e.pause-e.pmark, n-e.nFirst-own)
				s.itl.addRun(first+delta, delta, e.j-1, n, n)
			}
		case s.itlOn:
			s.itl.addRun(first, delta, e.j, n-e.nFirst, n)
		}
		e.pmark = e.pause
		g := e.growth(e.j)
		if g > 0 {
			e.addUsed(t, g)
			// Blocks were allocated through the run; count them half of it.
			e.mon.kvArea += float64(g) * span / 2
		}
		e.S += e.j
		for len(e.heap) > 0 && e.heap[0].fin < e.S {
			r := e.heap[0].r
			e.addUsed(t, -e.leave(r))
			e.dropCache(t, r, r.prompt+r.out-1)
			e.dropWindow(t, r)
			e.unreserve(r)
			if e.delayed {
				e.lagDone = append(e.lagDone, r)
			} else {
				s.complete(t, r)
			}
		}
	}
	if e.pseqs > 0 {
		k := 0
		for _, r := range e.prefilling {
			r.done += r.chunk
			r.chunk = 0
			if e.pc != nil && r.px != nil {
				moved := int64(e.pc.register(r, r.done))
				r.blocks -= moved
				r.shared += moved
			}
			if r.done < r.target {
				e.prefilling[k] = r
				k++
				continue
			}
			// Prefill complete: vLLM samples a token at the end of this step.
			r.g++
			if r.g == 1 {
				r.first = t
				if e.delayed {
					e.lagFirst = append(e.lagFirst, r)
				}
			} else if e.s.itlOn {
				e.s.itl.add(t-r.lastTok, 1)
			}
			if r.g >= r.out {
				e.addUsed(t, -r.blocks)
				r.blocks = 0
				e.dropCache(t, r, r.prompt+r.out-1)
				e.dropWindow(t, r)
				e.unreserve(r)
				if e.delayed {
					e.lagDone = append(e.lagDone, r)
				} else {
					e.s.complete(t, r)
				}
			} else {
				e.join(r, r.target, r.g)
			}
		}
		// Most steps complete a prefill or two: a loop, not clear's call.
		for i := k; i < len(e.prefilling); i++ {
			e.prefilling[i] = nil
		}
		e.prefilling = e.prefilling[:k]
	}
	if len(e.firstLag) > 0 && n > 0 {
		// Their first tokens were produced by this step: delivered as the next ends.
		e.lagFirst = append(e.lagFirst, e.firstLag...)
		clear(e.firstLag)
		e.firstLag = e.firstLag[:0]
	}
	e.pseqs = 0
	if e.s.err != nil {
		return
	}
	e.startStep(t)
}

// reqQueue is a FIFO of requests that also accepts pushes at the front.
type reqQueue struct {
	buf  []*request
	head int
}

func (q *reqQueue) len() int            { return len(q.buf) - q.head }
func (q *reqQueue) peek() *request      { return q.buf[q.head] }
func (q *reqQueue) pushBack(r *request) { q.buf = append(q.buf, r) }

// reset empties q, its pointers cleared, keeping its buffer.
func (q *reqQueue) reset() {
	q.buf, q.head = clearAll(q.buf), 0
}

func (q *reqQueue) pop() *request {
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head++
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	} else if q.head >= 256 && 2*q.head >= len(q.buf) {
		k := copy(q.buf, q.buf[q.head:])
		clear(q.buf[k:])
		q.buf, q.head = q.buf[:k], 0
	}
	return r
}

func (q *reqQueue) pushFront(r *request) {
	if q.head > 0 {
		q.head--
		q.buf[q.head] = r
		return
	}
	q.buf = append(q.buf, nil)
	copy(q.buf[1:], q.buf)
	q.buf[0] = r
}
