package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/model"
)

func TestPercentileNumpy(t *testing.T) {
	// Values worked out with numpy's linear rule: h = (n−1)·p/100.
	cases := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 90, 3.7},
		{[]float64{15, 20, 35, 40, 50}, 40, 29},
		{[]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 99, 9.91},
		{[]float64{3, 1, 2}, 50, 2},
		{[]float64{5}, 99, 5},
		{[]float64{1, 2}, 0, 1},
		{[]float64{1, 2}, 100, 2},
		{nil, 50, 0},
	}
	for _, c := range cases {
		if got := Percentile(c.xs, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.xs, c.p, got, c.want)
		}
	}
}

func TestDistWeightedAndStd(t *testing.T) {
	var d dist
	d.add(1, 3)
	d.add(2, 1) // the samples 1, 1, 1, 2
	ps := d.percentiles([]float64{50, 90})
	if ps[0] != 1 || math.Abs(ps[1]-1.7) > 1e-12 {
		t.Errorf("weighted percentiles %v, want [1 1.7]", ps)
	}
	var e dist
	for _, x := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		e.add(x, 1)
	}
	if e.mean() != 5 || math.Abs(e.std()-2) > 1e-12 {
		t.Errorf("mean %v std %v, want 5 and 2 (np.std)", e.mean(), e.std())
	}
}

// Up to expandLimit samples take a plain sort of the samples, entries
// repeated by their weights; above it the weighted entries are sorted.
// Both give numpy's percentiles, ties and repeats included.
func TestDistExpandedNumpy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 7, 100, 625, 3000} {
		for _, maxW := range []int{1, 3, 40} {
			var d dist
			var xs []float64
			for range n {
				x := math.Round(r.Float64()*50) / 10 // ties, out of order
				w := 1 + r.IntN(maxW)
				for range w {
					xs = append(xs, x)
				}
				d.vals, d.wts = append(d.vals, x), append(d.wts, uint32(w)) // repeats as separate entries too
				d.n += float64(w)
			}
			ps := []float64{0, 50, 90, 95, 99, 100}
			got := d.percentiles(ps)
			for i, p := range ps {
				if want := Percentile(xs, p); math.Abs(got[i]-want) > 1e-12 {
					t.Errorf("n=%d weights ≤%d (%v samples): p%v = %v, want numpy's %v", n, maxW, d.n, p, got[i], want)
				}
			}
		}
	}
}

// selectRanks leaves at each asked rank what a sort leaves there, on
// random, sorted, reversed and constant input with many ties.
func TestSelectRanks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 5, 64, 1000} {
		random := make([]float64, n)
		for i := range random {
			random[i] = float64(r.IntN(max(1, n/8)))
		}
		sorted := slices.Sorted(slices.Values(random))
		reversed := slices.Clone(sorted)
		slices.Reverse(reversed)
		for name, in := range map[string][]float64{"random": random, "sorted": sorted, "reversed": reversed, "constant": make([]float64, n)} {
			want := slices.Sorted(slices.Values(in))
			ranks := []int{n / 2, min(n/2+1, n-1), n * 9 / 10, n - 1, 0}
			got := slices.Clone(in)
			selectRanks(got, slices.Clone(ranks))
			for _, k := range ranks {
				if got[k] != want[k] {
					t.Errorf("%s n=%d: rank %d is %v, want %v", name, n, k, got[k], want[k])
				}
			}
		}
	}
}

// Past exactLimit entries the distribution folds into the histogram:
// percentiles stay within the documented relative error.
func TestDistHistogramMode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var d dist
	var xs []float64
	for i := 0; i < 4*exactLimit; i++ {
		x := 0.01 + 0.02*r.Float64()
		if i%7 == 0 {
			x = 5 + r.ExpFloat64()
		}
		xs = append(xs, x)
		d.add(x, 1)
	}
	if d.hist == nil {
		t.Fatal("did not fold")
	}
	sort.Float64s(xs)
	ps := []float64{50, 90, 95, 99}
	got := d.percentiles(ps)
	for i, p := range ps {
		want := Percentile(xs, p)
		if math.Abs(got[i]-want)/want > 1.3e-4 {
			t.Errorf("p%v = %v, exact %v", p, got[i], want)
		}
	}
	var sum, sq float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	for _, x := range xs {
		sq += (x - mean) * (x - mean)
	}
	if !near(d.mean(), mean, 1e-9) || !near(d.std(), math.Sqrt(sq/float64(len(xs))), 1e-9) {
		t.Errorf("mean %v std %v, want %v %v", d.mean(), d.std(), mean, math.Sqrt(sq/float64(len(xs))))
	}
}

func TestGammaMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, shape := range []float64{0.3, 1, 2.5} {
		const n = 400000
		var s, s2 float64
		for i := 0; i < n; i++ {
			x := gamma(r, shape, 2)
			s += x
			s2 += x * x
		}
		m := s / n
		v := s2/n - m*m
		if math.Abs(m-2*shape)/(2*shape) > 0.01 || math.Abs(v-4*shape)/(4*shape) > 0.03 {
			t.Errorf("Gamma(%v, 2): mean %v var %v, want %v %v", shape, m, v, 2*shape, 4*shape)
		}
	}
}

func TestLengthDraws(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	cases := []struct {
		d         LengthDist
		mean, tol float64
		min, max  int
	}{
		{Fixed(128), 128, 0, 128, 128},
		{LengthDist{Kind: "uniform", Min: 10, Max: 20}, 15, 0.05, 10, 20},
		{LengthDist{Kind: "normal", Mean: 500, Std: 50}, 500, 1, 1, 1 << 30},
		{LengthDist{Kind: "lognormal", Mean: 1000, Std: 500}, 1000, 10, 1, 1 << 30},
		{LengthDist{Kind: "exponential", Mean: 300}, 300, 3, 1, 1 << 30},
		{LengthDist{Kind: "empirical", Values: []int{1, 2, 6}}, 3, 0.03, 1, 6},
		{LengthDist{Kind: "normal", Mean: 100, Std: 1000, Min: 50, Max: 150}, -1, 0, 50, 150},
	}
	for _, c := range cases {
		if err := c.d.validate("Input"); err != nil {
			t.Fatal(err)
		}
		const n = 100000
		s := 0.0
		src := lengthSource{dist: c.d, r: r}
		for i := 0; i < n; i++ {
			x := src.next()
			if x < c.min || x > c.max {
				t.Fatalf("%+v drew %d", c.d, x)
			}
			s += float64(x)
		}
		if c.mean >= 0 && math.Abs(s/n-c.mean) > c.tol {
			t.Errorf("%+v: mean %v, want %v", c.d, s/n, c.mean)
		}
	}
}

// An empirical distribution deals each value once per pass, in an order
// the seed decides: a burst as long as the sample sends the whole sample.
func TestEmpiricalDealsEachValueOncePerPass(t *testing.T) {
	values := []int{5, 1, 9, 9, 3, 700, 2}
	deal := func(seed uint64, n int) []int {
		src := lengthSource{dist: LengthDist{Kind: "empirical", Values: values}, r: rand.New(rand.NewPCG(seed, 1))}
		out := make([]int, n)
		for i := range out {
			out[i] = src.next()
		}
		return out
	}
	got := deal(3, 3*len(values))
	for pass := 0; pass < 3; pass++ {
		p := slices.Clone(got[pass*len(values) : (pass+1)*len(values)])
		slices.Sort(p)
		want := slices.Sorted(slices.Values(values))
		if !slices.Equal(p, want) {
			t.Errorf("pass %d dealt %v, want each of %v once", pass, got[pass*len(values):(pass+1)*len(values)], values)
		}
	}
	if slices.Equal(got[:len(values)], values) && slices.Equal(deal(4, len(values)), values) {
		t.Error("the deck is never shuffled")
	}
	if !slices.Equal(deal(3, 10), deal(3, 10)) {
		t.Error("the same seed dealt differently")
	}
	if want := 700; (LengthDist{Kind: "empirical", Values: values}).MaxLen() != want {
		t.Errorf("MaxLen %d, want %d", (LengthDist{Kind: "empirical", Values: values}).MaxLen(), want)
	}
}

// A simulated run deals its empirical lengths as datasets.Deal does on
// the shared streams, which is what capsim bench --dataset sends: request
// i of a simulation and of a measured run with the same seed have the same
// prompt and output lengths.
func TestEmpiricalLengthsAreTheLoadGeneratorsDeal(t *testing.T) {
	ins, outs := []int{30, 4, 17, 250, 9}, []int{5, 80, 12}
	for _, load := range []model.Load{model.Closed(3), model.Open(50, 1), model.Open(math.Inf(1), 1)} {
		const n, seed = 23, 11
		cfg := Config{Replicas: PoolConfig{Workers: 2, Cost: testCost{Overhead: 0.01}, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192}, Load: load,
			Input: LengthDist{Kind: "empirical", Values: ins}, Output: LengthDist{Kind: "empirical", Values: outs},
			NumPrompts: n, KeepRequests: true, Seed: seed}
		res := run(t, cfg)
		wantIn, wantOut := datasets.Deal(ins, n, seed, datasets.InputStream), datasets.Deal(outs, n, seed, datasets.OutputStream)
		if len(res.Requests) != n {
			t.Fatalf("%s: %d requests kept, want %d", load, len(res.Requests), n)
		}
		for _, r := range res.Requests {
			if r.InputTokens != wantIn[r.ID] || r.OutputTokens != wantOut[r.ID] {
				t.Errorf("%s: request %d is %d+%d tokens, the deal gives %d+%d", load, r.ID, r.InputTokens, r.OutputTokens, wantIn[r.ID], wantOut[r.ID])
			}
		}
	}
}

// addRun must equal adding each value of the run, in both modes.
func TestDistAddRun(t *testing.T) {
	for _, folded := range []bool{false, true} {
		var a, b dist
		if folded {
			a.fold()
			b.fold()
		}
		a.add(0.02, 1)
		b.add(0.02, 1)
		for r := 0; r < 50; r++ {
			start, delta := 0.015+float64(r)*1e-4, 1.3e-6*float64(r%4)
			j := int64(1 + r*37%200)
			a.addRun(start, delta, j, 3, 5)
			b.add(start, 3)
			for k := int64(1); k < j; k++ {
				b.add(start+float64(k)*delta, 5)
			}
		}
		if a.n != b.n || !near(a.mean(), b.mean(), 1e-12) || !near(a.std(), b.std(), 1e-6) {
			t.Errorf("folded %v: n %v/%v mean %v/%v std %v/%v", folded, a.n, b.n, a.mean(), b.mean(), a.std(), b.std())
		}
		ps := []float64{1, 50, 90, 95, 99}
		pa, pb := a.percentiles(ps), b.percentiles(ps)
		for i := range ps {
			if pa[i] != pb[i] {
				t.Errorf("folded %v: p%v %v vs %v", folded, ps[i], pa[i], pb[i])
			}
		}
	}
}

// Runs spanning many histogram buckets fill exactly the buckets that adding
// their values one by one fills, and a run that would overflow the exact
// samples folds first without changing any percentile's bucket.
func TestDistAddRunBucketed(t *testing.T) {
	var a, b dist
	a.fold()
	b.fold()
	for r := 0; r < 40; r++ {
		start := 1e-3 * float64(1+r%7)
		delta := []float64{0, 1e-9, 3.7e-7, 1e-5, 2.5e-4}[r%5]
		j := int64(1 + r*997%5000)
		a.addRun(start, delta, j, 2, 3)
		b.add(start, 2)
		for k := int64(0); k < j-1; k++ {
			b.add((start+delta)+float64(k)*delta, 3)
		}
	}
	for oi := range a.hist {
		for i := range a.hist[oi] {
			if a.hist[oi][i] != b.hist[oi][i] {
				t.Fatalf("octave %d bucket %d: %d by runs, %d one by one", oi, i, a.hist[oi][i], b.hist[oi][i])
			}
		}
		if (a.hist[oi] == nil) != (b.hist[oi] == nil) {
			t.Fatalf("octave %d allocated differently", oi)
		}
	}
	// Exact mode: a long run folds up front.
	var c dist
	c.add(0.5, 1)
	c.addRun(0.01, 1e-6, exactLimit+10, 1, 1)
	if c.hist == nil || c.n != exactLimit+11 {
		t.Errorf("long run in exact mode: hist %v, n %v", c.hist != nil, c.n)
	}
}

// MinLen and MaxLen bound every draw, and MinLen is reached where a
// distribution has a hard bottom.
func TestLengthBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		d        LengthDist
		min, max int
	}{
		{Fixed(128), 128, 128},
		{LengthDist{Kind: "uniform", Min: 10, Max: 20}, 10, 20},
		{LengthDist{Kind: "normal", Mean: 100, Std: 80, Min: 50, Max: 150}, 50, 150},
		{LengthDist{Kind: "lognormal", Mean: 10, Std: 30}, 1, -1},
		{LengthDist{Kind: "exponential", Mean: 40, Min: 1, Max: 400}, 1, 400},
		{LengthDist{Kind: "empirical", Values: []int{7, 3, 900}}, 3, 900},
		{LengthDist{Kind: "empirical"}, 1, 0}, // invalid, but no panic
	} {
		if got := c.d.MinLen(); got != c.min {
			t.Errorf("%+v: MinLen %d, want %d", c.d, got, c.min)
		}
		if got := c.d.MaxLen(); got != c.max {
			t.Errorf("%+v: MaxLen %d, want %d", c.d, got, c.max)
		}
		if len(c.d.Values) == 0 && c.d.Kind == "empirical" {
			continue
		}
		src := lengthSource{dist: c.d, r: r}
		lo := math.MaxInt
		for range 20000 {
			x := src.next()
			if x < c.d.MinLen() || (c.d.MaxLen() >= 0 && x > c.d.MaxLen()) {
				t.Fatalf("%+v drew %d outside %d..%d", c.d, x, c.d.MinLen(), c.d.MaxLen())
			}
			lo = min(lo, x)
		}
		if c.d.Kind != "lognormal" && lo != c.d.MinLen() {
			t.Errorf("%+v: smallest of 20000 draws %d, want MinLen %d", c.d, lo, c.d.MinLen())
		}
	}
}

// Percentiles that read only the top ranks (a fit's p99s) take the
// largest samples alone: the same values, to the bit, as selecting them
// among all, with ties, weights and a few samples or many.
func TestTopPercentilesAsSelected(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 3000 {
		var d dist
		n := 1 + rng.IntN(3000)
		for range n {
			x := float64(rng.IntN(1 + rng.IntN(200)))
			d.add(x/7, 1+rng.IntN(3))
		}
		p := []float64{99, 98, 100, 95}[trial%4]
		top := d.percentiles([]float64{p})
		all := d.percentiles([]float64{0, p})
		if k := int(d.n) - int((d.n-1)*p/100); k <= topLimit && math.Float64bits(top[0]) != math.Float64bits(all[1]) {
			t.Fatalf("trial %d, %v samples: p%v %v from the largest, %v selected among all", trial, d.n, p, top[0], all[1])
		}
	}
}

// A run's lengths (newLengthSource) are draw's, from the same stream.
func TestLengthSourceIsDraw(t *testing.T) {
	for _, d := range []LengthDist{Fixed(1500), {Kind: "fixed", Mean: 99.5}, {Kind: "uniform", Min: 100, Max: 300}, {Kind: "uniform", Min: 7, Max: 7},
		{Kind: "normal", Mean: 200, Std: 50, Min: 10, Max: 400}, {Kind: "exponential", Mean: 80}} {
		src := newLengthSource(d, rand.New(rand.NewPCG(3, 4)))
		r := rand.New(rand.NewPCG(3, 4))
		for i := range 1000 {
			if got, want := src.next(), d.draw(r); got != want {
				t.Fatalf("%+v, length %d: %d, draw %d", d, i, got, want)
			}
		}
	}
}
