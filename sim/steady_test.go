package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/capsim/capsim/model"
)

func runSteady(t *testing.T, cfg Config) *Result {
	t.Helper()
	cfg.Mode = SteadyState
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Mode != SteadyState || res.Steady == nil {
		t.Fatalf("mode %q, steady %v: want a steady-state result", res.Mode, res.Steady)
	}
	if res.Completed != cfg.NumPrompts || res.Steady.Measured != cfg.NumPrompts {
		t.Errorf("completed %d, measured %d, want %d", res.Completed, res.Steady.Measured, cfg.NumPrompts)
	}
	for k, v := range res.Metrics {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("metric %s = %v", k, v)
		}
	}
	return res
}

// M/M/1 at 70% load measured in steady state: the mean wait, throughput,
// utilisation and queue match the formulas, and the run is not saturated.
func TestSteadyStateMM1(t *testing.T) {
	const meanTokens, perToken, lambda = 10000, 1e-5, 7.0
	mu := 1 / (meanTokens * perToken)
	rho := lambda / mu
	wantWait := rho / (mu - lambda)
	res := runSteady(t, Config{
		Replicas: PoolConfig{Workers: 1, Cost: testCost{PerPrefillToken: perToken}, MaxNumSeqs: 1, MaxBatchedTokens: 1 << 30, BlockSize: 16},
		Load:     model.Open(lambda, 1), Input: LengthDist{Kind: "exponential", Mean: meanTokens}, Output: Fixed(1),
		NumPrompts: 400_000, Seed: 7,
	})
	m := res.Metrics
	inTokens := m[model.TotalTokenThroughput] - m[model.OutputThroughput] // per second
	meanService := inTokens / m[model.RequestThroughput] * perToken
	wait := m[model.MeanTTFT]/1000 - meanService
	t.Logf("mean wait %.5f s, M/M/1 %.5f s (%+.2f%%); achieved %.4f req/s of %.4f offered", wait, wantWait, 100*(wait/wantWait-1), res.Steady.AchievedRate, res.Steady.OfferedRate)
	if math.Abs(wait-wantWait)/wantWait > 0.03 {
		t.Errorf("mean wait %v s, M/M/1 says %v", wait, wantWait)
	}
	if r := m[model.RequestThroughput]; math.Abs(r-lambda)/lambda > 0.01 {
		t.Errorf("throughput %v, want the offered %v", r, lambda)
	}
	if res.Steady.Saturated {
		t.Error("saturated at 70% load")
	}
	if u := res.Pools[0].Utilisation; math.Abs(u-rho) > 0.01 {
		t.Errorf("utilisation %v, want ≈ %v", u, rho)
	}
	if q := res.Pools[0].MeanQueue; math.Abs(q-lambda*wantWait)/(lambda*wantWait) > 0.05 {
		t.Errorf("mean queue %v, want ≈ %v", q, lambda*wantWait)
	}
	// Little's law over the window, within the window's edge effects.
	little := m[model.RequestThroughput] * m[model.MeanE2EL] / 1000
	if math.Abs(res.MeanInFlight-little) > 0.02*little {
		t.Errorf("Little's law: mean in flight %v, throughput × mean E2E %v", res.MeanInFlight, little)
	}
}

// Past capacity an open loop is saturated: requests complete at the
// service rate, below the offered rate, and the result says so.
func TestSteadyStateSaturated(t *testing.T) {
	const perToken, tokens = 1e-5, 10000 // 10 prompts/s
	res := runSteady(t, Config{
		Replicas: PoolConfig{Workers: 1, Cost: testCost{PerPrefillToken: perToken}, MaxNumSeqs: 1, MaxBatchedTokens: 1 << 30, BlockSize: 16},
		Load:     model.Open(12, 1), Input: Fixed(tokens), Output: Fixed(1), NumPrompts: 2000, Seed: 3,
	})
	st := res.Steady
	if !st.Saturated {
		t.Errorf("not saturated: achieved %v of %v offered", st.AchievedRate, st.OfferedRate)
	}
	if !near(st.AchievedRate, 10, 0.01) {
		t.Errorf("achieved %v req/s, want the service rate 10", st.AchievedRate)
	}
}

// Far past capacity an open loop stops arriving once every measured
// request is sent and its backlog has grown by max(2 × measured, 20,000):
// the run stays bounded (100× overload once queued millions of requests),
// is saturated, and reports the rate that was offered while it arrived. A
// deployment that keeps up with more than that in flight (long requests
// at a high rate) keeps arriving and is not saturated.
func TestSteadyStateArrivalsStop(t *testing.T) {
	const perToken, tokens = 1e-5, 10000 // 10 prompts/s
	cfg := Config{
		Replicas: PoolConfig{Workers: 1, Cost: testCost{PerPrefillToken: perToken}, MaxNumSeqs: 1, MaxBatchedTokens: 1 << 30, BlockSize: 16},
		Input:    Fixed(tokens), Output: Fixed(1), NumPrompts: 2000, Seed: 3,
	}
	for _, tt := range []struct {
		rate float64
		stop bool
	}{{1000, true}, {12, false}} {
		cfg.Load = model.Open(tt.rate, 1)
		st := runSteady(t, cfg).Steady
		if st.ArrivalsStopped != tt.stop || !st.Saturated {
			t.Errorf("rate %v: arrivals stopped %v, saturated %v; want %v, true", tt.rate, st.ArrivalsStopped, st.Saturated, tt.stop)
		}
		if !near(st.OfferedRate, tt.rate, 0.05) || !near(st.AchievedRate, 10, 0.01) {
			t.Errorf("rate %v: offered %v, achieved %v req/s; want the rate and the service rate 10", tt.rate, st.OfferedRate, st.AchievedRate)
		}
	}
	// 5,000 req/s of 600-token outputs at 10 ms a step on a worker that
	// batches them all: about 30,000 in flight, held steady from a warm-up
	// longer than a request.
	keepUp := Config{
		Replicas: PoolConfig{Workers: 1, Cost: testCost{Overhead: 0.01}, MaxNumSeqs: 1 << 20, MaxBatchedTokens: 1 << 30, BlockSize: 16},
		Load:     model.Open(5000, 1), Input: Fixed(10), Output: Fixed(600), NumPrompts: 2000, Warmup: 40000, Seed: 3,
	}
	st := runSteady(t, keepUp).Steady
	if st.ArrivalsStopped || st.Saturated || !near(st.AchievedRate, 5000, 0.05) {
		t.Errorf("keeping up with ~30,000 in flight: arrivals stopped %v, saturated %v, achieved %v req/s", st.ArrivalsStopped, st.Saturated, st.AchievedRate)
	}
}

// A closed loop with constant costs has no warm-up effect on its
// throughput in steady state: exactly N/(O·tau) with every step full.
func TestSteadyStateClosedLoopConstant(t *testing.T) {
	const tau, N, P, O = 0.02, 8, 100, 50
	res := runSteady(t, Config{
		Replicas: PoolConfig{Workers: 1, Cost: testCost{Overhead: tau}, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load:     model.Closed(N), Input: Fixed(P), Output: Fixed(O), NumPrompts: 400,
	})
	m := res.Metrics
	for k, v := range map[string]float64{model.RequestThroughput: N / (O * tau), model.MeanTTFT: tau * 1000,
		model.MeanTPOT: tau * 1000, model.MeanE2EL: O * tau * 1000, model.P99ITL: tau * 1000} {
		if !near(m[k], v, 1e-6) {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if u := res.Pools[0].Utilisation; !near(u, 1, 1e-6) {
		t.Errorf("utilisation %v, want 1", u)
	}
	if b := res.Pools[0].MeanBatch; !near(b, N, 1e-6) {
		t.Errorf("mean batch %v, want %d", b, N)
	}
	for k, e := range res.Steady.RelError {
		if e > 1e-9 {
			t.Errorf("relative error of %s = %v, want 0 for constant costs", k, e)
		}
	}
}

// The symptom: a closed loop's benchmark replay depends on its
// length (the first wave of prompts arrives at once); steady state does not.
func TestSteadyStateIndependentOfLength(t *testing.T) {
	cfg := Config{
		Replicas: PoolConfig{Workers: 2, Cost: h20Like, KVCapacity: 400_000, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192},
		Load:     model.Closed(64), Input: Fixed(1000), Output: LengthDist{Kind: "uniform", Min: 160, Max: 240}, Seed: 1,
	}
	at := func(mode Mode, n int) map[string]float64 {
		c := cfg
		c.Mode, c.NumPrompts = mode, n
		res, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		return res.Metrics
	}
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(a, b) }
	short, long := at(BenchmarkReplay, 640), at(BenchmarkReplay, 10_000)
	t.Logf("replay mean TTFT %.1f ms at 640 prompts, %.1f at 10,000", short[model.MeanTTFT], long[model.MeanTTFT])
	if rel(short[model.MeanTTFT], long[model.MeanTTFT]) < 0.05 {
		t.Errorf("replay mean TTFT barely depends on length (%v vs %v): the test no longer shows the warm-up effect", short[model.MeanTTFT], long[model.MeanTTFT])
	}
	s2, s8 := at(SteadyState, 2500), at(SteadyState, 10_000)
	for _, k := range []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL, model.P99TPOT, model.P99E2EL} {
		if r := rel(s2[k], s8[k]); r > 0.02 {
			t.Errorf("steady %s: %v at 2,500 prompts, %v at 10,000 (%.1f%% apart)", k, s2[k], s8[k], 100*r)
		}
	}
}

func TestSteadyStateDeterministic(t *testing.T) {
	cfg := benchDisagg(3000, 150, 3000)
	cfg.Load = model.Open(6, 1)
	cfg.Mode = SteadyState
	var out [2][]byte
	for i := range out {
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		out[i], _ = json.Marshal(res)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two steady-state runs of the same config differ")
	}
}

// Converge doubles the measured requests until the tolerances hold, and
// stops at once when saturated.
func TestConverge(t *testing.T) {
	cfg := Config{
		Replicas: PoolConfig{Workers: 1, Cost: testCost{PerPrefillToken: 1e-5}, MaxNumSeqs: 1, MaxBatchedTokens: 1 << 30, BlockSize: 16},
		Load:     model.Open(5, 1), Input: LengthDist{Kind: "exponential", Mean: 10000}, Output: Fixed(1), NumPrompts: 500, Seed: 1,
	}
	var sizes []int
	count := func(ctx context.Context, c Config) (*Result, error) {
		sizes = append(sizes, c.NumPrompts)
		return Run(ctx, c)
	}
	res, err := Converge(context.Background(), cfg, SteadyOptions{MeanTol: 0.03, P99Tol: 0.05, MaxPrompts: 1 << 20}, count)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Steady
	t.Logf("runs %v, rel errors %v", sizes, st.RelError)
	if !st.Converged || st.Runs != len(sizes) || len(sizes) < 2 {
		t.Errorf("converged %v after %d runs (%v): want convergence after doubling", st.Converged, st.Runs, sizes)
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i] != 2*sizes[i-1] {
			t.Errorf("run sizes %v do not double", sizes)
		}
	}
	for k, e := range st.RelError {
		if tol := map[bool]float64{true: 0.05, false: 0.03}[k[:3] == "p99"]; e > tol {
			t.Errorf("%s relative error %v above %v", k, e, tol)
		}
	}
	sizes = nil
	cfg.Load = model.Open(20, 1)
	res, err = Converge(context.Background(), cfg, SteadyOptions{MaxPrompts: 1 << 20}, count)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Steady.Saturated || len(sizes) != 1 {
		t.Errorf("overloaded: saturated %v after runs %v, want saturated after one", res.Steady.Saturated, sizes)
	}
}

func TestSteadyStateBadInput(t *testing.T) {
	base := Config{Replicas: PoolConfig{Workers: 1, Cost: h20Like, BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192}, Input: Fixed(10), Output: Fixed(10), NumPrompts: 10, Mode: SteadyState}
	for name, mut := range map[string]func(*Config){
		"burst":   func(c *Config) { c.Load = model.Load{Kind: model.Burst, Rate: math.Inf(1)} },
		"warmup":  func(c *Config) { c.Load = model.Closed(2); c.Warmup = -1 },
		"records": func(c *Config) { c.Load = model.Closed(2); c.KeepRequests = true },
		"mode":    func(c *Config) { c.Load = model.Closed(2); c.Mode = "endless" },
	} {
		c := base
		mut(&c)
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestNearCritical(t *testing.T) {
	tests := []struct {
		name string
		kind model.LoadKind
		pool PoolStats
		want bool
	}{
		{"idle", model.OpenLoop, PoolStats{Name: "replicas", Utilisation: 0.5}, false},
		{"busy decode, nobody waiting", model.OpenLoop, PoolStats{Name: "decode", Utilisation: 1, MeanQueue: 0.2}, false},
		{"prefill queue with headroom", model.OpenLoop, PoolStats{Name: "prefill", Utilisation: 0.9, MeanQueue: 3}, false},
		{"prefill at 99% with a queue", model.OpenLoop, PoolStats{Name: "prefill", Utilisation: 0.99, MeanQueue: 8.9}, true},
		{"closed loop: its clients bound the queue", model.ClosedLoop, PoolStats{Name: "prefill", Utilisation: 0.99, MeanQueue: 8.9}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nearCritical(tt.kind, tt.pool); got != tt.want {
				t.Errorf("nearCritical = %v, want %v", got, tt.want)
			}
		})
	}
}
