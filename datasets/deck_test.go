package datasets

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A deck deals every value once per pass, reshuffled between passes, in an
// order only the seed and stream decide.
func TestDeckDealsEachValueOncePerPass(t *testing.T) {
	values := []int{5, 1, 9, 9, 3, 700, 2}
	keep := slices.Clone(values)
	for _, c := range []struct {
		seed, stream uint64
		n            int
	}{{1, InputStream, 3 * len(values)}, {2, OutputStream, 2*len(values) + 3}, {3, 7, 1}} {
		got := Deal(values, c.n, c.seed, c.stream)
		if len(got) != c.n {
			t.Fatalf("Deal(n=%d) gave %d values", c.n, len(got))
		}
		for p := 0; p*len(values) < c.n; p++ {
			pass := slices.Clone(got[p*len(values) : min(c.n, (p+1)*len(values))])
			if len(pass) < len(values) { // a partial pass: a subset, each value at most once
				want := slices.Clone(values)
				for _, v := range pass {
					i := slices.Index(want, v)
					if i < 0 {
						t.Errorf("seed %d: partial pass %v deals %d more often than the deck holds it", c.seed, pass, v)
						break
					}
					want = slices.Delete(want, i, i+1)
				}
				continue
			}
			slices.Sort(pass)
			if want := slices.Sorted(slices.Values(values)); !slices.Equal(pass, want) {
				t.Errorf("seed %d pass %d dealt %v, want each of %v once", c.seed, p, pass, values)
			}
		}
		if again := Deal(values, c.n, c.seed, c.stream); !slices.Equal(got, again) {
			t.Errorf("seed %d: %v, then %v with the same seed", c.seed, got, again)
		}
	}
	if !slices.Equal(values, keep) {
		t.Errorf("dealing changed the values to %v", values)
	}
	a, b := Deal(values, 3*len(values), 1, InputStream), Deal(values, 3*len(values), 1, OutputStream)
	if slices.Equal(a, b) {
		t.Error("the input and output streams deal the same order")
	}
	if first := a[:len(values)]; slices.Equal(first, a[len(values):2*len(values)]) && slices.Equal(first, a[2*len(values):]) {
		t.Error("the deck is not reshuffled between passes")
	}
}

// The deal is pinned: runs recorded with a seed (capsim bench
// --dataset) and the simulator's goldens depend on it. This is the order
// sim dealt before the deck moved here.
func TestDeckOrderIsPinned(t *testing.T) {
	got := Deal([]int{5, 1, 9, 9, 3, 700, 2}, 10, 7, InputStream)
	if want := []int{700, 9, 1, 5, 3, 9, 2, 5, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("Deal(seed 7, InputStream) = %v, want %v", got, want)
	}
	d := NewDeck([]int{5, 1, 9, 9, 3, 700, 2}, rand.New(rand.NewPCG(7, InputStream)))
	for i, w := range got {
		if v := d.Next(); v != w {
			t.Fatalf("Next %d = %d, Deal says %d", i, v, w)
		}
	}
}

func TestDeckEmptyPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "datasets: dealing from an empty deck" {
			t.Errorf("recovered %v", r)
		}
	}()
	NewDeck(nil, rand.New(rand.NewPCG(1, 1))).Next()
}

// A deck deals what shuffling each whole pass with r.Shuffle, then
// dealing it from its end, deals: over several passes, for decks of one
// card and many.
func TestDeckDealsShuffle(t *testing.T) {
	for _, n := range []int{1, 2, 7, 1000} {
		values := make([]int, n)
		for i := range values {
			values[i] = 3*i + 1
		}
		d := NewDeck(values, rand.New(rand.NewPCG(9, OutputStream)))
		r := rand.New(rand.NewPCG(9, OutputStream))
		var pass []int
		for k := range 3*n + 5 {
			if len(pass) == 0 {
				pass = append(pass, values...)
				r.Shuffle(len(pass), func(i, j int) { pass[i], pass[j] = pass[j], pass[i] })
			}
			want := pass[len(pass)-1]
			pass = pass[:len(pass)-1]
			if got := d.Next(); got != want {
				t.Fatalf("%d values, card %d: %d, want %d", n, k, got, want)
			}
		}
	}
}
