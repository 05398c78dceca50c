package plan

import (
	"testing"

	"github.com/capsim/capsim/model"
)

func TestPareto(t *testing.T) {
	t.Parallel()
	pts := []FrontierPoint{
		{Notation: "a", PerUser: 10, OutputPerGPU: 100},
		{Notation: "b", PerUser: 20, OutputPerGPU: 50},
		{Notation: "c", PerUser: 15, OutputPerGPU: 40}, // beaten by b on both
		{Notation: "d", PerUser: 5, OutputPerGPU: 90},  // beaten by a on both
		{Notation: "e", PerUser: 30, OutputPerGPU: 10},
		{Notation: "f", PerUser: 10, OutputPerGPU: 80}, // ties a on speed, less throughput
	}
	got := Pareto(pts)
	want := []string{"e", "b", "a"}
	if len(got) != len(want) {
		t.Fatalf("Pareto = %+v, want %v", got, want)
	}
	for i := range want {
		if got[i].Notation != want[i] {
			t.Errorf("Pareto[%d] = %s, want %s", i, got[i].Notation, want[i])
		}
	}
	if len(Pareto(nil)) != 0 {
		t.Error("Pareto(nil) not empty")
	}
}

func TestNotation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		topo model.Topology
		want string
	}{
		{model.Aggregated(model.Pool{Count: 4, TP: 4}), "4xTP4"},
		{model.Disaggregated(model.Pool{Count: 6, TP: 2}, model.Pool{Count: 1, TP: 4}), "6P(TP2) 1D(TP4)"},
	}
	for _, tc := range tests {
		if got := Notation(tc.topo); got != tc.want {
			t.Errorf("Notation(%v) = %q, want %q", tc.topo, got, tc.want)
		}
		back, err := model.ParseTopology(tc.want)
		if err != nil || back.String() != tc.topo.String() {
			t.Errorf("ParseTopology(%q) = %v, %v; want %v", tc.want, back, err, tc.topo)
		}
	}
}
