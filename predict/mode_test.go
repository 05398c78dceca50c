package predict

import (
	"testing"

	"github.com/capsim/capsim/sim"
)

// A burst is replayed whatever mode was asked for, and the header says so.
func TestHowSimulatedBursts(t *testing.T) {
	steady := Point{Mode: sim.SteadyState, Steady: &sim.Steady{Measured: 10000}}
	burst := Point{Mode: sim.BenchmarkReplay}
	for _, tt := range []struct {
		name   string
		mode   sim.Mode
		points []Point
		want   string
	}{
		{"steady", sim.SteadyState, []Point{steady}, "steady state (warm-up left out; up to 10000 measured requests a point)"},
		{"bursts only", sim.SteadyState, []Point{burst, burst}, "benchmark replay (ramp-up and drain included), as every burst is"},
		{"steady and a burst", sim.SteadyState, []Point{steady, burst}, "steady state (warm-up left out; up to 10000 measured requests a point); bursts as a benchmark replay"},
		{"replay asked", sim.BenchmarkReplay, []Point{burst}, "benchmark replay (ramp-up and drain included)"},
	} {
		if got := (Prediction{Mode: tt.mode, Points: tt.points}).HowSimulated(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
