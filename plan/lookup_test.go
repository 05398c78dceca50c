package plan

import (
	"github.com/capsim/capsim/internal/catalogtest"
	"testing"

	"github.com/capsim/capsim/model"
)

// mustGPU and mustLLM look up the catalog entries a calibrate.Target carries.
func mustGPU(t testing.TB, name string) model.GPU { t.Helper(); return catalogtest.GPU(t, name) }

func mustLLM(t testing.TB, name string) model.LLM { t.Helper(); return catalogtest.LLM(t, name) }

func TestRoundDecimals(t *testing.T) {
	for _, c := range [][3]float64{{123.4567, 3, 123.457}, {0.00049, 3, 0}, {1234.5, 0, 1235}} {
		if got := roundDecimals(c[0], int(c[1])); got != c[2] {
			t.Errorf("roundDecimals(%v, %v) = %v, want %v", c[0], c[1], got, c[2])
		}
	}
}
