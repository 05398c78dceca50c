package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/capsim/capsim/internal/optionerr"
)

// MaxSequenceTokens bounds one request's prompt or output wherever capsim
// reads a length (flags, result files, sidecars, profiles): ten million
// tokens, more than any model's context, keeps the loops over a prompt's
// chunks in the fit and the simulator short.
const MaxSequenceTokens = 10_000_000

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
// Its JSON form is {"kind", "max_concurrency", "request_rate", "burstiness"}
// with the rate written as vLLM writes request_rate: a number, or "inf"
// for a burst.
type Load struct {
	Kind        LoadKind
	Concurrency int     // max_concurrency; 0 means uncapped (open loop)
	Rate        float64 // requests per second; +Inf for Burst
	Burstiness  float64 // gamma shape; 1 is Poisson
}

// loadJSON is Load's JSON form.
type loadJSON struct {
	Kind        LoadKind        `json:"kind"`
	Concurrency int             `json:"max_concurrency,omitempty"`
	Rate        json.RawMessage `json:"request_rate,omitempty"`
	Burstiness  float64         `json:"burstiness,omitempty"`
}

// MarshalJSON writes the load with its rate as vLLM's request_rate: a
// number, "inf" for a burst, absent for a closed loop.
func (l Load) MarshalJSON() ([]byte, error) {
	j := loadJSON{Kind: l.Kind, Concurrency: l.Concurrency, Burstiness: l.Burstiness}
	if l.Kind != ClosedLoop && (l.Rate != 0 || l.Kind == Burst) {
		if s := l.RateString(); s == "inf" {
			j.Rate = json.RawMessage(`"inf"`)
		} else {
			j.Rate = json.RawMessage(s)
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; request_rate may be a
// number or a string holding one, or "inf".
func (l *Load) UnmarshalJSON(b []byte) error {
	var j loadJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("model: load: %w", err)
	}
	*l = Load{Kind: j.Kind, Concurrency: j.Concurrency, Burstiness: j.Burstiness}
	if len(j.Rate) == 0 || string(j.Rate) == "null" {
		if l.Kind == Burst {
			l.Rate = math.Inf(1)
		}
		return nil
	}
	txt := strings.Trim(string(j.Rate), `"`)
	if strings.EqualFold(txt, "inf") {
		l.Rate = math.Inf(1)
		return nil
	}
	r, err := strconv.ParseFloat(txt, 64)
	if err != nil {
		return fmt.Errorf("model: load: request_rate %s is neither a number nor \"inf\"", j.Rate)
	}
	l.Rate = r
	return nil
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
		if l.Rate < MinRate {
			return fmt.Errorf("model: load: request_rate %v is below %v, the slowest rate capsim simulates (one request every 11.6 days)", l.Rate, MinRate)
		}
		if msg := burstinessProblem(l.Burstiness); msg != "" {
			return errors.New("model: load: " + msg)
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

// Label is the load's short form for tables and markers: "c=16",
// "2.5 req/s" ("2.5 req/s c<=8" with a concurrency cap) or "burst".
func (l Load) Label() string {
	switch l.Kind {
	case ClosedLoop:
		return "c=" + strconv.Itoa(l.Concurrency)
	case OpenLoop:
		s := l.RateString() + " req/s"
		if l.Concurrency > 0 {
			s += " c<=" + strconv.Itoa(l.Concurrency)
		}
		return s
	}
	return "burst"
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

// ParseConcurrencies reads a comma list of concurrencies ("1,4,16") as
// closed-loop loads.
func ParseConcurrencies(list string) ([]Load, error) {
	var loads []Load
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, optionerr.New("model: ", nil, "%q is not a positive integer", strings.TrimSpace(f))
		}
		loads = append(loads, Closed(n))
	}
	return loads, nil
}

// ParseRates reads a comma list of request rates in req/s ("2,4.5,inf")
// as open-loop loads of the given burstiness; "inf" is a burst.
func ParseRates(list string, burstiness float64) ([]Load, error) {
	if err := CheckBurstiness(burstiness); err != nil {
		return nil, err
	}
	var loads []Load
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		r, err := strconv.ParseFloat(f, 64)
		if strings.EqualFold(f, "inf") {
			r, err = math.Inf(1), nil
		}
		if err != nil || !(r > 0) || math.IsNaN(r) {
			return nil, optionerr.New("model: ", nil, "%q is not a positive number of requests per second", f)
		}
		if r < MinRate {
			return nil, optionerr.New("model: ", nil, "%s req/s is below %v, the slowest rate capsim simulates (one request every 11.6 days)", f, MinRate)
		}
		loads = append(loads, Open(r, burstiness))
	}
	return loads, nil
}

// CheckBurstiness reports a gamma shape of arrival gaps that is not a
// positive finite number (an infinite shape would space arrivals exactly,
// which the gamma sampler cannot draw).
func CheckBurstiness(b float64) error {
	if msg := burstinessProblem(b); msg != "" {
		return optionerr.New("model: ", nil, "%s", msg)
	}
	return nil
}

// MinRate is the slowest request rate capsim simulates: slower, the
// arrival times lose the precision latencies need (1e-300 req/s ran with
// all-zero latencies).
const MinRate = 1e-6

// MinBurstiness is the smallest gamma shape of arrival gaps: below it most
// gaps the sampler draws underflow to zero (half of them at 0.001), so the
// arrivals are bursts whatever the rate says.
const MinBurstiness = 0.01

// burstinessProblem says what is wrong with a gamma shape, "" if nothing.
func burstinessProblem(b float64) string {
	if !(b > 0) || math.IsInf(b, 0) {
		return fmt.Sprintf("burstiness must be a positive finite number, got %v", b)
	}
	if b < MinBurstiness {
		return fmt.Sprintf("burstiness %v is below %v: the gamma gaps underflow to zero and the arrivals become one burst", b, MinBurstiness)
	}
	return ""
}
