package parallel

import (
	"context"
	"sync"
	"time"
)

// ForEach calls fn(i) for every i in [0, n) on at most workers goroutines
// (at least one). It stops handing out indices once ctx is done, waits for
// the calls under way and returns ctx.Err(): nil when every index ran.
// fn must be safe to call concurrently for different i.
func ForEach(ctx context.Context, n, workers int, fn func(i int)) error {
	workers = max(1, min(workers, n))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		spawn(func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		})
	}
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return ctx.Err()
}

// Limiter bounds how many calls run at once across goroutines that nest
// ForEach calls (folds of groups of points): each level may fan out as
// wide as it likes while only the limiter's width does the work.
type Limiter struct{ slots chan struct{} }

// NewLimiter lets at most n calls (at least one) run at once.
func NewLimiter(n int) *Limiter { return &Limiter{slots: make(chan struct{}, max(1, n))} }

// Do runs fn once a slot is free, or returns ctx.Err() without running
// it if ctx is done first.
func (l *Limiter) Do(ctx context.Context, fn func()) error {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.slots }()
	fn()
	return nil
}

// handoff passes a job to a goroutine waiting after its last one: a fit
// calls ForEach for every evaluation of every group, and each new
// goroutine grew its stack again to a simulation's depth.
var handoff = make(chan func())

// idleFor is how long a goroutine waits for its next job before it ends.
const idleFor = time.Second

// spawn runs f on a waiting goroutine, or on a new one when none waits.
func spawn(f func()) {
	select {
	case handoff <- f:
	default:
		go worker(f)
	}
}

func worker(f func()) {
	t := time.NewTimer(idleFor)
	defer t.Stop()
	for {
		f()
		f = nil // let f's captures go while waiting
		t.Reset(idleFor)
		select {
		case f = <-handoff:
		case <-t.C:
			return
		}
	}
}
