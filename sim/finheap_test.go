package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// refFinHeap is the plain binary heap finHeap replaced: pop by moving
// the last entry to the root and sifting it down.
type refFinHeap []finEntry

func (h *refFinHeap) push(x finEntry) {
	*h = append(*h, x)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q[i].less(&q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *refFinHeap) fix(i int) {
	q := *h
	for { // down
		l := 2*i + 1
		if l >= len(q) {
			break
		}
		m := l
		if r := l + 1; r < len(q) && q[r].less(&q[l]) {
			m = r
		}
		if !q[m].less(&q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	for i > 0 { // up
		p := (i - 1) / 2
		if !q[i].less(&q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *refFinHeap) remove(r *request) {
	q := *h
	i := slices.IndexFunc(q, func(x finEntry) bool { return x.r == r })
	n := len(q) - 1
	q[i] = q[n]
	*h = q[:n]
	if i < n {
		h.fix(i)
	}
}

// TestFinHeapMatchesReference drives finHeap and the reference heap as the
// engine does (pushes with fin ≥ S, every entry below a growing S taken
// from the top, the odd arbitrary removal): the same requests leave in
// the same order, and the arrays stay identical, so scans of the decode
// set see the same order too.
func TestFinHeapMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 200 {
		var h finHeap
		var ref refFinHeap
		var admit uint64
		S := int64(0)
		span := int64(1 + rng.IntN(50)) // small spans: many equal fins
		for range 2000 {
			switch k := rng.IntN(10); {
			case k < 5 || len(h) == 0:
				r := &request{fin: S + rng.Int64N(span), admit: admit}
				admit++
				h.push(r)
				ref.push(finEntry{r.fin, r.admit, r})
			case k < 6:
				r := h[rng.IntN(len(h))].r
				h.remove(r)
				ref.remove(r)
				if r.decoding {
					t.Fatalf("trial %d: removed request still marked decoding", trial)
				}
			default:
				S += rng.Int64N(3)
				for len(h) > 0 && h[0].fin < S {
					r := h[0].r
					if ref[0].r != r {
						t.Fatalf("trial %d: top %v, reference %v", trial, h[0], ref[0])
					}
					h.remove(r)
					ref.remove(r)
				}
				if len(ref) > 0 && ref[0].fin < S {
					t.Fatalf("trial %d: reference keeps fin %d < S %d", trial, ref[0].fin, S)
				}
			}
			if !slices.Equal(h, finHeap(ref)) {
				t.Fatalf("trial %d: arrays differ\n got %v\nwant %v", trial, h, ref)
			}
		}
	}
}
