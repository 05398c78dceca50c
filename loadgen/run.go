package loadgen

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/model"
)

// Progress is a snapshot of a running load point, reported after every
// finished request.
type Progress struct {
	Load         model.Load
	Total        int // requests in the load point
	Sent         int // requests sent so far
	Done         int // requests finished, completed or failed
	Failed       int
	OutputTokens int // output tokens of completed requests
	Elapsed      time.Duration
}

// RequestThroughput is completed requests per second so far.
func (p Progress) RequestThroughput() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Done-p.Failed) / p.Elapsed.Seconds()
}

// OutputThroughput is output tokens per second so far.
func (p Progress) OutputThroughput() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.OutputTokens) / p.Elapsed.Seconds()
}

// Left estimates the time the load point has left: the elapsed time per
// finished request times the requests left; 0 before the first finishes
// and once all have.
func (p Progress) Left() time.Duration {
	if p.Done <= 0 || p.Done >= p.Total {
		return 0
	}
	return time.Duration(float64(p.Elapsed) * float64(p.Total-p.Done) / float64(p.Done))
}

// Run offers one load point to the server and measures it. progress, when
// not nil, is called after each finished request from a single goroutine.
//
// When ctx is cancelled Run stops sending, cuts off requests in flight, and
// returns the result of what finished, marked Partial, together with ctx's
// error. Failed requests never stop the run; they are counted in the result.
func Run(ctx context.Context, opts Options, progress func(Progress)) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.Dataset, _ = datasets.Check(opts.Dataset) // its canonical name, for the result
	n := opts.NumPrompts
	inputs, outputs := opts.lengths()
	bodies := requestBodies(&opts, inputs, outputs)
	due := Schedule(opts.Load, n, opts.Seed)
	client := opts.Client
	if client == nil {
		client = NewClient(opts.connections())
	}
	url := opts.requestURL()
	date := time.Now().Format("20060102-150405")

	outcomes := make([]outcome, n)
	finished := make(chan int, n)
	var (
		wg        sync.WaitGroup
		sentMu    sync.Mutex
		sentSoFar int
	)
	t0 := time.Now()
	do := func(i int) {
		if ctx.Err() == nil {
			sentMu.Lock()
			sentSoFar++
			sentMu.Unlock()
		}
		outcomes[i] = send(ctx, client, &opts, url, bodies[i], t0)
		outcomes[i].end = time.Since(t0).Seconds()
		finished <- i
	}

	if opts.Load.Kind == model.ClosedLoop {
		// Concurrency clients take prompts in order: vLLM's semaphore over a burst.
		next := make(chan int)
		go func() {
			defer close(next)
			for i := range n {
				select {
				case next <- i:
				case <-ctx.Done():
					return
				}
			}
		}()
		for range opts.Load.Concurrency {
			wg.Go(func() {
				for i := range next {
					do(i)
				}
			})
		}
	} else {
		// Open loop and burst: each request is released at its due time and,
		// under a concurrency cap, waits for a free slot (FIFO) before sending.
		var slots chan struct{}
		if opts.Load.Concurrency > 0 {
			slots = make(chan struct{}, opts.Load.Concurrency)
		}
		wg.Go(func() {
			timer := time.NewTimer(0)
			defer timer.Stop()
			for i := range n {
				if wait := time.Until(t0.Add(due[i])); wait > 0 {
					timer.Reset(wait)
					select {
					case <-timer.C:
					case <-ctx.Done():
						return
					}
				} else if ctx.Err() != nil {
					return
				}
				wg.Go(func() {
					if slots != nil {
						select {
						case slots <- struct{}{}:
							defer func() { <-slots }()
						case <-ctx.Done():
							finished <- i
							return
						}
					}
					do(i)
				})
			}
		})
	}
	go func() {
		wg.Wait()
		close(finished)
	}()

	p := Progress{Load: opts.Load, Total: n}
	var duration float64 // to the last request's end, as vLLM's gather of every request
	for i := range finished {
		o := &outcomes[i]
		if !o.sent {
			continue
		}
		duration = max(duration, o.end)
		if o.reason == reasonCanceled {
			continue
		}
		p.Done++
		if o.reason != "" {
			p.Failed++
		} else {
			p.OutputTokens += o.outputTokens
		}
		if progress != nil {
			sentMu.Lock()
			p.Sent = sentSoFar
			sentMu.Unlock()
			p.Elapsed = time.Since(t0)
			progress(p)
		}
	}
	r := summarize(&opts, inputs, outputs, outcomes, due, duration)
	r.Date = date
	if err := ctx.Err(); err != nil {
		r.Partial = true
		return r, err
	}
	return r, nil
}

// summarize turns per-request outcomes into a Result the way vLLM's
// calculate_metrics does; inputs and outputs are the lengths each request
// asked for.
func summarize(o *Options, inputs, outputs []int, outcomes []outcome, due []time.Duration, duration float64) *Result {
	r := &Result{
		Backend:           "openai",
		ModelID:           o.Model,
		NumPrompts:        o.NumPrompts,
		RequestRate:       o.Load.Rate,
		Burstiness:        o.Load.Burstiness,
		MaxConcurrency:    o.Load.Concurrency,
		Duration:          duration,
		Load:              o.Load,
		Endpoint:          o.endpoint(),
		ISL:               o.ISL,
		OSL:               o.OSL,
		Dataset:           o.Dataset,
		Seed:              o.Seed,
		InputLengthsExact: o.endpoint() == Completions,
		Failures:          map[string]int{},
		InputLens:         []int{},
		OutputLens:        []int{},
		TTFTs:             []float64{},
		ITLs:              [][]float64{},
		Latencies:         []float64{},
		StartTimes:        []float64{},
		QueueTimes:        []float64{},
		Errors:            []string{},
	}
	if o.endpoint() == Chat {
		r.Backend = "openai-chat"
	}
	if o.Load.Kind != model.OpenLoop {
		r.RequestRate = math.Inf(1)
	}
	if r.Burstiness == 0 {
		r.Burstiness = 1
	}
	var ttfts, tpots, itls, e2els, delays, queues, e2elsQueued []float64
	var done []*outcome
	for i := range outcomes {
		out := &outcomes[i]
		if !out.sent {
			continue
		}
		if o.Load.Kind != model.ClosedLoop {
			delays = append(delays, out.start-due[i].Seconds())
		}
		if out.reason == reasonCanceled {
			r.Canceled++
			continue
		}
		itl := out.itl
		if itl == nil {
			itl = []float64{}
		}
		// vLLM's client queue time: from the request's arrival (its due time
		// in an open loop; the start of the load point in a closed loop or a
		// burst, where vLLM creates every request at once) to its send.
		arrival := 0.0
		if o.Load.Kind == model.OpenLoop {
			arrival = due[i].Seconds()
		}
		queue := max(out.start-arrival, 0)
		r.StartTimes = append(r.StartTimes, out.start)
		r.QueueTimes = append(r.QueueTimes, queue)
		r.TTFTs = append(r.TTFTs, out.ttft)
		r.ITLs = append(r.ITLs, itl)
		r.Latencies = append(r.Latencies, out.latency)
		r.Errors = append(r.Errors, out.err)
		if out.reason != "" {
			r.Failed++
			r.Failures[out.reason]++
			r.InputLens = append(r.InputLens, inputs[i])
			r.OutputLens = append(r.OutputLens, 0)
			continue
		}
		prompt := out.promptTokens
		if prompt == 0 {
			prompt = inputs[i] // the server did not say; vLLM keeps the requested length
		} else if r.InputLengthsExact && prompt != inputs[i] {
			r.PromptTokenMismatches++
		}
		if out.outputTokens != outputs[i] {
			r.OutputTokenMismatches++
		}
		r.Completed++
		r.InputLens = append(r.InputLens, prompt)
		r.OutputLens = append(r.OutputLens, out.outputTokens)
		r.TotalInputTokens += prompt
		r.TotalOutputTokens += out.outputTokens
		if out.outputTokens > 1 {
			tpots = append(tpots, (out.latency-out.ttft)/float64(out.outputTokens-1))
		}
		ttfts = append(ttfts, out.ttft)
		itls = append(itls, out.itl...)
		e2els = append(e2els, out.latency)
		queues = append(queues, queue)
		e2elsQueued = append(e2elsQueued, out.latency+queue)
		done = append(done, out)
	}
	if duration > 0 {
		r.RequestThroughput = float64(r.Completed) / duration
		r.OutputThroughput = float64(r.TotalOutputTokens) / duration
		r.TotalTokenThroughput = float64(r.TotalInputTokens+r.TotalOutputTokens) / duration
	}
	r.TTFT, r.TPOT, r.ITL, r.E2EL = Summarize(ttfts), Summarize(tpots), Summarize(itls), Summarize(e2els)
	r.MaxOutputTokensPerS, r.MaxConcurrentRequests = peaks(done)
	if o.Load.Concurrency > 0 { // vLLM writes these only with --max-concurrency
		q := Summarize(queues)
		r.ClientQueue = &q
		if o.Load.Kind == model.OpenLoop {
			e := Summarize(e2elsQueued)
			r.E2ELInclQueue = &e
		}
	}
	if o.Load.Kind != model.ClosedLoop && len(delays) > 0 {
		s := Summarize(delays)
		maxDelay := delays[0]
		for _, d := range delays {
			maxDelay = max(maxDelay, d)
		}
		r.ScheduleDelay = &DelaySummary{Mean: s.Mean, P50: s.Median, P99: s.P99, Max: maxDelay * 1000}
	}
	return r
}

// peaks computes vLLM's max_output_tokens_per_s (text chunks counted in
// one-second buckets from the first send) and max_concurrent_requests
// (a sweep over the completed requests' [start, end) intervals).
func peaks(done []*outcome) (float64, int) {
	if len(done) == 0 {
		return 0, 0
	}
	first := done[0].start
	lastEnd := 0.0
	for _, o := range done {
		first = min(first, o.start)
		lastEnd = max(lastEnd, o.start+o.latency)
	}
	buckets := make([]float64, int(math.Ceil(lastEnd-first))+1)
	type event struct {
		t     float64
		delta int
	}
	events := make([]event, 0, 2*len(done))
	for _, o := range done {
		t := o.start + o.ttft
		if b := int(t - first); b >= 0 && b < len(buckets) {
			buckets[b]++
		}
		for _, gap := range o.itl {
			t += gap
			if b := int(t - first); b >= 0 && b < len(buckets) {
				buckets[b]++
			}
		}
		events = append(events, event{o.start, 1}, event{o.start + o.latency, -1})
	}
	sort.Slice(events, func(i, j int) bool {
		if events[i].t != events[j].t {
			return events[i].t < events[j].t
		}
		return events[i].delta < events[j].delta
	})
	peakTokens := 0.0
	for _, b := range buckets {
		peakTokens = max(peakTokens, b)
	}
	cur, peak := 0, 0
	for _, e := range events {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peakTokens, peak
}

// Check sends one request of the load point's shape and returns an error
// naming the failure if it does not complete, like vLLM's initial test
// prompt: a wrong URL, model name or key then fails fast instead of
// producing a load point of failures.
func Check(ctx context.Context, opts Options) error {
	opts.NumPrompts = 1
	opts.Load = model.Closed(1)
	if err := opts.Validate(); err != nil {
		return err
	}
	client := opts.Client
	if client == nil {
		client = NewClient(1)
	}
	inputs, outputs := opts.lengths()
	out := send(ctx, client, &opts, opts.requestURL(), requestBodies(&opts, inputs, outputs)[0], time.Now())
	if err := ctx.Err(); err != nil {
		return err
	}
	if out.reason != "" {
		return fmt.Errorf("loadgen: test request to %s failed (%s): %s", RedactURL(opts.requestURL()), out.reason, out.err)
	}
	return nil
}
