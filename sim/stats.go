package sim

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/capsim/capsim/internal/stats"
)

// exactLimit is how many distinct (value, weight) entries a distribution
// keeps exactly before it folds them into a log histogram. Below it every
// statistic equals numpy's on the expanded samples; above it percentiles
// carry a relative error below 2^-13 (mean and std stay exact up to
// floating-point rounding because they come from running sums).
const exactLimit = 1 << 12

// The histogram buckets positive float64 values by exponent and the top
// histMantBits bits of the mantissa (an HDR-style layout): bucket width is
// at most 2^-histMantBits of the value. Values below 2^histMinExp seconds
// share the first bucket, values above 2^histMaxExp the last.
const (
	histMantBits = 13
	histMinExp   = -30
	histMaxExp   = 30
	histOctave   = 1 << histMantBits
	histBuckets  = (histMaxExp - histMinExp) << histMantBits
)

// dist accumulates a latency distribution in seconds: running sums for the
// mean and std, exact weighted samples for percentiles while they are few,
// then a deterministic log histogram.
type dist struct {
	n      float64 // total weight (number of samples)
	shift  float64 // first value seen; sums are of (x − shift) for numerical stability
	sum    float64 // Σ w·(x − shift)
	sumSq  float64 // Σ w·(x − shift)²
	vals   []float64
	wts    []uint32
	hist   [][]uint64 // per octave, allocated on first use; nil while exact
	zeros  uint64     // samples ≤ 0 once in histogram mode
	anyVal bool
	// sumsOnly: no percentile of it is read (Config.Percentiles), so
	// only the sums are kept, no samples.
	sumsOnly bool
}

// add records value x with weight w (w identical samples).
func (d *dist) add(x float64, w int) {
	if w <= 0 {
		return
	}
	if !d.anyVal {
		d.shift, d.anyVal = x, true
	}
	fw := float64(w)
	y := x - d.shift
	d.n += fw
	d.sum += fw * y
	d.sumSq += fw * y * y
	if d.sumsOnly {
		return
	}
	if d.hist != nil {
		d.histAdd(x, uint64(w))
		return
	}
	if k := len(d.vals); k > 0 && d.vals[k-1] == x && uint64(d.wts[k-1])+uint64(w) <= math.MaxUint32 {
		d.wts[k-1] += uint32(w)
		return
	}
	d.vals = append(d.vals, x)
	d.wts = append(d.wts, uint32(w))
	if len(d.vals) >= exactLimit {
		d.fold()
	}
}

// addRun records the j values a, a+δ, …, a+(j−1)δ of a run of decode
// steps: the first with weight w0, the others with weight w. In exact mode
// each value is kept (a run that would overflow the exact samples folds
// first); in histogram mode sums are in closed form and each bucket the
// run touches takes one increment for all its values, exactly as adding
// them one by one would.
func (d *dist) addRun(a, delta float64, j int64, w0, w int) {
	if j <= 0 {
		return
	}
	d.add(a, w0)
	if j == 1 || w <= 0 {
		return
	}
	if d.hist == nil && delta >= 0 && len(d.vals)+int(min(j, exactLimit)) > exactLimit {
		d.fold()
	}
	if d.hist == nil || delta < 0 {
		for k := int64(1); k < j; k++ {
			d.add(a+float64(k)*delta, w)
		}
		return
	}
	// The j−1 values b + kδ, k = 0..m−1.
	b := a + delta
	m := float64(j - 1)
	fw := float64(w)
	y := b - d.shift
	sk := m * (m - 1) / 2              // Σk
	sk2 := (m - 1) * m * (2*m - 1) / 6 // Σk²
	d.n += fw * m
	d.sum += fw * (m*y + delta*sk)
	d.sumSq += fw * (m*y*y + 2*y*delta*sk + delta*delta*sk2)
	d.histAddRun(b, delta, j-1, uint64(w))
}

// histAddRun adds weight w at each of b + kδ, k = 0..m−1 (δ ≥ 0): the
// values rise with k, so each bucket holds a contiguous range of k, found
// from the bucket's upper edge and checked against histIndex itself.
func (d *dist) histAddRun(b, delta float64, m int64, w uint64) {
	v := func(k int64) float64 { return b + float64(k)*delta }
	// Decode step times change little within a run: usually one bucket.
	if i := histIndex(b); b > 0 && i == histIndex(v(m-1)) {
		d.histInc(i, w*uint64(m))
		return
	}
	for k := int64(0); k < m; {
		x := v(k)
		if x <= 0 || delta == 0 {
			if delta == 0 {
				d.histAdd(x, w*uint64(m-k))
				return
			}
			d.histAdd(x, w)
			k++
			continue
		}
		i := histIndex(x)
		end := m // first k past bucket i
		if i < histBuckets-1 {
			if up := histLower(i + 1); v(m-1) >= up {
				end = min(m, max(k+1, int64(math.Ceil((up-b)/delta))))
				for end > k+1 && histIndex(v(end-1)) != i {
					end--
				}
				for end < m && histIndex(v(end)) == i {
					end++
				}
			}
		}
		d.histInc(i, w*uint64(end-k))
		k = end
	}
}

// histLower is the smallest value of bucket i (0 < i < histBuckets).
func histLower(i int) float64 {
	e := i>>histMantBits + histMinExp
	m := i & (1<<histMantBits - 1)
	return math.Float64frombits(uint64(e+1023)<<52 | uint64(m)<<(52-histMantBits))
}

func (d *dist) fold() {
	d.hist = make([][]uint64, histMaxExp-histMinExp)
	for i, v := range d.vals {
		d.histAdd(v, uint64(d.wts[i]))
	}
	d.vals, d.wts = nil, nil
}

func histIndex(x float64) int {
	bits := math.Float64bits(x)
	e := int(bits>>52&0x7ff) - 1023
	if e < histMinExp {
		return 0
	}
	if e >= histMaxExp {
		return histBuckets - 1
	}
	return (e-histMinExp)<<histMantBits | int(bits>>(52-histMantBits)&(1<<histMantBits-1))
}

// histValue is the representative (middle) of bucket i.
func histValue(i int) float64 {
	e := i>>histMantBits + histMinExp
	m := i & (1<<histMantBits - 1)
	return math.Ldexp(1+(float64(m)+0.5)/(1<<histMantBits), e)
}

func (d *dist) histAdd(x float64, w uint64) {
	if x <= 0 {
		d.zeros += w
		return
	}
	d.histInc(histIndex(x), w)
}

func (d *dist) histInc(i int, w uint64) {
	o := d.hist[i>>histMantBits]
	if o == nil {
		if p, ok := octavePool.Get().(*[]uint64); ok {
			o = *p
		} else {
			o = make([]uint64, histOctave)
		}
		d.hist[i>>histMantBits] = o
	}
	o[i&(histOctave-1)] += w
}

// octavePool recycles histogram octaves (64 KiB each) between runs: a
// planner runs thousands of simulations, and allocating them anew was a
// large share of its garbage.
var octavePool sync.Pool

// release returns d's histogram octaves to octavePool, zeroed; d is empty after.
func (d *dist) release() {
	for _, o := range d.hist {
		if o != nil {
			clear(o)
			octavePool.Put(&o)
		}
	}
	*d = dist{}
}

func (d *dist) mean() float64 {
	if d.n == 0 {
		return 0
	}
	return d.shift + d.sum/d.n
}

// std is the population standard deviation (numpy's np.std default).
func (d *dist) std() float64 {
	if d.n == 0 {
		return 0
	}
	m := d.sum / d.n
	v := d.sumSq/d.n - m*m
	if v < 0 {
		v = 0
	}
	return math.Sqrt(v)
}

// expandLimit is the most samples percentiles expands weighted entries to.
const expandLimit = 1 << 14

// percentiles returns numpy's default (linear, type 7) percentiles for ps in [0, 100].
func (d *dist) percentiles(ps []float64) []float64 {
	out := make([]float64, len(ps))
	if d.n == 0 {
		return out
	}
	var at func(r float64) float64 // value of the r-th smallest sample, 0-based
	low := int(d.n)                // the lowest rank read
	for _, p := range ps {
		low = min(low, int((d.n-1)*p/100))
	}
	if k := int(d.n) - low; d.hist == nil && k >= 1 && k <= topLimit {
		// Only the top ranks (a fit's p99s): the k largest samples, not
		// all of them expanded and selected.
		top := d.largest(k)
		at = func(r float64) float64 { return top[min(int(r), int(d.n)-1)-low] }
	} else if d.hist == nil && d.n <= expandLimit {
		// Few samples (a fit's TTFTs, E2Es): the samples themselves, each
		// entry repeated by its weight, with only the ranks the
		// percentiles read put in place, several times faster than
		// sorting weighted entries.
		vs := make([]float64, 0, int(d.n))
		for i, v := range d.vals {
			for range d.wts[i] {
				vs = append(vs, v)
			}
		}
		var ranks []int
		for _, p := range ps {
			lo := int((d.n - 1) * p / 100)
			ranks = append(ranks, lo, min(lo+1, len(vs)-1))
		}
		selectRanks(vs, ranks)
		at = func(r float64) float64 { return vs[min(int(r), len(vs)-1)] }
	} else if d.hist == nil {
		type entry struct {
			v float64
			w uint32
		}
		es := make([]entry, len(d.vals))
		for i, v := range d.vals {
			es[i] = entry{v, d.wts[i]}
		}
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.v, b.v) })
		cum := make([]float64, len(es)) // cum[i] = weight of sorted entries 0..i
		c := 0.0
		for i, e := range es {
			c += float64(e.w)
			cum[i] = c
		}
		at = func(r float64) float64 {
			i := sort.Search(len(cum), func(i int) bool { return cum[i] > r })
			if i == len(cum) {
				i--
			}
			return es[i].v
		}
	} else {
		var idx []int
		var cum []float64
		c := float64(d.zeros)
		for oi, o := range d.hist {
			for i, h := range o {
				if h != 0 {
					c += float64(h)
					idx = append(idx, oi<<histMantBits|i)
					cum = append(cum, c)
				}
			}
		}
		zeros := float64(d.zeros)
		at = func(r float64) float64 {
			if r < zeros || len(idx) == 0 {
				return 0
			}
			i := sort.Search(len(cum), func(i int) bool { return cum[i] > r })
			if i == len(cum) {
				i--
			}
			return histValue(idx[i])
		}
	}
	for i, p := range ps {
		h := (d.n - 1) * p / 100
		lo := math.Floor(h)
		vlo := at(lo)
		frac := h - lo
		if frac == 0 || lo+1 > d.n-1 {
			out[i] = vlo
			continue
		}
		vhi := at(lo + 1)
		out[i] = vlo + (vhi-vlo)*frac
	}
	return out
}

// topLimit is the most samples percentiles keeps to read top ranks only.
const topLimit = 64

// largest is the k largest of d's exact samples, ascending: a min-heap of
// the largest seen, each entry's value pushed as many times as its weight
// while it beats the heap's least.
func (d *dist) largest(k int) []float64 {
	h := make([]float64, 0, k)
	for i, v := range d.vals {
		for w := d.wts[i]; w > 0; w-- {
			if len(h) < k {
				h = append(h, v)
				for j := len(h) - 1; j > 0 && h[j] < h[(j-1)/2]; j = (j - 1) / 2 {
					h[j], h[(j-1)/2] = h[(j-1)/2], h[j]
				}
				continue
			}
			if !(v > h[0]) {
				break // no more of this value beats the least
			}
			h[0] = v
			for j := 0; ; {
				m := 2*j + 1
				if m >= k {
					break
				}
				if m+1 < k && h[m+1] < h[m] {
					m++
				}
				if !(h[m] < h[j]) {
					break
				}
				h[j], h[m] = h[m], h[j]
				j = m
			}
		}
	}
	slices.Sort(h)
	return h
}

// selectRanks reorders vs so that vs[k] is its k-th smallest value for
// every k in ranks (0 ≤ k < len(vs)), as a sort would leave it: each rank
// in increasing order by selection in what lies above the one before.
func selectRanks(vs []float64, ranks []int) {
	slices.Sort(ranks)
	start := 0
	for _, k := range ranks {
		if k < start {
			continue // in place already
		}
		nthElement(vs[start:], k-start)
		start = k + 1
	}
}

// nthElement reorders a so that a[k] is its k-th smallest value, those
// before it no larger and those after no smaller: quickselect with a
// median-of-three pivot and a three-way partition, sorting a range that
// fails to shrink after many rounds.
func nthElement(a []float64, k int) {
	lo, hi := 0, len(a)-1
	for rounds := 0; hi > lo; rounds++ {
		if rounds > 64 {
			slices.Sort(a[lo : hi+1])
			return
		}
		x, y, z := a[lo], a[lo+(hi-lo)/2], a[hi]
		p := max(min(x, y), min(max(x, y), z))
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case a[i] < p:
				a[lt], a[i] = a[i], a[lt]
				lt++
				i++
			case a[i] > p:
				a[i], a[gt] = a[gt], a[i]
				gt--
			default:
				i++
			}
		}
		// a[lo:lt] < p, a[lt:gt+1] == p, a[gt+1:hi+1] > p
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return
		}
	}
}

// Percentile returns numpy's default percentile (linear interpolation,
// "type 7") of xs for p in [0, 100]; 0 for an empty slice. xs is not modified.
func Percentile(xs []float64, p float64) float64 { return stats.Percentile(xs, p) }
