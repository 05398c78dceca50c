package sim

const (
	evArrival  uint8 = iota // an open-loop request arrives
	evPrefill               // a prefill worker's step ends
	evFrontend              // the oldest request in the API server reaches the engine
)

type event struct {
	t    float64
	seq  uint64 // insertion order; breaks ties in t deterministically
	idx  int32
	kind uint8
}

func (a *event) before(b *event) bool {
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

// eventHeap is a binary min-heap ordered by (t, seq).
type eventHeap struct{ h []event }

func (q *eventHeap) Len() int { return len(q.h) }

func (q *eventHeap) top() *event { return &q.h[0] }

func (q *eventHeap) push(e event) {
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].before(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *eventHeap) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h[n] = event{}
	q.h = q.h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.h[r].before(&q.h[l]) {
			m = r
		}
		if !q.h[m].before(&q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}

// finHeap is a min-heap of decoding requests by (fin, admit), keys held
// inline. A request does not track its index: the decode set loses its
// top as requests finish, and only a preempted one (found by a scan of
// the set, latest) is searched for; keeping every index up to date was
// a write to a request at each level of every sift.
type finHeap []finEntry

type finEntry struct {
	fin   int64
	admit uint64
	r     *request
}

func (a *finEntry) less(b *finEntry) bool {
	return a.fin < b.fin || (a.fin == b.fin && a.admit < b.admit)
}

// lessBit is a.less(b) as 0 or 1, computed without branches: which child
// is the smaller is a coin toss the branch predictor loses half the time.
func lessBit(a, b *finEntry) int {
	var lt, eq, alt int
	if a.fin < b.fin {
		lt = 1
	}
	if a.fin == b.fin {
		eq = 1
	}
	if a.admit < b.admit {
		alt = 1
	}
	return lt | eq&alt
}

func (h *finHeap) push(r *request) {
	*h = append(*h, finEntry{r.fin, r.admit, r})
	r.decoding = true
	h.up(len(*h) - 1)
}

func (h finHeap) up(i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !x.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

func (h finHeap) down(i int) {
	n := len(h)
	x := h[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].less(&h[l]) {
			m = r
		}
		if !h[m].less(&x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}

// popMin takes the minimum out: Floyd's bottom-up deletion. The hole
// left at the root moves down to a leaf along the smaller children (one
// comparison a level), then the last entry moves up from it. The last
// entry is a leaf's, so it usually belongs near the bottom: a sift down
// from the root would compare it at every level as well. With distinct
// keys both end with the same array (its place on the path of smaller
// children is the one between its neighbours' keys), so scans of the set
// (the inter-token gaps' sums) see the same order.
func (h *finHeap) popMin() {
	old := *h
	n := len(old) - 1
	x := old[n]
	old[n] = finEntry{}
	q := old[:n]
	*h = q
	if n == 0 {
		return
	}
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if l+1 < n {
			m += lessBit(&q[l+1], &q[l])
		}
		q[i] = q[m]
		i = m
	}
	q[i] = x
	q.up(i)
}

// remove takes r out of the heap.
func (h *finHeap) remove(r *request) {
	old := *h
	if old[0].r == r { // a finished request, the common case
		h.popMin()
		r.decoding = false
		return
	}
	i := 1
	for old[i].r != r {
		i++
	}
	n := len(old) - 1
	if i != n {
		old[i] = old[n]
	}
	old[n] = finEntry{}
	*h = old[:n]
	if i != n {
		h.down(i)
		h.up(i)
	}
	r.decoding = false
}

// engineHeap orders the engines by their next event (t, seq). Each engine
// has at most one pending event, moved in place when a run of steps is cut
// short, so no stale events accumulate.
type engineHeap []*engine

func engBefore(a, b *engine) bool {
	return a.nextT < b.nextT || (a.nextT == b.nextT && a.nextSeq < b.nextSeq)
}

func (h engineHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hpos, h[j].hpos = i, j
}

func (h engineHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !engBefore(h[i], h[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h engineHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && engBefore(h[r], h[l]) {
			m = r
		}
		if !engBefore(h[m], h[i]) {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// schedule sets e's next event to t (a new sequence number), adding or moving it.
func (s *simulator) schedule(e *engine, t float64) {
	if !s.timeOK(t) {
		return
	}
	s.seq++
	e.nextT, e.nextSeq = t, s.seq
	h := &s.engineEvents
	if e.hpos < 0 {
		*h = append(*h, e)
		e.hpos = len(*h) - 1
		h.up(e.hpos)
		return
	}
	h.down(e.hpos)
	h.up(e.hpos)
}

// remove takes e out of the heap.
func (h *engineHeap) remove(e *engine) {
	old := *h
	i, n := e.hpos, len(old)-1
	old.swap(i, n)
	old[n] = nil
	*h = old[:n]
	if i < n {
		h.down(i)
		h.up(i)
	}
	e.hpos = -1
}

// inboundHeap holds KV transfers in flight to one engine, by (t, seq).
type inboundHeap []inboundEntry

type inboundEntry struct {
	t   float64
	seq uint64
	r   *request
}

func (a *inboundEntry) before(b *inboundEntry) bool {
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

func (h *inboundHeap) push(x inboundEntry) {
	*h = append(*h, x)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q[i].before(&q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *inboundHeap) pop() inboundEntry {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q[n] = inboundEntry{}
	q = q[:n]
	*h = q
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q[r].before(&q[l]) {
			m = r
		}
		if !q[m].before(&q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	return top
}
