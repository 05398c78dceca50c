package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// A fit with its memo and its groups and folds at once gives what one
// after the other, every simulation run afresh, gives: the profile, the
// series and the cross-validation, byte for byte. The records leave the
// router open (its score reads the p99 tails) and hold a disaggregated
// group with two configurations (folds), so every metric a fit reads
// goes through the memo.
func TestMemoisedConcurrentFitEqualsFreshSerialFit(t *testing.T) {
	if testing.Short() {
		t.Skip("fits two groups with cross-validation twice")
	}
	t.Parallel()
	recs := vllmRecords(t, sim.Random, []int{4, 16})
	recs = append(recs, syntheticRecords(t, "3P(TP4) 1D(TP4)", []int{1, 8}, [][2]int{{2500, 100}})...)
	recs = append(recs, syntheticRecords(t, "12P(TP1) 1D(TP4)", []int{1, 8}, [][2]int{{2500, 100}})...)
	fit := func(opts Options) string {
		t.Helper()
		prof, rep, err := Fit(context.Background(), recs, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal([]any{prof, rep})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	fresh := newSimRunner(sim.Run, 1)
	fresh.forget = true
	want := fit(Options{MaxEvals: 6, CV: true, Workers: 1, runner: fresh})
	got := fit(Options{MaxEvals: 6, CV: true, Workers: 3})
	if got != want {
		t.Errorf("memoised concurrent fit differs from the fresh serial one:\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(want, "round-robin") || !strings.Contains(want, `"cv":[{`) {
		t.Errorf("the fit did not judge both routers and cross-validate: %s", want)
	}
}

func TestRunnerRunsEachConfigurationOnce(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	fail := errors.New("no")
	var withITL atomic.Int32
	run := func(_ context.Context, c sim.Config) (*sim.Result, error) {
		calls.Add(1)
		if !c.NoITL || !c.NoSeries || !reflect.DeepEqual(c.Percentiles, memoNames) {
			withITL.Add(1) // a fit reads no ITL, no series, no percentile but memoNames': the runner asks for none
		}
		if c.Seed == 99 {
			return nil, fail
		}
		return &sim.Result{Metrics: map[string]float64{model.MeanTTFT: float64(c.Seed), model.P99TTFT: 2 * float64(c.Seed), "other": 1}}, nil
	}
	r := newSimRunner(run, 2)
	c := sim.Config{Seed: 3, NumPrompts: 10}
	for range 3 {
		res, err := r.simulate(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Metrics[model.MeanTTFT] != 3 || res.Metrics[model.P99TTFT] != 6 || len(res.Metrics) != 2 {
			t.Errorf("metrics %v, want mean_ttft_ms 3 and p99_ttft_ms 6 (what a fit reads, nothing else)", res.Metrics)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("one configuration simulated %d times, want once", n)
	}
	c.NumPrompts = 11
	if _, err := r.simulate(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("a configuration with another prompt count was not simulated (%d runs)", n)
	}
	// Errors are not remembered.
	for range 2 {
		if _, err := r.simulate(context.Background(), sim.Config{Seed: 99}); !errors.Is(err, fail) {
			t.Errorf("err %v, want the simulator's", err)
		}
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("%d runs, want a failed configuration run again (4)", n)
	}
	if n := withITL.Load(); n != 0 {
		t.Errorf("%d runs asked for the inter-token latencies, the series or percentiles, which a fit does not read", n)
	}
}

// The memo's key is the configuration's Go syntax: it must hold values
// only (a pointer prints as its address, so a changed pointee would find
// the earlier run), and every cost must reach it.
func TestConfigKeyIsValues(t *testing.T) {
	t.Parallel()
	p := testProfile()
	d, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("vllm-0.9"), Topology: mustTopo(t, "4xTP4")})
	if err != nil {
		t.Fatal(err)
	}
	c := d.WithWorkload(workload.Workload{Load: model.Closed(8), ISL: 1000, OSL: 200, NumPrompts: 64, Seed: 1, Dataset: "sharegpt"}).Config
	if s := fmt.Sprintf("%#v", c); strings.Contains(s, "(0x") || strings.Contains(s, "func(") {
		t.Fatalf("a sim.Config prints a pointer or a function, so configKey cannot tell runs apart: %s", s)
	}
	c2 := d.WithWorkload(workload.Workload{Load: model.Closed(8), ISL: 1000, OSL: 200, NumPrompts: 64, Seed: 1, Dataset: "sharegpt"}).Config
	if configKey(c) != configKey(c2) {
		t.Error("equal configurations have different keys")
	}
	cost := c2.Replicas.Cost.(model.StepCost)
	cost.Coeffs.Attn *= 1 + 1e-12
	c2.Replicas.Cost = cost
	if configKey(c) == configKey(c2) {
		t.Error("a changed coefficient keeps the key")
	}
}

// keyBytes leaves no two values the same bytes: strings and slices carry
// their lengths, interfaces their dynamic types.
func TestKeyBytesUnambiguous(t *testing.T) {
	t.Parallel()
	type pair struct {
		A, B string
		N    []int
		F    []float64
		I    any
	}
	type meters float64
	type seconds float64
	base := pair{A: "ab", B: "c", N: []int{1, 2}, F: []float64{0.5}, I: meters(1)}
	for name, other := range map[string]pair{
		"string boundary": {A: "a", B: "bc", N: []int{1, 2}, F: []float64{0.5}, I: meters(1)},
		"int element":     {A: "ab", B: "c", N: []int{1, 3}, F: []float64{0.5}, I: meters(1)},
		"slice boundary":  {A: "ab", B: "c", N: []int{1}, F: []float64{2, 0.5}, I: meters(1)},
		"float element":   {A: "ab", B: "c", N: []int{1, 2}, F: []float64{0.5 + 1e-15}, I: meters(1)},
		"dynamic type":    {A: "ab", B: "c", N: []int{1, 2}, F: []float64{0.5}, I: seconds(1)},
		"nil interface":   {A: "ab", B: "c", N: []int{1, 2}, F: []float64{0.5}},
	} {
		if string(keyBytes(nil, reflect.ValueOf(base))) == string(keyBytes(nil, reflect.ValueOf(other))) {
			t.Errorf("%s: %+v and %+v have one key", name, base, other)
		}
	}
	same := base
	same.N = []int{1, 2}
	if string(keyBytes(nil, reflect.ValueOf(base))) != string(keyBytes(nil, reflect.ValueOf(same))) {
		t.Error("equal values have different keys")
	}
}

// engine.Settings.CUDAGraphs remembers engine.GraphSizes per capture size: the
// same list for each, and none for an eager role.
func TestGraphSizesMemoised(t *testing.T) {
	for range 2 {
		for _, top := range []int{64, 128, 512} {
			s := engine.Settings{GraphMax: top, PrefillEager: true}
			if got, want := s.CUDAGraphs(false), engine.GraphSizes(top); !reflect.DeepEqual(got, want) {
				t.Errorf("graph max %d: %v, want %v", top, got, want)
			}
			if got := s.CUDAGraphs(true); got != nil {
				t.Errorf("eager prefill: %v, want none", got)
			}
		}
	}
}

// A dataset's scaled lengths are made once per (dataset, ISL, OSL) and
// shared by the configurations that simulate them, keyed by their digest:
// equal workloads share one slice and one key, another scale gets its own
// key, and a copy of the lengths with one changed does not take the
// shared slice's key.
func TestDatasetLengthsSharedAndKeyed(t *testing.T) {
	p := testProfile()
	d, err := p.Configure(Target{GPU: mustGPU(t, "H20"), LLM: mustLLM(t, "Qwen3-32B"), Engine: engine.Parse("vllm-0.9"), Topology: mustTopo(t, "4xTP4")})
	if err != nil {
		t.Fatal(err)
	}
	w := workload.Workload{Load: model.Closed(8), ISL: 1000, OSL: 200, NumPrompts: 64, Seed: 1, Dataset: "sharegpt"}
	a, b := d.WithWorkload(w).Config, d.WithWorkload(w).Config
	if len(a.Input.Values) < 100 || &a.Input.Values[0] != &b.Input.Values[0] || &a.Output.Values[0] != &b.Output.Values[0] {
		t.Fatalf("two configurations of one dataset workload do not share its %d scaled lengths", len(a.Input.Values))
	}
	if in, _ := w.Lengths(); !slices.Equal(in.Values, a.Input.Values) {
		t.Fatal("the shared lengths are not the workload's")
	}
	if configKey(a) != configKey(b) {
		t.Error("equal dataset workloads have different keys")
	}
	w2 := w
	w2.ISL = 1001
	if configKey(d.WithWorkload(w2).Config) == configKey(a) {
		t.Error("another ISL keeps the key")
	}
	c := a
	c.Input.Values = slices.Clone(a.Input.Values)
	c.Input.Values[7]++
	if configKey(c) == configKey(a) {
		t.Error("changed lengths keep the shared lengths' key")
	}
}
