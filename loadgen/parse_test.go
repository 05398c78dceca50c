package loadgen

import (
	"math"
	"testing"
	"time"

	"github.com/capsim/capsim/model"
)

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Endpoint
		ok   bool
	}{{"completions", Completions, true}, {"chat", Chat, true}, {"embeddings", "", false}, {"", "", false}} {
		got, err := ParseEndpoint(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("%q: got %q, %v", tc.in, got, err)
		}
	}
}

func TestParseMetadata(t *testing.T) {
	m, err := ParseMetadata([]string{"gpu=H20", " tensor_parallel_size = 2 ", "note=a=b"})
	if err != nil || len(m) != 3 || m["gpu"] != "H20" || m["tensor_parallel_size"] != "2" || m["note"] != "a=b" {
		t.Errorf("got %v, %v", m, err)
	}
	for _, bad := range []string{"novalue", "=x", " =x"} {
		if _, err := ParseMetadata([]string{bad}); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestCapOpen(t *testing.T) {
	if l := CapOpen(model.Open(4, 0.5), 8); l.Concurrency != 8 || l.Burstiness != 0.5 {
		t.Errorf("finite rate: %+v", l)
	}
	if l := CapOpen(model.Open(math.Inf(1), 0.5), 0); l.Concurrency != 0 || l.Burstiness != 1 {
		t.Errorf("infinite rate: %+v, want burstiness 1 (vLLM ignores it)", l)
	}
}

func TestProgressLeft(t *testing.T) {
	for _, tc := range []struct {
		p    Progress
		want time.Duration
	}{
		{Progress{Total: 10, Done: 0, Elapsed: time.Second}, 0},
		{Progress{Total: 10, Done: 2, Elapsed: 4 * time.Second}, 16 * time.Second},
		{Progress{Total: 10, Done: 10, Elapsed: time.Second}, 0},
	} {
		if got := tc.p.Left(); got != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.p, got, tc.want)
		}
	}
}
