package calibrate

import (
	"bytes"
	"strings"
	"testing"
)

// The cross-group hold-out rows print with their errors and band coverage.
func TestFitTablePrintsHoldout(t *testing.T) {
	t.Parallel()
	rep := &Report{Holdout: []HoldoutReport{
		{Kind: HoldoutGPU, Fold: "H20", Points: 12, APE: map[string]APE{"mean_tpot_ms": {Median: 7.25, Max: 20}},
			Coverage: map[string]float64{"all": 0.67}},
		{Kind: HoldoutGPU, Fold: "all", Points: 12, Failed: 2, APE: map[string]APE{}, Coverage: map[string]float64{}},
	}}
	var b bytes.Buffer
	if err := WriteReportTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Leave-one-GPU-, engine-version- and source-out", "coverage", "H20", "7.2/20", "0.67"} {
		if !strings.Contains(out, want) {
			t.Errorf("fit table lacks %q:\n%s", want, out)
		}
	}
}
