package plan

import (
	"context"
	"sort"

	"github.com/capsim/capsim/internal/parallel"
	"github.com/capsim/capsim/sim"
)

// Frontier sweep: the cost cutoff leaves only the cheapest deployments
// simulated, which would make the Pareto frontier a stub. For each
// deployment shape, the best-balanced candidate (highest capacity bound)
// at up to sweepPerShape GPU counts, spaced at least sweepGrowth apart, is
// simulated too, so the frontier spans small to large deployments.
const (
	sweepPerShape = 6
	sweepGrowth   = 1.5
)

func (s *search) sweep(ctx context.Context) error {
	o := s.opts
	if o.NoSweep {
		return nil
	}
	// The best-bound costlier candidate per shape and GPU count.
	type key struct {
		t    *template
		gpus int
	}
	best := map[key]*candidate{}
	var keys []key
	for _, c := range s.cands {
		if c.state != stateCostlier {
			continue
		}
		k := key{c.t, c.gpus}
		if b, ok := best[k]; !ok {
			best[k] = c
			keys = append(keys, k)
		} else if c.bound > b.bound {
			best[k] = c
		}
	}
	byShape := map[*template][]int{}
	var shapes []*template
	for _, k := range keys {
		if _, ok := byShape[k.t]; !ok {
			shapes = append(shapes, k.t)
		}
		byShape[k.t] = append(byShape[k.t], k.gpus)
	}
	var picks []*candidate
	for _, t := range shapes {
		counts := byShape[t]
		sort.Ints(counts)
		last := 0
		n := 0
		for _, g := range counts {
			if n == sweepPerShape {
				break
			}
			if last == 0 || float64(g) >= float64(last)*sweepGrowth {
				picks = append(picks, best[key{t, g}])
				last = g
				n++
			}
		}
	}
	s.done = 0
	errs, err := s.steadyEach(ctx, picks, o, func(c *candidate, r *sim.Result) {
		c.sweep, c.metrics, c.pools, c.steady = true, r.Metrics, r.Pools, r.Steady
		c.misses, c.ok, c.saturated = s.verdict(r)
		s.mu.Lock()
		s.progress("frontier", len(picks))
		s.mu.Unlock()
	})
	if err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	s.res.Search.FrontierRuns = len(picks)
	s.res.Search.Simulations = s.sims
	return nil
}

// steadyEach runs one steady-state simulation of each candidate at the
// plan's load, concurrently, and hands each result to use; errs holds a
// candidate's own failure, err the search's (its context).
func (s *search) steadyEach(ctx context.Context, picks []*candidate, o Options, use func(*candidate, *sim.Result)) (errs []error, err error) {
	errs = make([]error, len(picks))
	err = parallel.ForEach(ctx, len(picks), o.Workers, func(i int) {
		d, err := picks[i].deployment()
		if err != nil {
			errs[i] = err
			return
		}
		r, err := s.steadyOnce(ctx, d, o.Workload.Load)
		if err != nil {
			errs[i] = err
			return
		}
		use(picks[i], r)
	})
	return errs, err
}
