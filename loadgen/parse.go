package loadgen

import (
	"fmt"
	"math"
	"strings"

	"github.com/capsim/capsim/internal/optionerr"
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

// ParseMetadata reads KEY=VALUE pairs, as vllm bench serve's --metadata
// takes them, into the fields of Result.Metadata.
func ParseMetadata(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, optionerr.New("loadgen: ", nil, "metadata wants KEY=VALUE, got %q", kv)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}
