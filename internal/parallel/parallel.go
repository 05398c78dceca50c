package parallel

import (
	"context"
	"sync"
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
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
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
