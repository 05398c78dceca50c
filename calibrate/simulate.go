package calibrate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"

	"github.com/capsim/capsim/internal/parallel"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// Fits says, as an error naming the lengths, when a request of w cannot
// fit one worker's KV cache in d: the simulator would refuse the run
// (sim.PoolConfig.Holds and HoldsPrompt are its rules).
func (d Deployment) Fits(w workload.Workload) error {
	in, out := w.Longest()
	what := fmt.Sprintf("a %d+%d-token request", in, out)
	if w.Dataset == "" && out != w.OSL {
		what = fmt.Sprintf("a %d-token prompt with a %d-token output (the top of the outputs' ±%s spread around OSL %d)", in, out, workload.OutputSpreadText, w.OSL)
	}
	if w.Dataset != "" {
		what = fmt.Sprintf("the longest prompt plus the longest output of the %s dataset scaled to ISL %d / OSL %d (%d+%d tokens)", w.Dataset, w.ISL, w.OSL, in, out)
	}
	c := d.Config
	var worker string
	var capacity, windowTokens int
	switch {
	case d.Topology.Disaggregated() && !c.Prefill.HoldsPrompt(in):
		worker, capacity = "prefill worker "+d.Topology.Prefill.Worker().String(), c.Prefill.KVCapacity
	case d.Topology.Disaggregated() && !c.Decode.Holds(in+out):
		worker, capacity, windowTokens = "decode worker "+d.Topology.Decode.Worker().String(), c.Decode.KVCapacity, c.Decode.WindowTokens
	case !d.Topology.Disaggregated() && !c.Replicas.Holds(in+out):
		worker, capacity, windowTokens = "replica "+d.Topology.Replicas.Worker().String(), c.Replicas.KVCapacity, c.Replicas.WindowTokens
	default:
		return nil
	}
	window := ""
	if windowTokens > 0 {
		window = fmt.Sprintf(", beside up to %d tokens of sliding window a request", windowTokens)
	}
	return fmt.Errorf("calibrate: %s does not fit the KV cache of a %s on %s (%d tokens)%s: a larger TP or shorter requests would", what, worker, d.GPU.Name, capacity, window)
}

// WithWorkload returns d with Config.Load, Input, Output, NumPrompts,
// PrefixHitRate and Seed filled from w; outputs spread around w.OSL, up to w.OSLMax when
// they stop early, as in real runs (see workload.BenchmarkOutput), or all at w.OSL
// with w.ExactOutput, as the fit simulated them.
func (d Deployment) WithWorkload(w workload.Workload) Deployment {
	d.Config.Load = w.Load
	d.Config.Input, d.Config.Output = workloadLengths(w)
	d.Config.NumPrompts = w.NumPrompts
	d.Config.Seed = w.Seed
	d.Config.PrefixHitRate = w.PrefixHitRate
	d.Config.Sharing = w.Sharing
	return d
}

// workloadLengths are w.Lengths(), a dataset's lengths scaled once per
// (dataset, ISL, OSL) and shared: the fit simulates each point dozens of
// times, and scaling a dataset's thousands of lengths, then hashing them
// into the memo's key (configKey), for each was a tenth of fit --cv.
// Nothing writes them (the simulator deals copies).
func workloadLengths(w workload.Workload) (in, out sim.LengthDist) {
	if w.Dataset == "" {
		return w.Lengths()
	}
	k := scaledKey{w.Dataset, w.ISL, w.OSL}
	if v, ok := scaledLengths.Load(k); ok {
		l := v.(*[2]sim.LengthDist)
		return l[0], l[1]
	}
	in, out = w.Lengths()
	for _, d := range []sim.LengthDist{in, out} {
		if len(d.Values) > 0 {
			sharedDigests.Store(&d.Values[0], intsDigest{len(d.Values), digestInts(d.Values)})
		}
	}
	v, _ := scaledLengths.LoadOrStore(k, &[2]sim.LengthDist{in, out})
	l := v.(*[2]sim.LengthDist)
	return l[0], l[1]
}

type scaledKey struct {
	dataset  string
	isl, osl int
}

// scaledLengths holds workloadLengths' (dataset, ISL, OSL) → lengths, and
// sharedDigests the digest of each of their slices by its first element:
// held here, the slices are never freed, so no other slice starts there.
var scaledLengths, sharedDigests sync.Map

type intsDigest struct {
	n int
	d [sha256.Size]byte
}

func digestInts(v []int) [sha256.Size]byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return sha256.Sum256(b)
}

// Simulate runs w on d and returns what a benchmark client would measure:
// the simulation of d.WithWorkload(w).Config (the frontend latency is part
// of the configuration and simulated).
func (d Deployment) Simulate(ctx context.Context, w workload.Workload) (*sim.Result, error) {
	return d.SimulateWith(ctx, w, sim.Run)
}

// SimulateWith is Simulate with another simulator in place of sim.Run (a
// test's stand-in, or a counting wrapper); nil means sim.Run.
func (d Deployment) SimulateWith(ctx context.Context, w workload.Workload, run func(context.Context, sim.Config) (*sim.Result, error)) (*sim.Result, error) {
	if run == nil {
		run = sim.Run
	}
	return run(ctx, d.WithWorkload(w).Config)
}

// SteadyStatePrompts is the prompt count of a run at load l when the user
// gave none (n = 0): enough for a steady state, max(400, 20 × concurrency)
// or max(400, 20 × rate). A count (given or derived) above
// sim.MaxNumPrompts is an error matching sim.ErrTooManyPrompts.
func SteadyStatePrompts(l model.Load, n int) (int, error) {
	if n > 0 {
		if n > sim.MaxNumPrompts {
			return 0, sim.TooManyPrompts("calibrate: %d prompts per run is more than the %d requests one simulation may run", n, sim.MaxNumPrompts)
		}
		return n, nil
	}
	x := 400.0
	switch l.Kind {
	case model.ClosedLoop:
		x = max(x, 20*float64(l.Concurrency))
	case model.OpenLoop:
		x = max(x, math.Ceil(20*l.Rate))
	}
	if !(x <= sim.MaxNumPrompts) {
		return 0, sim.TooManyPrompts("calibrate: %s needs %.3g prompts for a steady state (20 × the load), more than the %d requests one simulation may run; give a smaller load or a prompt count",
			l, x, sim.MaxNumPrompts)
	}
	return int(x), nil
}

// simRunner runs a fit's simulations: at most its limiter's width at once
// however the fit nests groups, folds and points, and each configuration
// only once. A simulation is deterministic in its configuration (the seed
// is part of it), so one met again (the router judged and the residuals at
// the stored numbers, a cross-validation fold refitting groups it does
// not touch, a pool group fitted again) gives back what it gave before.
type simRunner struct {
	run   func(context.Context, sim.Config) (*sim.Result, error)
	limit *parallel.Limiter
	mu    sync.Mutex
	seen  map[[sha256.Size]byte]memoMetrics
	// forget runs every simulation afresh and gives back its whole result
	// (tests compare a fit without the memo).
	forget bool
}

func newSimRunner(run func(context.Context, sim.Config) (*sim.Result, error), workers int) *simRunner {
	return &simRunner{run: run, limit: parallel.NewLimiter(workers), seen: map[[sha256.Size]byte]memoMetrics{}}
}

// memoMetrics are the metrics the fit, its hold-outs and its router
// choice read (memoNames), kept small: a cross-validation meets hundreds
// of thousands of configurations.
type memoMetrics struct {
	v   []float64
	has uint64 // bit i: memoNames[i] was simulated
}

// memoNames are fitMetrics, holdoutMetrics and routerTails, once each.
var memoNames = func() []string {
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, m := range fitMetrics {
		add(m.name)
	}
	for _, m := range holdoutMetrics {
		add(m)
	}
	for _, m := range routerTails {
		add(m.name)
	}
	return out
}()

func (m memoMetrics) metrics() map[string]float64 {
	out := make(map[string]float64, len(memoNames))
	for i, n := range memoNames {
		if m.has&(1<<i) != 0 {
			out[n] = m.v[i]
		}
	}
	return out
}

// configKey identifies a configuration by its values: every field, slice
// element and interface's dynamic type and value, in binary (keyBytes).
// sim.Config holds values only (TestConfigKeyIsValues checks it), so equal
// bytes are an equal run.
func configKey(c sim.Config) [sha256.Size]byte {
	// The bytes go into a buffer kept for the next key: growing a new one
	// to a dataset's thousands of lengths was a tenth of a cross-validation.
	bp := keyBufs.Get().(*[]byte)
	b := keyBytes((*bp)[:0], reflect.ValueOf(c))
	k := sha256.Sum256(b)
	*bp = b
	keyBufs.Put(bp)
	return k
}

var keyBufs = sync.Pool{New: func() any { return new([]byte) }}

// keyBytes appends v to b without ambiguity: lengths before slices and
// strings, type names before interfaces' values. Anything else (a map, a
// pointer) is appended as its Go syntax, as fmt's %#v prints it. It is
// %#v's meaning at a fraction of its cost, which was a tenth of a fit's.
func keyBytes(b []byte, v reflect.Value) []byte {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.LittleEndian.AppendUint64(b, uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return binary.LittleEndian.AppendUint64(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case reflect.String:
		b = binary.LittleEndian.AppendUint64(b, uint64(v.Len()))
		return append(b, v.String()...)
	case reflect.Struct:
		for i := range v.NumField() {
			b = keyBytes(b, v.Field(i))
		}
		return b
	case reflect.Slice, reflect.Array:
		if ints, ok := asInts(v); ok { // a dataset's lengths: thousands
			// A shared dataset's lengths (workloadLengths) by their digest,
			// the length's top bit set: no slice of values has that length.
			if len(ints) > 0 {
				if x, ok := sharedDigests.Load(&ints[0]); ok && x.(intsDigest).n == len(ints) {
					b = binary.LittleEndian.AppendUint64(b, uint64(len(ints))|1<<63)
					d := x.(intsDigest).d
					return append(b, d[:]...)
				}
			}
			b = binary.LittleEndian.AppendUint64(b, uint64(len(ints)))
			b = slices.Grow(b, 8*len(ints))
			for _, x := range ints {
				b = binary.LittleEndian.AppendUint64(b, uint64(x))
			}
			return b
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(v.Len()))
		for i := range v.Len() {
			b = keyBytes(b, v.Index(i))
		}
		return b
	case reflect.Interface:
		if v.IsNil() {
			return append(b, 0)
		}
		e := v.Elem()
		b = append(b, 1)
		name := typeName(e.Type())
		b = binary.LittleEndian.AppendUint64(b, uint64(len(name)))
		b = append(b, name...)
		return keyBytes(b, e)
	}
	s := fmt.Sprintf("%#v", v)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// typeName is an interface's dynamic type as keyBytes writes it (package
// path and name), made once per type: every pool's Cost has one.
func typeName(t reflect.Type) string {
	if n, ok := typeNames.Load(t); ok {
		return n.(string)
	}
	n := t.PkgPath() + "." + t.String()
	typeNames.Store(t, n)
	return n
}

var typeNames sync.Map // reflect.Type → string

func asInts(v reflect.Value) ([]int, bool) {
	if v.Kind() != reflect.Slice || !v.CanInterface() {
		return nil, false
	}
	ints, ok := v.Interface().([]int)
	return ints, ok
}

// simulate runs c without its inter-token latencies and series, or gives
// back the metrics of its earlier run. Only Metrics is set in the result.
// Errors are not remembered: a cancelled run must not stand for a finished
// one.
func (r *simRunner) simulate(ctx context.Context, c sim.Config) (*sim.Result, error) {
	// A fit reads no inter-token latency (memoNames), the costliest
	// statistic, no series, and of the percentiles only memoNames'.
	c.NoITL, c.NoSeries, c.Percentiles = true, true, memoNames
	k := configKey(c)
	r.mu.Lock()
	m, ok := r.seen[k]
	r.mu.Unlock()
	if ok {
		return &sim.Result{Metrics: m.metrics()}, nil
	}
	var res *sim.Result
	var err error
	if lerr := r.limit.Do(ctx, func() { res, err = r.run(ctx, c) }); lerr != nil {
		return nil, lerr
	}
	if err != nil || r.forget {
		return res, err
	}
	m = memoMetrics{v: make([]float64, len(memoNames))}
	for i, n := range memoNames {
		if v, ok := res.Metrics[n]; ok {
			m.v[i], m.has = v, m.has|1<<i
		}
	}
	r.mu.Lock()
	r.seen[k] = m
	r.mu.Unlock()
	return &sim.Result{Metrics: m.metrics()}, nil
}

// runMemo is sim.Run with each worker's steps priced through a stepMemo:
// the fit's simulator when its options name none.
func runMemo(ctx context.Context, c sim.Config) (*sim.Result, error) {
	var memos []*stepMemo
	for _, p := range []*sim.PoolConfig{&c.Replicas, &c.Prefill, &c.Decode} {
		if sc, ok := p.Cost.(model.StepCost); ok {
			m := stepMemos.Get().(*stepMemo)
			m.reset(sc)
			p.Cost = m
			memos = append(memos, m)
		}
	}
	res, err := sim.Run(ctx, c)
	for _, m := range memos {
		stepMemos.Put(m)
	}
	return res, err
}

var stepMemos = sync.Pool{New: func() any { return new(stepMemo) }}

// stepMemoBits sizes a stepMemo (256 entries): a fit's run meets about
// 60 (prompt tokens, decodes) pairs on average.
const stepMemoBits = 8

// stepMemo prices steps as its model.StepCost does, remembering the terms
// of a mixed step that depend only on its prompt tokens and decodes (the
// GEMMs' smooth roofline, the activation traffic, the collectives): cube
// and square roots, and a run meets the same pair again and again (the
// fit's 13 M mixed steps have 2.1 M pairs, counted per run). The step's
// other terms are linear and summed by Coeffs.Dot as StepTime sums them,
// so a price is StepTime's to the bit (TestStepMemoIsStepTime).
type stepMemo struct {
	c            model.StepCost
	set          bool // c, floor, perKV and tab are c's
	floor, perKV float64
	tab          [1 << stepMemoBits]memoTerms
	bases        []memoBase // by decode batch n, as DecodeAffine(n) returned them
}

// memoTerms are a step's terms that depend on key only (0: an empty
// entry): prompt tokens << 32 | decodes for a mixed step, the padded
// batch for a pure decode step, whose base is kept in weight.
type memoTerms struct {
	key                   uint64
	weight, compute, comm float64
}

// reset makes m price c's steps. What m remembers of the same cost (to
// the bit) stays: three runs in four price the cost the run before did
// (a group's points share a deployment), and their decode bases and
// mixed steps' terms were 4% of a fit when priced anew each run.
func (m *stepMemo) reset(c model.StepCost) {
	if m.set && sameCost(&m.c, &c) {
		return
	}
	m.c, m.set, m.floor = c, true, c.KernelFloor()
	_, m.perKV = c.DecodeAffine(1)
	clear(m.tab[:])
	clear(m.bases)
}

// sameCost says whether a and b are the same cost to the bit: == on the
// structs, then the floats' bits, as == takes 0 for −0.
func sameCost(a, b *model.StepCost) bool {
	return a.Roofline == b.Roofline && a.Coeffs == b.Coeffs && slices.Equal(a.GraphSizes, b.GraphSizes) &&
		sameBits(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem())
}

// sameBits compares two values of one type field by field, floats by
// their bits; it takes what == compared already (sameCost) as equal.
func sameBits(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameBits(a.Field(i), b.Field(i)) {
				return false
			}
		}
	case reflect.Array:
		for i := range a.Len() {
			if !sameBits(a.Index(i), b.Index(i)) {
				return false
			}
		}
	}
	return true
}

func (m *stepMemo) StepTime(s model.Step) float64 {
	// Pure decode steps are padded to a graph size (and mostly priced by
	// DecodeAffine); absurd counts would not fit the key.
	if s.PrefillTokens <= 0 || s.PrefillTokens >= 1<<31 || s.DecodeSeqs < 0 || s.DecodeSeqs >= 1<<31 {
		return m.c.StepTime(s)
	}
	key := uint64(s.PrefillTokens)<<32 | uint64(s.DecodeSeqs)
	e := &m.tab[(key*0x9E3779B97F4A7C15)>>(64-stepMemoBits)] // Fibonacci hashing
	n := float64(s.DecodeSeqs)
	if e.key != key {
		t := m.c.Roofline.Terms(model.Step{PrefillTokens: s.PrefillTokens}, n, m.c.Coeffs)
		*e = memoTerms{key, t.Weight, t.Compute, t.Comm}
	}
	r := &m.c.Roofline
	return m.c.Coeffs.Dot(model.Coeffs{
		Overhead: 1,
		PerSeq:   float64(s.PrefillSeqs) + n,
		Weight:   e.weight,
		Compute:  e.compute,
		Attn:     r.AttnPair * s.PrefillAttn,
		KV:       r.KVRead * s.DecodeKV,
		Comm:     e.comm,
	}) + m.floor
}

// DecodeAffine remembers the base of each padded batch: a pure decode
// step of n sequences computes PaddedBatch(n), and a run prices each n it
// meets (a few hundred) in a few dozen graph sizes.
//
// The base is also kept by n itself, for the runs after this one that
// price the same cost (reset): each run asks once per n.
func (m *stepMemo) DecodeAffine(n int) (base, perKV float64) {
	if n >= 0 && n < len(m.bases) && m.bases[n].ok {
		return m.bases[n].v, m.perKV
	}
	p := m.c.PaddedBatch(n)
	if p <= 0 || p >= 1<<31 {
		return m.c.DecodeAffine(n)
	}
	e := &m.tab[(uint64(p)*0x9E3779B97F4A7C15)>>(64-stepMemoBits)]
	if e.key != uint64(p) {
		b, _ := m.c.DecodeAffine(p)
		*e = memoTerms{key: uint64(p), weight: b}
	}
	if n >= 0 && n < maxMemoBases {
		if n >= len(m.bases) {
			m.bases = append(m.bases, make([]memoBase, n+1-len(m.bases))...)
		}
		m.bases[n] = memoBase{e.weight, true}
	}
	return e.weight, m.perKV
}

// maxMemoBases bounds the decode batches a stepMemo keeps bases of by n.
const maxMemoBases = 1 << 12

type memoBase struct {
	v  float64
	ok bool
}
