package calibrate

import (
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// A fold's band coverage is also told per GPU class, so a band that
// covers overall but misses on one kind of hardware shows.
func TestCoverageByClass(t *testing.T) {
	held := func(gpu string, measured, lo, hi float64) heldOut {
		rec := &results.Record{ID: gpu}
		rec.System.GPU = gpu
		m := model.MeanTPOT
		return heldOut{p: &point{rec: rec}, measured: map[string]float64{m: measured},
			central: map[string]float64{m: (lo + hi) / 2}, lo: map[string]float64{m: lo}, hi: map[string]float64{m: hi}}
	}
	rep := summarise(HoldoutGPU, "all", []heldOut{
		held("H100", 10, 9, 11), held("H200", 20, 9, 11), // Hopper: one of two inside
		held("L40S", 10, 9, 11), held("L4", 10, 9, 11), // PCIe: both inside
		held("MI300X", 30, 9, 11), // AMD: none inside
	})
	want := map[string]ClassCoverage{"NVLink Hopper": {0.5, 2}, "PCIe": {1, 2}, "AMD": {0, 1}}
	if len(rep.CoverageByClass) != len(want) {
		t.Fatalf("coverage by class %v, want %v", rep.CoverageByClass, want)
	}
	for c, w := range want {
		if got := rep.CoverageByClass[c]; got != w {
			t.Errorf("%s: coverage %+v, want %+v", c, got, w)
		}
	}
	if got := rep.Coverage["all"]; got != 0.6 {
		t.Errorf("pooled coverage %v, want 0.6", got)
	}
}

// A held-out record states each pool's ±1σ beside what priced it, as
// predict prints a derivation, so a fold's band widths can be read
// against its errors from fit --cv's JSON without refitting the fold.
func TestPricedFromStatesEachPoolsBand(t *testing.T) {
	got := pricedFrom([]Derivation{
		{Role: RolePrefill, Pool: "4xTP1", Source: SourceDerived, From: "dynamo-1.2.1 on B200 / Llama prefill TP4", RelSigma: 1.86},
		{Role: RoleDecode, Pool: "1xTP4", Source: SourceFitted, From: "dynamo-1.2.1 on B200 / Llama decode TP4", RelSigma: 0.434},
	})
	want := "prefill 4xTP1: derived from dynamo-1.2.1 on B200 / Llama prefill TP4 (±186%); " +
		"decode 1xTP4: fitted from dynamo-1.2.1 on B200 / Llama decode TP4 (±43%)"
	if got != want {
		t.Errorf("priced from\n %q, want\n %q", got, want)
	}
}
