package parallel

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestForEachRunsEveryIndexOnce(t *testing.T) {
	tests := []struct {
		name       string
		n, workers int
	}{
		{"more jobs than workers", 100, 4},
		{"more workers than jobs", 3, 8},
		{"zero workers means one", 5, 0},
		{"no jobs", 0, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts := make([]int32, tt.n)
			var inFlight, most atomic.Int32
			err := ForEach(context.Background(), tt.n, tt.workers, func(i int) {
				now := inFlight.Add(1)
				for {
					m := most.Load()
					if now <= m || most.CompareAndSwap(m, now) {
						break
					}
				}
				atomic.AddInt32(&counts[i], 1)
				inFlight.Add(-1)
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range counts {
				if c != 1 {
					t.Errorf("index %d ran %d times", i, c)
				}
			}
			if limit := int32(max(1, tt.workers)); most.Load() > limit {
				t.Errorf("%d calls at once, want at most %d", most.Load(), limit)
			}
		})
	}
}

func TestForEachStopsWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	err := ForEach(ctx, 1000, 2, func(i int) {
		if ran.Add(1) == 10 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	// Two workers may each hold one more index when the cancel lands.
	if n := ran.Load(); n > 12 {
		t.Errorf("%d calls ran, want the dispatch to stop soon after the 10th", n)
	}
}

func ExampleForEach() {
	squares := make([]int, 5)
	_ = ForEach(context.Background(), len(squares), 2, func(i int) { squares[i] = i * i })
	fmt.Println(squares)
	// Output: [0 1 4 9 16]
}

func TestLimiterBoundsConcurrentCalls(t *testing.T) {
	l := NewLimiter(2)
	var inFlight, most atomic.Int32
	// Nested fan-out: 4 × 4 goroutines, never more than 2 inside Do.
	err := ForEach(context.Background(), 4, 4, func(int) {
		_ = ForEach(context.Background(), 4, 4, func(int) {
			_ = l.Do(context.Background(), func() {
				now := inFlight.Add(1)
				for {
					m := most.Load()
					if now <= m || most.CompareAndSwap(m, now) {
						break
					}
				}
				time.Sleep(time.Millisecond)
				inFlight.Add(-1)
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d calls ran at once, want 2", m)
	}
}

func TestLimiterDoneContextRunsNothing(t *testing.T) {
	l := NewLimiter(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	hold := make(chan struct{})
	go func() { _ = l.Do(context.Background(), func() { <-hold }) }()
	for len(l.slots) == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := l.Do(ctx, func() { ran = true }); !errors.Is(err, context.Canceled) || ran {
		t.Errorf("Do on a full limiter with a done context: err %v, ran %v; want context.Canceled, not run", err, ran)
	}
	close(hold)
}

// goroutineID is the calling goroutine's number, from its stack header.
func goroutineID() string {
	var b [64]byte
	s := string(b[:runtime.Stack(b[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	return s[:strings.IndexByte(s, ' ')]
}

// goroutineIDs are the numbers of every goroutine now.
func goroutineIDs() map[string]bool {
	b := make([]byte, 1<<20)
	ids := map[string]bool{}
	for _, l := range strings.Split(string(b[:runtime.Stack(b, true)]), "\n") {
		if s, ok := strings.CutPrefix(l, "goroutine "); ok {
			ids[s[:strings.IndexByte(s, ' ')]] = true
		}
	}
	return ids
}

// parked reports whether every goroutine of ids waits in worker's select
// for its next job.
func parked(ids map[string]bool) bool {
	b := make([]byte, 1<<20)
	n := 0
	for _, g := range strings.Split(string(b[:runtime.Stack(b, true)]), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		s, ok := strings.CutPrefix(head, "goroutine ")
		if !ok {
			continue
		}
		id, state, _ := strings.Cut(s, " ")
		if ids[id] && strings.HasPrefix(state, "[select") && strings.Contains(g, "parallel.worker(") {
			n++
		}
	}
	return n == len(ids)
}

// TestForEachReusesWorkers: a ForEach after another runs on goroutines
// left waiting, not on new ones.
func TestForEachReusesWorkers(t *testing.T) {
	ids := func() map[string]bool {
		var mu sync.Mutex
		seen := map[string]bool{}
		if err := ForEach(context.Background(), 2, 2, func(int) {
			mu.Lock()
			seen[goroutineID()] = true
			mu.Unlock()
			time.Sleep(time.Millisecond) // both workers take a job
		}); err != nil {
			t.Fatal(err)
		}
		return seen
	}
	first := ids()
	// The workers park in worker's select only after ForEach returns;
	// wait for that instead of sleeping, which a loaded CI machine can
	// outlast (a worker not yet parked makes spawn start a new one).
	for deadline := time.Now().Add(idleFor / 2); !parked(first); {
		if time.Now().After(deadline) {
			t.Fatalf("the first ForEach's workers %v did not park within %v", first, idleFor/2)
		}
		time.Sleep(100 * time.Microsecond)
	}
	before := goroutineIDs()
	for id := range ids() {
		if !before[id] {
			t.Errorf("second ForEach ran on new goroutine %s", id)
		}
	}
}
