package calibrate

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

func TestSimulateFillsWorkloadAndFrontend(t *testing.T) {
	p := testProfile()
	p.Groups[2].Frontend = &FrontendFit{LatencyS: 0.05, Source: SourceFitted, RelSigma: 0.2}
	d, err := p.Configure(Target{GPU: "H20", Model: "Qwen3-32B", Engine: "vllm-0.9", Topology: mustTopo(t, "4xTP4")})
	if err != nil {
		t.Fatal(err)
	}
	w := Workload{Load: model.Closed(8), ISL: 1000, OSL: 200, NumPrompts: 64, Seed: 7}
	var seen sim.Config
	raw := &sim.Result{Duration: 100, Metrics: map[string]float64{model.MeanTTFT: 150, model.MeanE2EL: 2000}}
	res, err := d.SimulateWith(context.Background(), w, func(_ context.Context, cfg sim.Config) (*sim.Result, error) {
		seen = cfg
		return raw, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen.Load != w.Load || !reflect.DeepEqual(seen.Input, sim.Fixed(1000)) || !reflect.DeepEqual(seen.Output, BenchmarkOutput(200, 0)) ||
		seen.NumPrompts != 64 || seen.Seed != 7 || !reflect.DeepEqual(seen.Replicas, d.Config.Replicas) || seen.FrontendLatency != 0.05 {
		t.Errorf("simulated config %+v does not carry the workload %+v and the 0.05 s frontend on the deployment", seen, w)
	}
	if res != raw || res.Metrics[model.MeanTTFT] != 150 {
		t.Errorf("Simulate patched the simulator's result: %v", res.Metrics)
	}

	// The real simulator gives what sim.Run gives on the same configuration.
	got, err := d.Simulate(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.Run(context.Background(), d.WithWorkload(w).Config)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want.Metrics {
		if math.Abs(got.Metrics[k]-v) > 1e-9*math.Max(1, math.Abs(v)) {
			t.Errorf("%s = %v, want %v", k, got.Metrics[k], v)
		}
	}
}

func TestSimulateReturnsTheSimulatorsError(t *testing.T) {
	boom := errors.New("sim: boom")
	_, err := Deployment{}.SimulateWith(context.Background(), Workload{Load: model.Closed(1)}, func(context.Context, sim.Config) (*sim.Result, error) {
		return nil, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
}

// Outputs that stop early are drawn as capped exponentials whose mean,
// after rounding to whole tokens and capping, is the measured mean; those
// that run to their length stay within ±OutputSpread of it.
func TestBenchmarkOutputOfOutputsThatStopEarly(t *testing.T) {
	for _, tt := range []struct{ osl, cap int }{{438, 1000}, {465, 1000}, {100, 2048}, {900, 1000}} {
		d := BenchmarkOutput(tt.osl, tt.cap)
		if d.Kind != "exponential" || d.Min != 1 || d.Max != tt.cap {
			t.Fatalf("BenchmarkOutput(%d, %d) = %+v, want an exponential over 1..%d", tt.osl, tt.cap, d, tt.cap)
		}
		// The mean of the drawn lengths: round(x) clipped to 1..cap, x ~ Exp(mean d.Mean).
		cdf := func(x float64) float64 { return -math.Expm1(-x / d.Mean) }
		mean := 0.0
		for n := 1; n <= tt.cap; n++ {
			lo, hi := float64(n)-0.5, float64(n)+0.5
			p := cdf(hi) - cdf(lo)
			if n == 1 {
				p = cdf(hi)
			}
			if n == tt.cap {
				p = 1 - cdf(lo)
			}
			mean += float64(n) * p
		}
		if math.Abs(mean/float64(tt.osl)-1) > 0.005 {
			t.Errorf("BenchmarkOutput(%d, %d): drawn lengths average %.1f tokens", tt.osl, tt.cap, mean)
		}
	}
	for _, cap := range []int{0, 200} { // no cap, or outputs that reach it
		if d := BenchmarkOutput(200, cap); d.Kind != "uniform" || d.Min != 160 || d.Max != 240 {
			t.Errorf("BenchmarkOutput(200, %d) = %+v, want uniform 160..240", cap, d)
		}
	}
}
