package sim

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/capsim/capsim/model"
)

// Mode says what a run measures.
type Mode string

const (
	// BenchmarkReplay reproduces a finite benchmark run exactly: NumPrompts
	// requests, from the empty system's ramp-up to the last completion's
	// drain, duration as vLLM counts it (first send to last completion).
	// Fitting, validation and fitted-against-measured plots use it. The
	// zero Mode means BenchmarkReplay.
	BenchmarkReplay Mode = "benchmark-replay"
	// SteadyState answers what a deployment does under a sustained load:
	// Warmup requests are sent and left out, the next NumPrompts are
	// measured, and the load keeps coming until the last measured request
	// completes, so no measured request sees the ramp-up or the drain.
	SteadyState Mode = "steady-state"
)

// CriticalUtilisation is the share of the window a pool is busy, with
// requests waiting for it, from which an open loop is near-critical
// (Steady.NearCritical).
const CriticalUtilisation = 0.97

// Steady-state measurement constants: batches for the batch-means
// confidence interval of each mean, and the saturation test.
const (
	steadyBatches = 20
	// t quantile (0.975, 19 degrees of freedom): a 95% two-sided interval.
	steadyT = 2.093
	// An open loop is saturated when requests complete at less than this
	// share of the rate they arrive at during the measurement window.
	saturatedShare = 0.97
	// minStopBacklog is the least growth of its backlog over the window
	// (arrivals less completions) at which a steady open loop stops
	// arriving (Steady.ArrivalsStopped), whatever its measured count.
	minStopBacklog = 20000
)

// Steady describes a steady-state run (Result.Steady).
type Steady struct {
	Warmup   int `json:"warmup"`   // requests sent before the measured ones, left out
	Measured int `json:"measured"` // requests measured
	// Start is when the first measured request was sent, End when the last
	// one completed (seconds of simulated time); throughputs and pool
	// statistics are over End − Start.
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// OfferedRate is the requests per second that arrived (open loop) or
	// were sent (closed loop) during the window; AchievedRate those that
	// completed.
	OfferedRate  float64 `json:"offered_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	// Saturated is true when an open loop's requests completed at less
	// than 97% of the rate they arrived: the queue grows without bound and
	// the latencies depend on how long one looks.
	Saturated bool `json:"saturated"`
	// ArrivalsStopped is true when an overloaded open loop stopped
	// arriving before its last measured request completed: once every
	// measured request has been sent and the backlog has grown since the
	// window opened by more than twice the measured count (at least
	// 20,000), later arrivals would queue behind the measured ones for
	// nothing but time and memory (an overloaded rate once grew the queue
	// to millions of requests and 23 GiB). The offered rate is then over
	// the window's arrivals only, and such a run fails the saturation test.
	ArrivalsStopped bool `json:"arrivals_stopped,omitempty"`
	// NearCritical is true when an open loop keeps up but one of its pools
	// is busy at least 97% of the window with a request or more waiting on
	// average. Such a queue is stable but relaxes so slowly (on the order
	// of 1/(1−ρ)² services) that its p99 keeps growing with the length of
	// the run, and the two halves of a run can agree while a longer one
	// does not: its tail latencies are not settled by any run length.
	NearCritical bool `json:"near_critical,omitempty"`
	// RelError is, per metric, the relative uncertainty of its estimate:
	// for means the half-width of a 95% batch-means confidence interval
	// (20 batches of measured requests in send order) over the mean; for
	// p99s half the difference between the p99s of the first and second
	// half of the measured requests, over the p99.
	RelError map[string]float64 `json:"rel_error"`
	// Runs is how many runs Converge made (1 for a single Run); Converged
	// says whether the last one met the tolerances.
	Runs      int  `json:"runs,omitempty"`
	Converged bool `json:"converged"`
}

// steadyMetrics are the statistics whose stability a steady run tracks.
var steadyMeans = []string{"ttft", "tpot", "e2el"}

// steadyState is a simulator's steady-state bookkeeping.
type steadyState struct {
	warm, n  int // warm-up requests; measured requests
	measured int // measured requests completed
	on       bool
	start    float64
	end      float64
	offered  int // arrivals (open loop) or sends (closed loop) in the window
	// stopped is when a saturated open loop stopped arriving (0: never).
	stopped  float64
	achieved int // completions in the window
	// snapshots at the window's start
	inflightArea0 float64
	pools0        []poolMon
	frontend0     poolMon // the API servers' (simulator.frontendMon), when simulated
	// batch sums of the means (steadyBatches per family) and the halves' distributions
	bsum   [3][steadyBatches]float64
	bcnt   [3][steadyBatches]float64
	halves [3][2]dist
}

// DefaultWarmup is the warm-up a steady-state run of n measured requests
// uses when Config.Warmup is 0: a quarter of n, at least 100 and at least
// four times the concurrency cap, so the measured requests start once
// batches and queues have filled.
func DefaultWarmup(n int, l model.Load) int {
	return max(100, n/4, 4*l.Concurrency)
}

// startWindow opens the measurement window at t: the first measured request is being sent.
func (s *simulator) startWindow(t float64) {
	st := s.steady
	st.on, st.start = true, t
	s.itlOn = !s.cfg.NoITL
	s.inflightArea += float64(s.inflight) * (t - s.inflightT)
	s.inflightT = t
	st.inflightArea0 = s.inflightArea
	for _, p := range s.pools {
		p.queueAdd(t, 0)
		p.kvTouch(t)
		st.pools0 = append(st.pools0, *p)
	}
	if s.frontendMon != nil {
		st.frontend0 = *s.frontendMon
	}
}

// measure records a completed measured request (k-th in send order).
func (st *steadyState) measure(k int, vals [3]float64, has [3]bool) {
	b := k * steadyBatches / st.n
	h := k * 2 / st.n
	for f := range vals {
		if !has[f] {
			continue
		}
		st.bsum[f][b] += vals[f]
		st.bcnt[f][b]++
		st.halves[f][h].add(vals[f], 1)
	}
}

// steadyResult fills the window's throughputs, pool statistics and errors.
func (s *simulator) steadyResult(res *Result) {
	st := s.steady
	dur := st.end - st.start
	m := res.Metrics
	out := &Steady{Warmup: st.warm, Measured: st.n, Start: st.start, End: st.end, Runs: 1, RelError: map[string]float64{}}
	m[model.Duration] = dur
	res.Duration = dur
	if dur > 0 {
		out.OfferedRate = float64(st.offered) / dur
		if st.stopped > st.start {
			out.OfferedRate = float64(st.offered) / (st.stopped - st.start)
			out.ArrivalsStopped = true
		}
		out.AchievedRate = float64(st.achieved) / dur
		m[model.RequestThroughput] = out.AchievedRate
		m[model.OutputThroughput] = float64(s.windowOut) / dur
		m[model.TotalTokenThroughput] = float64(s.windowIn+s.windowOut) / dur
		s.inflightArea += float64(s.inflight) * (st.end - s.inflightT)
		res.MeanInFlight = (s.inflightArea - st.inflightArea0) / dur
	}
	out.Saturated = s.cfg.Load.Kind != model.ClosedLoop && out.AchievedRate < saturatedShare*out.OfferedRate
	for f, fam := range steadyMeans {
		mean := m[model.MetricName("mean", fam)] / 1000
		if mean > 0 {
			var bm []float64
			for b := range steadyBatches {
				if st.bcnt[f][b] > 0 {
					bm = append(bm, st.bsum[f][b]/st.bcnt[f][b])
				}
			}
			if len(bm) >= 2 {
				_, sd := meanStd(bm)
				out.RelError[model.MetricName("mean", fam)] = steadyT * sd / math.Sqrt(float64(len(bm))) / mean
			}
		}
		p99 := m[model.MetricName("p99", fam)] / 1000
		if p99 > 0 && st.halves[f][0].n > 0 && st.halves[f][1].n > 0 {
			a := st.halves[f][0].percentiles([]float64{99})[0]
			b := st.halves[f][1].percentiles([]float64{99})[0]
			out.RelError[model.MetricName("p99", fam)] = math.Abs(a-b) / 2 / p99
		}
	}
	res.Pools = res.Pools[:0]
	pools, pools0 := s.pools, st.pools0
	if s.frontendMon != nil {
		pools, pools0 = append(slices.Clip(pools), s.frontendMon), append(slices.Clip(pools0), st.frontend0)
	}
	for i, p := range pools {
		p.queueAdd(st.end, 0)
		p.kvTouch(st.end)
		p0 := pools0[i]
		w := *p
		w.busy -= p0.busy
		w.batchArea -= p0.batchArea
		w.queueArea -= p0.queueArea
		w.kvArea -= p0.kvArea
		w.preemptions -= p0.preemptions
		ps := w.windowStats(dur)
		if p == s.frontendMon {
			ps = s.frontendStats(w, st.end, dur)
		}
		res.Pools = append(res.Pools, ps)
		out.NearCritical = out.NearCritical || nearCritical(s.cfg.Load.Kind, ps)
	}
	res.Steady = out
}

// nearCritical reports whether a pool of an open loop is busy nearly all
// the time with requests waiting for it (Steady.NearCritical). A closed
// loop's queue is bounded by its clients, so it never is.
func nearCritical(kind model.LoadKind, ps PoolStats) bool {
	return kind != model.ClosedLoop && ps.Utilisation >= CriticalUtilisation && ps.MeanQueue >= 1
}

// meanStd is the mean and sample standard deviation (n−1) of xs.
func meanStd(xs []float64) (float64, float64) {
	mu := 0.0
	for _, x := range xs {
		mu += x
	}
	mu /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - mu) * (x - mu)
	}
	return mu, math.Sqrt(v / float64(len(xs)-1))
}

// SteadyOptions bound Converge.
type SteadyOptions struct {
	// MeanTol is the largest relative 95% half-width accepted for the mean
	// TTFT, TPOT and E2E; 0 means 0.02.
	MeanTol float64
	// P99Tol is the largest relative uncertainty accepted for their p99s
	// (see Steady.RelError); 0 means 0.05.
	P99Tol float64
	// MaxPrompts caps the measured requests; 0 means 64,000.
	MaxPrompts int
	// Metrics, when set, are the only statistics (Steady.RelError keys,
	// e.g. "p99_tpot_ms") whose stability Converge waits for.
	Metrics []string
	// Decided, when set, ends Converge early: a caller that only needs a
	// verdict (an SLO met or missed by far more than the run's uncertainty)
	// returns true once the result settles it.
	Decided func(*Result) bool
}

func (o SteadyOptions) withDefaults() SteadyOptions {
	if o.MeanTol == 0 {
		o.MeanTol = 0.02
	}
	if o.P99Tol == 0 {
		o.P99Tol = 0.05
	}
	if o.MaxPrompts == 0 {
		o.MaxPrompts = 64_000
	}
	return o
}

// stable reports whether every tracked statistic is within its tolerance.
func (o SteadyOptions) stable(st *Steady) bool {
	for k, e := range st.RelError {
		if len(o.Metrics) > 0 && !slices.Contains(o.Metrics, k) {
			continue
		}
		tol := o.MeanTol
		if k[:3] == "p99" {
			tol = o.P99Tol
		}
		if e > tol {
			return false
		}
	}
	return true
}

// Converge runs cfg in steady state (whatever cfg.Mode says) with
// cfg.NumPrompts measured requests, and doubles them until every mean and
// p99 is stable within opts' tolerances (Steady.RelError), the run is
// saturated (more requests only make its latencies longer), or
// opts.MaxPrompts is reached. Steady.Runs and Steady.Converged say how it
// ended. run is the simulator (nil means Run), so callers can count or
// substitute runs; each run is deterministic, so the result is too.
func Converge(ctx context.Context, cfg Config, opts SteadyOptions, run func(context.Context, Config) (*Result, error)) (*Result, error) {
	if run == nil {
		run = Run
	}
	opts = opts.withDefaults()
	if cfg.NumPrompts <= 0 {
		return nil, fmt.Errorf("sim: Config.NumPrompts must be positive, got %d", cfg.NumPrompts)
	}
	cfg.Mode = SteadyState
	warm := cfg.Warmup
	for runs := 1; ; runs++ {
		if warm == 0 {
			cfg.Warmup = DefaultWarmup(cfg.NumPrompts, cfg.Load)
		}
		res, err := run(ctx, cfg)
		if err != nil {
			return nil, err
		}
		st := res.Steady
		if st == nil {
			// A substitute simulator that knows no steady state: take its word.
			return res, nil
		}
		st.Runs = runs
		st.Converged = opts.stable(st)
		if st.Converged || st.Saturated || cfg.NumPrompts >= opts.MaxPrompts || (opts.Decided != nil && opts.Decided(res)) {
			return res, nil
		}
		cfg.NumPrompts = min(2*cfg.NumPrompts, opts.MaxPrompts)
	}
}
