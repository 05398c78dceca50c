package figures

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/capsim/capsim/predict"
)

func TestUniqueName(t *testing.T) {
	used := map[string]int{}
	var got []string
	for _, n := range []string{"a", "b", "a", "a"} {
		got = append(got, UniqueName(used, n))
	}
	if strings.Join(got, " ") != "a b a-2 a-3" {
		t.Errorf("got %v", got)
	}
}

func TestWritePredictionRejects(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		path  string
		preds []predict.Prediction
		want  string
	}{
		{filepath.Join(dir, "p.png"), nil, "no prediction"},
		{filepath.Join(dir, "p.jpg"), []predict.Prediction{{}}, ".png or .svg"},
	} {
		if err := WritePrediction(tc.path, tc.preds, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.path, err, tc.want)
		}
	}
}
