package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"

	"github.com/capsim/capsim/model"
)

// MaxNumPrompts bounds the requests of one run: 10 M requests simulate in
// about 5 s (BenchmarkMemory10M: 4.65 s, 17 MB), and callers that derive a prompt count
// from the load (20 × rate) must not turn an absurd rate into hours of work.
const MaxNumPrompts = 10_000_000

// ErrTooManyPrompts is matched (errors.Is) by the errors of runs longer
// than MaxNumPrompts, so a caller can say how to ask for fewer.
var ErrTooManyPrompts = errors.New("sim: too many prompts")

// promptsError is an error about a run longer than MaxNumPrompts.
type promptsError struct{ msg string }

func (e *promptsError) Error() string        { return e.msg }
func (e *promptsError) Is(target error) bool { return target == ErrTooManyPrompts }

// TooManyPrompts returns an error with text msg that matches ErrTooManyPrompts.
func TooManyPrompts(format string, args ...any) error {
	return &promptsError{msg: fmt.Sprintf(format, args...)}
}

// maxSamples bounds PoolStats.Series; when full, every other sample is
// dropped and the sampling interval doubles.
const maxSamples = 256

// request is one simulated request while it is in flight.
type request struct {
	id           int
	prompt, out  int
	send, first  float64
	lastTok      float64 // time of the latest token, for the ITL of a re-prefill
	g            int     // tokens emitted so far
	target, done int     // local prefill: tokens to compute and computed so far
	blocks       int64   // KV blocks held outside the decode set's implicit accounting
	off, goff    int64   // in the decode set: KV tokens = S + off, emitted = S + goff before step S
	fin          int64   // in the decode set: index of its last decode step
	admit        uint64  // admission order on its engine (for preemption)
	decoding     bool    // in the engine's decode set (its completion heap)
	preempt      int
	eng          *engine
	ptoks        int     // prompt tokens computed by the prefill pool
	cached       int     // leading prompt tokens served from the prefix cache (Config.PrefixHitRate)
	chunk        int     // prompt tokens computed in the current step
	pauseAt      float64 // the engine's prefill-first pause when it joined the decodes (or its first token reached the client)
	noGap        bool    // decoding in the current step before its first token is seen: no inter-token gap
	late         bool    // delayed output: its first token reached the client as a prefill-first step ended
	carry        float64 // time already in its next inter-token gap (a late first token's)
	resv         int64   // KV blocks kept for its last token (PoolConfig.ReserveOutput)
	wblocks      int64   // KV blocks its sliding-window layers hold (PoolConfig.WindowTokens)
	shared       int64   // of its KV blocks, those the prefix cache holds for it (counted there)
	hit          int     // prompt tokens its first admission took from the prefix cache
	px           *prefixTag
	// passAt and passSeq are its passing event's time and sequence
	// number while it waits inside an API server.
	passAt  float64
	passSeq uint64
}

type simulator struct {
	ctx context.Context
	cfg Config
	err error

	events       eventHeap
	engineEvents engineHeap
	seq          uint64

	// load
	arrivals       *rand.Rand
	inputs         lengthSource
	outputs        lengthSource
	routes         *rand.Rand // Random routing's draws
	concurrency    int        // 0 = unlimited
	arrived        int        // requests whose arrival time has come
	sent           int
	completed      int
	inflight       int
	inflightArea   float64
	inflightT      float64
	lastDone       float64
	totalIn        int64
	totalOut       int64
	totalHit       int64   // prompt tokens of the recorded requests served from a prefix cache
	sharer         *sharer // nil: prompts share nothing a cache serves
	interArrivalSc float64

	free   []*request
	slab   []request // requests not yet used, of the block last taken
	bufs   *runBufs  // the slices this run took from runBuffers
	blocks []*[requestBlock]request
	// servers are the API servers (Config.FrontendLatency and
	// FrontendService), each with the requests routed to its workers in
	// send order; nil when requests reach the engine as they are sent.
	// frontendMon is their busy time and waits, nil without the service.
	servers     []apiServer
	frontendMon *poolMon
	// sampled are the pools whose state the series record: the engine
	// pools, then the API servers when simulated.
	sampled []*poolMon

	engines    []*engine
	enginePool *poolMon
	router     Routing
	rr         int
	prefill    *prefillPool
	disagg     bool

	ttft, tpot, itl, e2el dist
	records               []RequestRecord
	// itlOn is false while a steady-state run warms up.
	itlOn bool
	// affine are the engines' decode-run costs by batch size (engine.affineFor).
	affine []affineCoef
	// total is the requests the load sends: NumPrompts in replay, unbounded
	// in steady state (the run stops when the measured ones are done).
	total int
	// fitsAll: every request the lengths can draw fits (checkFits), so
	// send need not check each one.
	fitsAll             bool
	steady              *steadyState
	windowIn, windowOut int64

	pools      []*poolMon
	sampleDT   float64
	nextSample float64
}

// Run simulates cfg to completion and returns vLLM bench serve's metrics
// for it. It returns an error naming the field for invalid input, when a
// request can never fit a KV cache, when the cost model returns a negative
// or undefined time, or when ctx is cancelled.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := newSimulator(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.releaseBlocks()
	if err := s.run(); err != nil {
		return nil, err
	}
	return s.result(), nil
}

// requestBlock is the requests of one block (requestBlocks).
const requestBlock = 64

// requestBlocks are blocks of zeroed requests, shared by runs.
var requestBlocks = sync.Pool{New: func() any { return new([requestBlock]request) }}

// releaseBlocks zeroes the run's requests and gives their blocks back,
// and its buffers (runBufs): nothing of a finished run refers to them.
func (s *simulator) releaseBlocks() {
	for i, b := range s.blocks {
		used := b[:]
		if i == len(s.blocks)-1 {
			used = b[:requestBlock-len(s.slab)] // the rest was never taken: zero still
		}
		clear(used)
		requestBlocks.Put(b)
	}
	s.blocks, s.slab = nil, nil
	if b := s.bufs; b != nil {
		s.bufs = nil
		b.keep(s)
		runBuffers.Put(b)
	}
	s.free = nil
}

// runBufs are the slices a run grows as it goes (free requests, event
// heaps, queues, decode sets, latency samples), kept between runs and
// handed out empty: a fit simulates about 34,000 short runs, and growing
// each run's from nothing was 5% of it.
type runBufs struct {
	free         []*request
	events       []event
	engineEvents engineHeap
	affine       []affineCoef
	engines      []*engine
	servers      []apiServer
	vals         [3][]float64
	wts          [3][]uint32
}

var runBuffers = sync.Pool{New: func() any { return new(runBufs) }}

// keep takes back s's buffers, emptied, with what they point to cleared.
func (b *runBufs) keep(s *simulator) {
	b.free = clearAll(s.free)
	b.events = clearAll(s.events.h)
	b.engineEvents = clearAll(s.engineEvents)
	b.affine = s.affine[:0]
	for _, e := range s.engines {
		e.recycle()
	}
	for i := range s.servers {
		q := &s.servers[i].queue
		q.reset()
		s.servers[i] = apiServer{queue: *q}
	}
	if len(s.servers) > 0 {
		b.servers = s.servers
	}
}

// clearAll is xs emptied, its pointers cleared.
func clearAll[T any](xs []T) []T {
	clear(xs)
	return xs[:0]
}

// ValidPrefixHitRate says whether h is a prefix-cache hit rate the
// simulator takes (Config.PrefixHitRate): a fraction in [0, 1).
func ValidPrefixHitRate(h float64) bool { return h >= 0 && h < 1 }

// CachedPrefix is the prompt tokens a request of prompt tokens takes from
// the prefix cache at hit rate h (Config.PrefixHitRate): ⌊h·prompt⌋, at
// most prompt−1, as the engine always computes the last prompt token. The
// floor allows 1e-9 of rounding error, so that a product such as 0.29·100
// (28.999999999999996 in floating point) counts 29 tokens, not 28.
func CachedPrefix(h float64, prompt int) int {
	if !(h > 0) || prompt <= 1 {
		return 0
	}
	return min(int(math.Floor(h*float64(prompt)+1e-9)), prompt-1)
}

func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

func validatePool(name string, p *PoolConfig) error {
	f := func(format string, a ...any) error {
		return fmt.Errorf("sim: Config.%s.%s", name, fmt.Sprintf(format, a...))
	}
	if p.Workers <= 0 {
		return f("Workers must be positive, got %d", p.Workers)
	}
	if p.Cost == nil {
		return f("Cost must be set")
	}
	if p.KVCapacity < 0 {
		return f("KVCapacity must not be negative, got %d", p.KVCapacity)
	}
	// The engine's limits are stated, never assumed here: they are the
	// engine version's (engine.Defaults) or the user's.
	if p.BlockSize <= 0 {
		return f("BlockSize must be positive, got %d", p.BlockSize)
	}
	if p.MaxNumSeqs <= 0 {
		return f("MaxNumSeqs must be positive, got %d", p.MaxNumSeqs)
	}
	if p.MaxBatchedTokens <= 0 {
		return f("MaxBatchedTokens must be positive, got %d", p.MaxBatchedTokens)
	}
	if p.WindowTokens < 0 {
		return f("WindowTokens must not be negative, got %d", p.WindowTokens)
	}
	if p.KVCapacity > 0 && p.KVCapacity < p.BlockSize {
		return f("KVCapacity (%d) must hold at least one block of %d tokens", p.KVCapacity, p.BlockSize)
	}
	return nil
}

func newSimulator(ctx context.Context, cfg Config) (*simulator, error) {
	s := &simulator{ctx: ctx, cfg: cfg}
	c := &s.cfg
	if c.NumPrompts <= 0 {
		return nil, fmt.Errorf("sim: Config.NumPrompts must be positive, got %d", c.NumPrompts)
	}
	if c.NumPrompts > MaxNumPrompts {
		return nil, TooManyPrompts("sim: Config.NumPrompts %d is more than the %d requests one run may simulate", c.NumPrompts, MaxNumPrompts)
	}
	switch c.Mode {
	case "", BenchmarkReplay:
		c.Mode = BenchmarkReplay
		s.total, s.itlOn = c.NumPrompts, !c.NoITL
	case SteadyState:
		if c.Warmup < 0 {
			return nil, fmt.Errorf("sim: Config.Warmup must not be negative, got %d", c.Warmup)
		}
		if c.Warmup == 0 {
			c.Warmup = DefaultWarmup(c.NumPrompts, c.Load)
		}
		if c.Load.Kind == model.Burst {
			return nil, errors.New("sim: a burst (every request at once) has no steady state; use a rate or a concurrency")
		}
		s.total = math.MaxInt
		s.steady = &steadyState{warm: c.Warmup, n: c.NumPrompts}
		if c.KeepRequests {
			return nil, errors.New("sim: Config.KeepRequests applies to benchmark replay only")
		}
	default:
		return nil, fmt.Errorf("sim: Config.Mode %q is unknown (want %q or %q)", c.Mode, BenchmarkReplay, SteadyState)
	}
	if c.Load.Kind == model.OpenLoop && c.Load.Burstiness == 0 {
		c.Load.Burstiness = 1 // vLLM's default: Poisson arrivals
	}
	if err := c.Load.Validate(); err != nil {
		return nil, fmt.Errorf("sim: Config.Load: %w", err)
	}
	if err := c.Input.validate("Input"); err != nil {
		return nil, err
	}
	if err := c.Output.validate("Output"); err != nil {
		return nil, err
	}
	if !ValidPrefixHitRate(c.PrefixHitRate) {
		return nil, fmt.Errorf("sim: Config.PrefixHitRate must be a fraction in [0, 1), got %v", c.PrefixHitRate)
	}
	if !finiteNonNeg(c.FrontendLatency) {
		return nil, fmt.Errorf("sim: Config.FrontendLatency must be a finite non-negative number, got %v", c.FrontendLatency)
	}
	if !finiteNonNeg(c.FrontendService) {
		return nil, fmt.Errorf("sim: Config.FrontendService must be a finite non-negative number, got %v", c.FrontendService)
	}
	if c.FrontendServers < 0 || c.FrontendServers > MaxFrontendServers {
		return nil, fmt.Errorf("sim: Config.FrontendServers must be from 0 (one) to %d, got %d", MaxFrontendServers, c.FrontendServers)
	}
	if !finiteNonNeg(c.Transfer.Latency) {
		return nil, fmt.Errorf("sim: Config.Transfer.Latency must be a finite non-negative number, got %v", c.Transfer.Latency)
	}
	if !finiteNonNeg(c.Transfer.PerToken) {
		return nil, fmt.Errorf("sim: Config.Transfer.PerToken must be a finite non-negative number, got %v", c.Transfer.PerToken)
	}
	switch c.Router {
	case "":
		c.Router = RoundRobin
	case RoundRobin, LeastOutstanding, Random, PrefixAware:
	case SharedQueue:
		return nil, fmt.Errorf("sim: Config.Router %q applies only to Config.PrefillRouter; use %q, %q, %q or %q", c.Router, RoundRobin, LeastOutstanding, Random, PrefixAware)
	default:
		return nil, fmt.Errorf("sim: Config.Router %q is unknown (want %q, %q, %q or %q)", c.Router, RoundRobin, LeastOutstanding, Random, PrefixAware)
	}
	if err := c.Sharing.Validate(); err != nil {
		return nil, fmt.Errorf("sim: Config.Sharing.%w", err)
	}
	switch c.PrefillRouter {
	case "":
		c.PrefillRouter = SharedQueue
	case RoundRobin, LeastOutstanding, SharedQueue, PrefixAware:
	default:
		return nil, fmt.Errorf("sim: Config.PrefillRouter %q is unknown (want %q, %q, %q or %q)", c.PrefillRouter, SharedQueue, RoundRobin, LeastOutstanding, PrefixAware)
	}
	agg := c.Replicas.Workers != 0 || c.Replicas.Cost != nil
	dis := c.Prefill.Workers != 0 || c.Decode.Workers != 0 || c.Prefill.Cost != nil || c.Decode.Cost != nil
	switch {
	case agg && dis:
		return nil, errors.New("sim: Config sets both Replicas and Prefill/Decode pools; choose aggregated or disaggregated")
	case agg:
		if err := validatePool("Replicas", &c.Replicas); err != nil {
			return nil, err
		}
		if err := checkBudget("Replicas", c.Replicas); err != nil {
			return nil, err
		}
	case dis:
		if err := validatePool("Prefill", &c.Prefill); err != nil {
			return nil, err
		}
		if err := validatePool("Decode", &c.Decode); err != nil {
			return nil, err
		}
		if err := checkBudget("Decode", c.Decode); err != nil {
			return nil, err
		}
		s.disagg = true
	default:
		return nil, errors.New("sim: Config.Replicas.Workers must be positive (or set Prefill and Decode pools)")
	}
	// A request that can never fit is an error up front when the length
	// distribution is bounded, and at the latest when it is drawn.
	if err := s.checkFits(c.Input.MaxLen(), c.Output.MaxLen(), -1); err != nil {
		return nil, err
	}

	b := runBuffers.Get().(*runBufs)
	s.bufs = b
	s.free, s.events.h, s.engineEvents, s.affine = b.free, b.events, b.engineEvents, b.affine
	s.arrivals = newStream(c.Seed, streamArrivals)
	s.inputs = newLengthSource(c.Input, newStream(c.Seed, streamInput))
	s.outputs = newLengthSource(c.Output, newStream(c.Seed, streamOutput))
	s.routes = newStream(c.Seed, streamRoute)
	s.concurrency = c.Load.Concurrency
	if c.Load.Kind == model.OpenLoop {
		s.interArrivalSc = 1 / (c.Load.Rate * c.Load.Burstiness)
	}

	if s.disagg {
		s.enginePool = &poolMon{name: "decode", workers: c.Decode.Workers}
		s.prefill = newPrefillPool(s, c.Prefill)
		s.pools = []*poolMon{s.prefill.mon, s.enginePool}
		for i := 0; i < c.Decode.Workers; i++ {
			s.engines = append(s.engines, newEngine(s, i, c.Decode, s.enginePool, true))
		}
	} else {
		s.enginePool = &poolMon{name: "replicas", workers: c.Replicas.Workers}
		s.pools = []*poolMon{s.enginePool}
		for i := 0; i < c.Replicas.Workers; i++ {
			s.engines = append(s.engines, newEngine(s, i, c.Replicas, s.enginePool, false))
		}
	}
	if c.FrontendLatency > 0 || c.FrontendService > 0 {
		k := min(max(c.FrontendServers, 1), len(s.engines))
		if cap(b.servers) >= k {
			s.servers = b.servers[:k]
		} else {
			s.servers = make([]apiServer, k)
		}
		for _, e := range s.engines {
			e.server = e.idx * len(s.servers) / len(s.engines)
		}
	}
	if c.FrontendService > 0 {
		s.frontendMon = &poolMon{name: FrontendPool, workers: len(s.servers)}
	}
	s.sampled = s.pools
	if s.frontendMon != nil {
		s.sampled = append(slices.Clip(s.pools), s.frontendMon)
	}
	s.enginePool.running = func() int {
		n := 0
		for _, e := range s.engines {
			n += e.running()
		}
		return n
	}
	s.router = c.Router
	// Conversations grow their prompts whether or not a cache serves them.
	shared := c.Sharing.On() && c.PrefixHitRate == 0
	cache := shared && !s.disagg && c.Replicas.PrefixCaching
	prefillCache := shared && s.disagg && c.Prefill.PrefixCaching
	if cache || prefillCache || c.Sharing.Turns > 1 {
		s.sharer = newSharer(c.Sharing, c.Seed)
	}
	// Bounded lengths were checked above at their largest; a conversation
	// grows its prompts, checked as they are drawn.
	s.fitsAll = c.Input.MaxLen() > 0 && c.Output.MaxLen() > 0 && (s.sharer == nil || s.sharer.sessions == nil)
	if cache {
		for _, e := range s.engines {
			e.pc = newPrefixCache(int(e.block))
		}
	}
	if prefillCache {
		for _, w := range s.prefill.workers {
			w.pc = newPrefixCache(s.prefill.block)
		}
	}
	s.sampleDT = 1.0 / 64
	// A request's TTFT, TPOT and E2E each take an entry: room for them
	// up front, not grown sample by sample.
	for i, l := range [...]struct {
		d   *dist
		fam int
	}{{&s.ttft, famTTFT}, {&s.tpot, famTPOT}, {&s.e2el, famE2EL}} {
		d := l.d
		if d.sumsOnly = !s.wantsPercentiles(l.fam); d.sumsOnly {
			continue
		}
		n := min(c.NumPrompts, exactLimit)
		if cap(b.vals[i]) < n {
			b.vals[i], b.wts[i] = make([]float64, 0, n), make([]uint32, 0, n)
		}
		d.vals, d.wts = b.vals[i][:0], b.wts[i][:0]
	}
	s.itl.sumsOnly = !s.wantsPercentiles(famITL)
	if c.NoSeries {
		s.nextSample = math.Inf(1)
	}
	return s, nil
}

func checkBudget(name string, p PoolConfig) error {
	// A prefill-first step holds no decodes: the budget is the prefills' own.
	if p.MaxBatchedTokens < p.MaxNumSeqs && !p.PrefillFirst {
		return fmt.Errorf("sim: Config.%s.MaxBatchedTokens (%d) must be at least MaxNumSeqs (%d), as vLLM requires", name, p.MaxBatchedTokens, p.MaxNumSeqs)
	}
	return nil
}

// checkFits reports a request of prompt+out tokens that no worker's KV cache
// can hold (negative lengths mean unknown). id < 0 means a bound check.
func (s *simulator) checkFits(prompt, out, id int) error {
	c := &s.cfg
	whatFor := func() string {
		if id >= 0 {
			return fmt.Sprintf("request %d", id)
		}
		return "the largest request"
	}
	tooBig := func(tokens int, p PoolConfig) bool { return !p.Holds(tokens) }
	if s.disagg {
		if prompt > 0 && !c.Prefill.HoldsPrompt(prompt) {
			return fmt.Errorf("sim: %s has a %d-token prompt, larger than Config.Prefill.KVCapacity %d: it can never run", whatFor(), prompt, c.Prefill.KVCapacity)
		}
		if prompt > 0 && out > 0 && tooBig(prompt+out, c.Decode) {
			return fmt.Errorf("sim: %s needs %d KV tokens (%d prompt + %d output)%s, more than Config.Decode.KVCapacity %d holds in blocks of %d: it can never finish", whatFor(), prompt+out, prompt, out, c.Decode.windowNote(prompt+out), c.Decode.KVCapacity, c.Decode.BlockSize)
		}
		return nil
	}
	if prompt > 0 && out > 0 && tooBig(prompt+out, c.Replicas) {
		return fmt.Errorf("sim: %s needs %d KV tokens (%d prompt + %d output)%s, more than Config.Replicas.KVCapacity %d holds in blocks of %d: it can never finish", whatFor(), prompt+out, prompt, out, c.Replicas.windowNote(prompt+out), c.Replicas.KVCapacity, c.Replicas.BlockSize)
	}
	return nil
}

// timeOK reports whether t can be an event time. A non-finite (or
// negative) time, which an absurd cost or transfer price produces, stops
// the run with an error instead of looping at t = +Inf.
func (s *simulator) timeOK(t float64) bool {
	if t >= 0 && t <= math.MaxFloat64 {
		return true
	}
	s.fail(fmt.Errorf("sim: an event was scheduled at simulated time %v s: a cost, latency or transfer time is not finite or far too large", t))
	return false
}

func (s *simulator) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// run is the event loop.
func (s *simulator) run() error {
	// Every request of a burst or a closed loop arrives at t = 0; an open
	// loop's first request too, the next after a gamma gap.
	if s.cfg.Load.Kind == model.OpenLoop {
		s.arrive(0)
	} else {
		s.arrived = s.total
		s.dispatch(0)
	}
	var n uint
	for s.err == nil {
		n++
		if n&4095 == 0 {
			if err := s.ctx.Err(); err != nil {
				return fmt.Errorf("sim: %w", err)
			}
		}
		if len(s.engineEvents) > 0 {
			e := s.engineEvents[0]
			if s.events.Len() == 0 || e.nextT < s.events.top().t || (e.nextT == s.events.top().t && e.nextSeq < s.events.top().seq) {
				// The engine stays at the top of the heap while its step
				// ends (its key the least: whatever this schedules comes
				// later) and moves to its next step's place from there,
				// or leaves the heap if it schedules none.
				seq := e.nextSeq
				if e.nextT >= s.nextSample {
					s.sample(e.nextT)
				}
				e.onStepEnd(e.nextT)
				if e.nextSeq == seq { // still at the top: only this loop removes
					s.engineEvents.remove(e)
				}
				if s.steady != nil && s.steady.measured == s.steady.n {
					break
				}
				continue
			}
		}
		if s.events.Len() == 0 || (s.steady != nil && s.steady.measured == s.steady.n) {
			break
		}
		ev := s.events.pop()
		if ev.t >= s.nextSample {
			s.sample(ev.t)
		}
		switch ev.kind {
		case evArrival:
			s.arrive(ev.t)
		case evFrontend:
			s.passFrontend(ev.t, ev.idx)
		case evPrefill:
			s.prefill.workers[ev.idx].onStepEnd(ev.t)
		}
	}
	if s.err != nil {
		return s.err
	}
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if s.steady != nil {
		if s.steady.measured < s.steady.n {
			return fmt.Errorf("sim: internal error: the run stalled after %d of %d measured requests", s.steady.measured, s.steady.n)
		}
		return nil
	}
	if s.completed < s.cfg.NumPrompts {
		return fmt.Errorf("sim: internal error: the run stalled after %d of %d requests", s.completed, s.cfg.NumPrompts)
	}
	// Every request has ended: every KV block an engine with a bounded
	// cache handed out, and every block reserved for an output, has come
	// back (an unbounded cache does not keep the ledger).
	for _, e := range s.engines {
		if e.capBlocks > 0 && (e.used != 0 || e.reserved != 0) {
			return fmt.Errorf("sim: internal error: Config.%s worker %d holds %d KV blocks (%d reserved) after every request ended", e.field, e.idx, e.used, e.reserved)
		}
	}
	return nil
}

func (s *simulator) push(t float64, kind uint8, idx int) {
	if !s.timeOK(t) {
		return
	}
	s.seq++
	s.events.push(event{t: t, seq: s.seq, kind: kind, idx: int32(idx)})
}

// arrive handles an open-loop arrival at t and schedules the next one.
func (s *simulator) arrive(t float64) {
	s.arrived++
	if s.steady != nil && s.steady.on {
		s.steady.offered++
	}
	if s.arrived < s.total && !s.stopArrivals(t) {
		gap := gamma(s.arrivals, s.cfg.Load.Burstiness, s.interArrivalSc)
		s.push(t+gap, evArrival, 0)
	}
	s.dispatch(t)
}

// stopArrivals reports whether a steady open loop stops arriving at t
// (Steady.ArrivalsStopped): every measured request has been sent and the
// backlog has grown, since the window opened, by more than
// max(2 × measured, minStopBacklog) requests. A deployment that keeps up
// holds its in-flight count steady, however large, and never stops.
func (s *simulator) stopArrivals(t float64) bool {
	st := s.steady
	if st == nil || s.sent < st.warm+st.n || st.offered-st.achieved <= max(2*st.n, minStopBacklog) {
		return false
	}
	st.stopped = t
	return true
}

// dispatch sends arrived requests while the client's concurrency allows.
func (s *simulator) dispatch(t float64) {
	for s.err == nil && s.sent < s.arrived && (s.concurrency <= 0 || s.inflight < s.concurrency) {
		s.send(t)
	}
}

func (s *simulator) send(t float64) {
	id := s.sent
	prompt := s.inputs.next()
	out := s.outputs.next()
	var px *prefixTag
	if s.sharer != nil {
		if k := len(s.free); k > 0 && s.free[k-1].px != nil {
			px = s.free[k-1].px
		} else {
			px = &prefixTag{}
		}
		s.sharer.tag(px, id)
		if s.sharer.sessions != nil {
			prompt = s.sharer.converse(px, id, prompt, out)
		}
	}
	if !s.fitsAll {
		if err := s.checkFits(prompt, out, id); err != nil {
			s.fail(err)
			return
		}
	}
	s.sent++
	if st := s.steady; st != nil {
		if id == st.warm {
			s.startWindow(t)
		}
		if st.on && s.cfg.Load.Kind == model.ClosedLoop {
			st.offered++
		}
	}
	s.inflightArea += float64(s.inflight) * (t - s.inflightT)
	s.inflightT = t
	s.inflight++
	var r *request
	if k := len(s.free); k > 0 {
		r = s.free[k-1]
		s.free = s.free[:k-1]
		*r = request{}
	} else {
		if len(s.slab) == 0 {
			// New requests come from blocks kept between runs: a fit
			// simulates thousands of short runs, and zeroing fresh
			// memory for each was 7% of it.
			b := requestBlocks.Get().(*[requestBlock]request)
			s.blocks = append(s.blocks, b)
			s.slab = b[:]
		}
		r = &s.slab[0]
		s.slab = s.slab[1:]
	}
	r.px = px
	r.id, r.prompt, r.out, r.send = id, prompt, out, t
	r.cached = CachedPrefix(s.cfg.PrefixHitRate, prompt)
	r.hit = r.cached
	// The balancer routes the request to a worker as it arrives.
	e := s.route(r)
	r.eng = e
	e.outstanding++
	if s.servers == nil {
		e.enqueue(t, r)
		return
	}
	// It passes that worker's API server FrontendLatency later. The server
	// works on requests one at a time, the FrontendService before each one
	// passes, so its requests pass at least that far apart, in the order
	// they were sent.
	k := e.server
	srv := &s.servers[k]
	at := max(s.frontendReady(r), srv.free)
	srv.free = at + s.cfg.FrontendService
	srv.queue.pushBack(r)
	if !s.timeOK(at) {
		return
	}
	s.seq++
	r.passAt, r.passSeq = at, s.seq
	if srv.queue.len() == 1 {
		s.events.push(event{t: at, seq: s.seq, kind: evFrontend, idx: int32(k)})
	}
}

// apiServer is one API server: the requests inside it, in send order, and
// when it can pass the next one.
//
// It passes them one at a time in send order, so their passing events
// (request.passAt, passSeq) come in the order of (t, seq): only the
// first is in the simulator's event heap, the next pushed as it passes.
// The heap stays small (a server of a closed loop at concurrency 2048
// holds up to 2048 requests) and pops in the order it would holding all.
type apiServer struct {
	queue reqQueue
	free  float64
}

// passFrontend hands the oldest request inside API server k to the
// worker it was routed to.
func (s *simulator) passFrontend(t float64, k int32) {
	srv := &s.servers[k]
	r := srv.queue.pop()
	if srv.queue.len() > 0 { // the next passes later: its event is pushed now
		n := srv.queue.peek()
		s.events.push(event{t: n.passAt, seq: n.passSeq, kind: evFrontend, idx: k})
	}
	if m := s.frontendMon; m != nil {
		// Counted as it passes, when its work and wait are behind it.
		m.busy += s.cfg.FrontendService
		m.queueArea += t - s.frontendReady(r)
	}
	r.eng.enqueue(t, r)
}

// frontendReady is when r's frontend latency ends: from then on it waits
// for a free API server.
func (s *simulator) frontendReady(r *request) float64 {
	// The builtin max is math.Max (NaN, ±0 and ±Inf alike) inlined: a
	// call to math's assembly for each request was 2.5% of a fit.
	return r.send + max(s.cfg.FrontendLatency, s.cfg.FrontendService)
}

// frontendStats are the API servers' statistics up to t over a window of
// dur seconds whose areas m holds, the waits of requests still inside them
// counted up to t.
func (s *simulator) frontendStats(m poolMon, t, dur float64) PoolStats {
	for k := range s.servers {
		q := &s.servers[k].queue
		for i := q.head; i < len(q.buf); i++ {
			m.queueArea += max(0, t-s.frontendReady(q.buf[i]))
		}
	}
	return m.windowStats(dur)
}

// inAPIServers is how many requests are inside the API servers.
func (s *simulator) inAPIServers() int {
	n := 0
	for k := range s.servers {
		n += s.servers[k].queue.len()
	}
	return n
}

// route picks the engine (replica or decode worker) for a new request.
func (s *simulator) route(r *request) *engine {
	if s.router == Random {
		return s.engines[s.routes.IntN(len(s.engines))]
	}
	if s.router == PrefixAware {
		return s.routePrefix(r)
	}
	if s.router == LeastOutstanding {
		best := s.engines[0]
		for _, e := range s.engines[1:] {
			if e.outstanding < best.outstanding {
				best = e
			}
		}
		return best
	}
	e := s.engines[s.rr]
	s.rr++
	if s.rr == len(s.engines) {
		s.rr = 0
	}
	return e
}

// routePrefix picks the engine whose cache holds the longest prefix of
// r (PrefixAware), ties to the fewest outstanding requests, then the
// lowest index.
func (s *simulator) routePrefix(r *request) *engine {
	var best *engine
	bestHit := -1
	for _, e := range s.engines {
		h := 0
		if e.pc != nil && r != nil && r.px != nil {
			h, _ = e.pc.hits(r, r.prompt)
		}
		if h > bestHit || (h == bestHit && e.outstanding < best.outstanding) {
			best, bestHit = e, h
		}
	}
	return best
}

// complete records a finished request and lets the client send the next.
func (s *simulator) complete(t float64, r *request) {
	ttft := r.first - r.send
	e2e := t - r.send
	if st := s.steady; st == nil {
		s.record(r, ttft, e2e)
	} else {
		if st.on && t > st.start {
			st.achieved++
			s.windowIn += int64(r.prompt)
			s.windowOut += int64(r.out)
		}
		if k := r.id - st.warm; k >= 0 && k < st.n {
			s.record(r, ttft, e2e)
			tpot := 0.0
			if r.out > 1 {
				tpot = (e2e - ttft) / float64(r.out-1)
			}
			st.measure(k, [3]float64{ttft, tpot, e2e}, [3]bool{true, r.out > 1, true})
			st.measured++
			if st.measured == st.n {
				st.end = t
			}
		}
	}
	if s.cfg.KeepRequests {
		s.records = append(s.records, RequestRecord{ID: r.id, InputTokens: r.prompt, OutputTokens: r.out,
			Send: r.send, FirstToken: r.first, Done: t, Preemptions: r.preempt})
	}
	r.eng.outstanding--
	s.inflightArea += float64(s.inflight) * (t - s.inflightT)
	s.inflightT = t
	s.inflight--
	s.completed++
	s.lastDone = t
	r.eng = nil
	s.free = append(s.free, r)
	s.dispatch(t)
}

// record adds a request to the latency statistics and token totals.
func (s *simulator) record(r *request, ttft, e2e float64) {
	s.ttft.add(ttft, 1)
	s.e2el.add(e2e, 1)
	if r.out > 1 {
		s.tpot.add((e2e-ttft)/float64(r.out-1), 1)
	}
	s.totalIn += int64(r.prompt)
	s.totalOut += int64(r.out)
	s.totalHit += int64(r.hit)
}

// sample appends the pools' state to their series on a grid that coarsens
// as the run grows, keeping at most maxSamples points per pool.
func (s *simulator) sample(t float64) {
	pools := s.sampled
	for s.nextSample <= t {
		for _, p := range pools {
			p.series = append(p.series, p.snapshot(s, s.nextSample))
		}
		s.nextSample += s.sampleDT
		if len(s.pools[0].series) >= maxSamples {
			for _, p := range pools {
				k := 0
				for i := 0; i < len(p.series); i += 2 {
					p.series[k] = p.series[i]
					k++
				}
				p.series = p.series[:k]
			}
			s.sampleDT *= 2
			s.nextSample = s.pools[0].series[len(s.pools[0].series)-1].T + s.sampleDT
		}
	}
}

// percentileStats are the percentiles result reports of each latency, at
// percentileRanks.
var (
	percentileStats = []string{"median", "p90", "p95", "p99"}
	percentileRanks = []float64{50, 90, 95, 99}
)

// Indices of latencyFamilies.
const (
	famTTFT = iota
	famTPOT
	famITL
	famE2EL
)

// latencyFamilies are the latencies result reports, in its order, and
// latencyNames their metrics' names, made once, not for every run.
var (
	latencyFamilies = []string{"ttft", "tpot", "itl", "e2el"}
	latencyNames    = func() (n [4]struct {
		mean, std string
		pct       [4]string
	}) {
		for i, f := range latencyFamilies {
			n[i].mean, n[i].std = model.MetricName("mean", f), model.MetricName("std", f)
			for j, st := range percentileStats {
				n[i].pct[j] = model.MetricName(st, f)
			}
		}
		return n
	}()
)

// reports says whether result reports the percentile metric name
// (Config.Percentiles: nil reports all).
func (s *simulator) reports(name string) bool {
	return s.cfg.Percentiles == nil || slices.Contains(s.cfg.Percentiles, name)
}

// wantsPercentiles says whether result reports a percentile of latency
// family fam (latencyFamilies' index).
func (s *simulator) wantsPercentiles(fam int) bool {
	return slices.ContainsFunc(latencyNames[fam].pct[:], s.reports)
}

func (s *simulator) result() *Result {
	dur := s.lastDone
	// Room for every metric up front: a fit reads thousands of results.
	res := &Result{Mode: s.cfg.Mode, Metrics: make(map[string]float64, 32), Completed: s.completed, Duration: dur}
	if s.steady != nil {
		res.Completed = s.steady.n
	}
	m := res.Metrics
	m[model.Duration] = dur
	m["completed"] = float64(res.Completed)
	m[model.TotalInputTokens] = float64(s.totalIn)
	m[model.TotalOutputTokens] = float64(s.totalOut)
	if s.totalIn > 0 {
		res.PrefixHitRate = float64(s.totalHit) / float64(s.totalIn)
	}
	if dur > 0 {
		m[model.RequestThroughput] = float64(s.completed) / dur
		m[model.OutputThroughput] = float64(s.totalOut) / dur
		m[model.TotalTokenThroughput] = float64(s.totalIn+s.totalOut) / dur
		res.MeanInFlight = s.inflightArea / dur
	}
	fams := [...]*dist{&s.ttft, &s.tpot, &s.itl, &s.e2el}
	for fi, d := range fams {
		if d == &s.itl && s.cfg.NoITL {
			continue
		}
		names := &latencyNames[fi]
		m[names.mean] = d.mean() * 1000
		m[names.std] = d.std() * 1000
		var psBuf [4]float64
		var namesBuf [4]string
		ps, pnames := psBuf[:0], namesBuf[:0]
		for i, name := range names.pct {
			if s.reports(name) {
				ps, pnames = append(ps, percentileRanks[i]), append(pnames, name)
			}
		}
		if len(ps) > 0 {
			for i, v := range d.percentiles(ps) {
				m[pnames[i]] = v * 1000
			}
		}
	}
	for _, p := range s.pools {
		res.Pools = append(res.Pools, p.stats(s, dur))
	}
	if s.frontendMon != nil {
		res.Pools = append(res.Pools, s.frontendStats(*s.frontendMon, dur, dur))
	}
	if s.steady != nil {
		s.steadyResult(res)
		for f := range s.steady.halves {
			s.steady.halves[f][0].release()
			s.steady.halves[f][1].release()
		}
	}
	for _, d := range fams {
		d.release()
	}
	if s.cfg.KeepRequests {
		sort.Slice(s.records, func(i, j int) bool { return s.records[i].ID < s.records[j].ID })
		res.Requests = s.records
	}
	return res
}
