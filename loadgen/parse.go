package loadgen

import (
	"fmt"
	"math"

	"github.com/capsim/capsim/model"
)

// ParseEndpoint reads an endpoint name: "completions" or "chat".
func ParseEndpoint(s string) (Endpoint, error) {
	switch e := Endpoint(s); e {
	case Completions, Chat:
		return e, nil
	}
	return "", fmt.Errorf("loadgen: endpoint must be %q or %q, got %q", Completions, Chat, s)
}

// CapOpen is an open-loop load as vllm bench serve runs it with
// --max-concurrency maxConcurrency (0: no cap): at most that many requests
// in flight, and an infinite rate's burstiness ignored.
func CapOpen(l model.Load, maxConcurrency int) model.Load {
	l.Concurrency = maxConcurrency
	if math.IsInf(l.Rate, 1) {
		l.Burstiness = 1
	}
	return l
}
