package predict

import (
	"testing"

	"github.com/capsim/capsim/model"
)

// mustGPU and mustLLM look up the catalog entries a calibrate.Target carries.
func mustGPU(t testing.TB, name string) model.GPU {
	t.Helper()
	g, err := model.LookupGPU(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustLLM(t testing.TB, name string) model.LLM {
	t.Helper()
	m, err := model.LookupLLM(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
