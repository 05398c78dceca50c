package loadgen

import (
	"context"
	"fmt"
	"testing"

	"github.com/capsim/capsim/internal/simpeer"
	"github.com/capsim/capsim/model"
)

// The end-to-end tests drive llm-d-inference-sim with constant latencies:
// 50 ms to the first token, 10 ms per later token. Built-in tokenizer (a
// model name without "/"), so no network.
var simArgs = []string{
	"--model", "tiny", "--latency-calculator", "constant",
	"--time-to-first-token", "50ms", "--inter-token-latency", "10ms",
	"--max-model-len", "8192", "--seed", "42",
}

const (
	simTTFT = 50.0 // ms
	simITL  = 10.0 // ms
)

func simOptions(url string) Options {
	return Options{URL: url, Model: "tiny", ISL: 200, OSL: 20, Seed: 7, NumPrompts: 12}
}

// within returns a problem when v is outside [lo, hi].
func within(name string, v, lo, hi float64) []string {
	if v < lo || v > hi {
		return []string{fmt.Sprintf("%s %.2f ms, want %.1f–%.1f", name, v, lo, hi)}
	}
	return nil
}

func TestEndToEndMatchesConfiguredLatencies(t *testing.T) {
	// 16 slots: neither load point below queues inside the simulator (the
	// open loop averages 20 req/s × 0.24 s ≈ 5 requests in flight).
	sim := simpeer.Start(t, append(simArgs, "--max-num-seqs", "16")...)
	for _, tt := range []struct {
		name     string
		endpoint Endpoint
		load     model.Load
	}{
		{"completions closed loop", Completions, model.Closed(4)},
		{"chat closed loop", Chat, model.Closed(2)},
		{"completions open loop", Completions, model.Open(20, 1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			simpeer.RetryTiming(t, func() []string {
				opts := simOptions(sim.URL)
				opts.Endpoint, opts.Load = tt.endpoint, tt.load
				r, err := Run(context.Background(), opts, nil)
				if err != nil {
					t.Fatal(err)
				}
				if r.Completed != opts.NumPrompts || r.Failed != 0 {
					t.Fatalf("completed %d failed %v: %q\nsim log: %s", r.Completed, r.Failures, r.Errors, sim.Log())
				}
				if r.TotalOutputTokens != opts.NumPrompts*opts.OSL || r.OutputTokenMismatches != 0 {
					t.Fatalf("output tokens %d, mismatches %d", r.TotalOutputTokens, r.OutputTokenMismatches)
				}
				if tt.endpoint == Completions && (r.PromptTokenMismatches != 0 || r.TotalInputTokens != opts.NumPrompts*opts.ISL) {
					t.Fatalf("prompt tokens %d, mismatches %d", r.TotalInputTokens, r.PromptTokenMismatches)
				}
				t.Logf("TTFT mean %.2f median %.2f p99 %.2f, TPOT mean %.2f median %.2f, ITL median %.2f p99 %.2f, E2EL mean %.2f ms, %.2f req/s",
					r.TTFT.Mean, r.TTFT.Median, r.TTFT.P99, r.TPOT.Mean, r.TPOT.Median, r.ITL.Median, r.ITL.P99, r.E2EL.Mean, r.RequestThroughput)
				// The simulator waits at least the configured times; it and the
				// client add about a millisecond per token.
				var problems []string
				problems = append(problems, within("median TTFT", r.TTFT.Median, simTTFT, simTTFT+15)...)
				problems = append(problems, within("median TPOT", r.TPOT.Median, simITL-0.5, simITL+3)...)
				problems = append(problems, within("median ITL", r.ITL.Median, simITL-0.5, simITL+3)...)
				if tt.load.Kind == model.OpenLoop {
					if r.ScheduleDelay == nil {
						t.Fatal("open loop without schedule delay")
					}
					problems = append(problems, within("median schedule delay", r.ScheduleDelay.P50, 0, 20)...)
				}
				return problems
			})
		})
	}
}

func TestEndToEndQueueingShowsInTTFT(t *testing.T) {
	// Two slots, four clients: while two requests run, two wait a whole
	// service time (50 + 19·10 = 240 ms configured) before their first
	// token, so TTFT grows by about that much while TPOT is unchanged.
	sim := simpeer.Start(t, append(simArgs, "--max-num-seqs", "2")...)
	run := func(concurrency int) *Result {
		opts := simOptions(sim.URL)
		opts.Load = model.Closed(concurrency)
		r, err := Run(context.Background(), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != opts.NumPrompts {
			t.Fatalf("concurrency %d: completed %d, failures %v", concurrency, r.Completed, r.Failures)
		}
		return r
	}
	simpeer.RetryTiming(t, func() []string {
		slots, over := run(2), run(4)
		// Each request beyond the slots waits for the one ahead of it to
		// finish: about one service time, TTFT plus 19 token gaps, taken from
		// this run's own medians so a machine running slow for a moment
		// moves both sides.
		service := slots.TTFT.Median + 19*over.TPOT.Median
		t.Logf("median TTFT %.1f ms at 2 clients, %.1f ms at 4; service time %.1f ms (configured %v)",
			slots.TTFT.Median, over.TTFT.Median, service, simTTFT+19*simITL)
		var problems []string
		problems = append(problems, within("median TTFT at concurrency = slots", slots.TTFT.Median, simTTFT, simTTFT+15)...)
		problems = append(problems, within("median TTFT growth at 2× slots", over.TTFT.Median-slots.TTFT.Median, 0.8*service, 1.25*service)...)
		problems = append(problems, within("median TPOT at 2× slots", over.TPOT.Median, simITL-0.5, slots.TPOT.Median+3)...)
		return problems
	})
}

func TestEndToEndInjectedFailures(t *testing.T) {
	sim := simpeer.Start(t, append(simArgs, "--max-num-seqs", "8",
		"--failure-injection-rate", "30", "--failure-types", "server_error", "rate_limit")...)
	opts := simOptions(sim.URL)
	opts.NumPrompts, opts.OSL, opts.Load = 30, 5, model.Closed(6)
	r, err := Run(context.Background(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed == 0 || r.Completed == 0 || r.Completed+r.Failed != opts.NumPrompts {
		t.Fatalf("completed %d failed %d of %d; failures %v", r.Completed, r.Failed, opts.NumPrompts, r.Failures)
	}
	for reason := range r.Failures {
		if reason != "http_503" && reason != "http_429" {
			t.Errorf("unexpected failure reason %q (%v)", reason, r.Failures)
		}
	}
	// Statistics come from completed requests only: failures answer at once
	// and would drag the median TTFT far below the configured 50 ms.
	if r.TTFT.Median < simTTFT || r.TotalOutputTokens != r.Completed*opts.OSL {
		t.Errorf("median TTFT %.2f ms, output tokens %d for %d completed", r.TTFT.Median, r.TotalOutputTokens, r.Completed)
	}
	t.Logf("injected failures: %v of %d, %d completed", r.Failures, opts.NumPrompts, r.Completed)
}
