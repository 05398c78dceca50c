package model

import (
	"fmt"
	"math"
	"strconv"
)

// LoadKind says how a benchmark offers requests.
type LoadKind string

const (
	// ClosedLoop keeps Concurrency requests in flight; each client sends its next request when the last completes.
	ClosedLoop LoadKind = "concurrency"
	// OpenLoop sends requests at Rate per second with gamma inter-arrival gaps of shape Burstiness.
	OpenLoop LoadKind = "rate"
	// Burst sends every prompt at once (vLLM's request_rate = inf without a concurrency cap).
	Burst LoadKind = "burst"
)

// Load is the offered load of one benchmark point, in vLLM bench serve's terms.
// An open-loop run may also carry a concurrency cap (max_concurrency).
type Load struct {
	Kind        LoadKind `json:"kind"`
	Concurrency int      `json:"max_concurrency,omitempty"`
	Rate        float64  `json:"-"`                    // requests per second; +Inf for Burst
	Burstiness  float64  `json:"burstiness,omitempty"` // gamma shape; 1 is Poisson
}

// Closed returns a closed-loop load of n concurrent clients.
func Closed(n int) Load { return Load{Kind: ClosedLoop, Concurrency: n} }

// Open returns an open-loop load at rate req/s with the given burstiness (0 means 1, Poisson).
func Open(rate, burstiness float64) Load {
	if burstiness == 0 {
		burstiness = 1
	}
	if math.IsInf(rate, 1) {
		return Load{Kind: Burst, Rate: rate, Burstiness: burstiness}
	}
	return Load{Kind: OpenLoop, Rate: rate, Burstiness: burstiness}
}

// Validate reports a load that cannot be simulated or benchmarked.
func (l Load) Validate() error {
	switch l.Kind {
	case ClosedLoop:
		if l.Concurrency <= 0 {
			return fmt.Errorf("model: load: max_concurrency must be positive, got %d", l.Concurrency)
		}
	case OpenLoop:
		if !(l.Rate > 0) || math.IsInf(l.Rate, 0) {
			return fmt.Errorf("model: load: request_rate must be a positive number, got %v", l.Rate)
		}
		if !(l.Burstiness > 0) {
			return fmt.Errorf("model: load: burstiness must be positive, got %v", l.Burstiness)
		}
	case Burst:
	default:
		return fmt.Errorf("model: load: unknown kind %q", l.Kind)
	}
	if l.Concurrency < 0 {
		return fmt.Errorf("model: load: max_concurrency must not be negative")
	}
	return nil
}

// RateString formats the rate as vLLM does, "inf" for a burst.
func (l Load) RateString() string {
	if l.Kind == Burst || math.IsInf(l.Rate, 1) {
		return "inf"
	}
	return strconv.FormatFloat(l.Rate, 'g', -1, 64)
}

// X is the load's value on a plot's or a table's x axis: concurrency for
// closed loop, rate for open loop, +Inf for a burst.
func (l Load) X() float64 {
	if l.Kind == ClosedLoop {
		return float64(l.Concurrency)
	}
	return l.Rate
}

// String is "concurrency 16", "rate 2.5 req/s" or "burst".
func (l Load) String() string {
	switch l.Kind {
	case ClosedLoop:
		return fmt.Sprintf("concurrency %d", l.Concurrency)
	case OpenLoop:
		return fmt.Sprintf("rate %s req/s", l.RateString())
	default:
		return "burst"
	}
}
