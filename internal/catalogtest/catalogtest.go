// Package catalogtest looks up the GPU and model catalogs' entries for
// tests, failing the test on a name the catalog lacks.
package catalogtest

import (
	"testing"

	"github.com/capsim/capsim/model"
)

// GPU is the GPU catalog's entry for name.
func GPU(t testing.TB, name string) model.GPU {
	t.Helper()
	g, err := model.LookupGPU(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// LLM is the model catalog's entry for name.
func LLM(t testing.TB, name string) model.LLM {
	t.Helper()
	m, err := model.LookupLLM(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
