package predict

import (
	"github.com/capsim/capsim/internal/catalogtest"
	"testing"

	"github.com/capsim/capsim/model"
)

// mustGPU and mustLLM look up the catalog entries a calibrate.Target carries.
func mustGPU(t testing.TB, name string) model.GPU { t.Helper(); return catalogtest.GPU(t, name) }

func mustLLM(t testing.TB, name string) model.LLM { t.Helper(); return catalogtest.LLM(t, name) }
