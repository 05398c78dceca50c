package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/capsim/capsim/datasets"
)

// Independent random streams derived from Config.Seed, so that changing the
// arrival process does not shift the lengths drawn and vice versa.
const (
	streamArrivals = 0x61727269            // "arri"
	streamInput    = datasets.InputStream  // "inpu", shared with loadgen
	streamOutput   = datasets.OutputStream // "outp", shared with loadgen
	streamRoute    = 0x726f7574            // "rout"
)

func newStream(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// lengthSource draws one run's lengths of dist from its own stream. An
// empirical distribution is dealt like a shuffled deck (datasets.Deck, the
// deal the load generator also uses): every value once, in a random order,
// then reshuffled.
type lengthSource struct {
	dist LengthDist
	r    *rand.Rand
	deck *datasets.Deck
	// kind is lenFixed or lenUniform when newLengthSource set fixed or
	// lo and span: lengths drawn without comparing dist's kind and copying
	// dist for each request (5% of a fit), as draw draws them.
	kind            uint8
	fixed, lo, span int
}

const (
	lenOther uint8 = iota
	lenFixed
	lenUniform
)

func newLengthSource(d LengthDist, r *rand.Rand) lengthSource {
	s := lengthSource{dist: d, r: r}
	switch d.Kind {
	case "fixed":
		s.kind, s.fixed = lenFixed, int(math.Round(d.Mean))
	case "uniform":
		s.kind, s.lo, s.span = lenUniform, d.Min, d.Max-d.Min+1
	}
	return s
}

func (s *lengthSource) next() int {
	switch s.kind {
	case lenFixed:
		return s.fixed
	case lenUniform:
		return s.lo + s.r.IntN(s.span)
	}
	if s.dist.Kind != "empirical" {
		return s.dist.draw(s.r)
	}
	if s.deck == nil {
		s.deck = datasets.NewDeck(s.dist.Values, s.r)
	}
	return s.deck.Next()
}

// validate checks a length distribution; field names the Config field for errors.
func (l LengthDist) validate(field string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("sim: Config.%s.%s", field, fmt.Sprintf(format, a...))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !finite(l.Mean) || !finite(l.Std) {
		return bad("Mean and Std must be finite numbers")
	}
	if l.Min < 0 || l.Max < 0 {
		return bad("Min and Max must not be negative")
	}
	if l.Max > 0 && l.Min > l.Max {
		return bad("Min (%d) must not exceed Max (%d)", l.Min, l.Max)
	}
	switch l.Kind {
	case "fixed":
		if math.Round(l.Mean) < 1 {
			return bad("Mean must be at least 1 token for a fixed length, got %v", l.Mean)
		}
	case "uniform":
		if l.Min < 1 || l.Max < l.Min {
			return bad("Min and Max must satisfy 1 ≤ Min ≤ Max for a uniform length, got %d..%d", l.Min, l.Max)
		}
	case "normal", "lognormal":
		if !(l.Mean >= 1) || l.Std < 0 {
			return bad("Mean must be at least 1 and Std non-negative for a %s length", l.Kind)
		}
	case "exponential":
		if !(l.Mean >= 1) {
			return bad("Mean must be at least 1 for an exponential length, got %v", l.Mean)
		}
	case "empirical":
		if len(l.Values) == 0 {
			return bad("Values must not be empty for an empirical length")
		}
		for i, v := range l.Values {
			if v < 1 {
				return bad("Values[%d] must be at least 1, got %d", i, v)
			}
		}
	case "":
		return bad("Kind must be set (fixed, uniform, normal, lognormal, exponential or empirical)")
	default:
		return bad("Kind %q is unknown (want fixed, uniform, normal, lognormal, exponential or empirical)", l.Kind)
	}
	return nil
}

// draw returns one length, at least 1 token, clipped to Min..Max when those are set.
func (l LengthDist) draw(r *rand.Rand) int {
	var x float64
	switch l.Kind {
	case "fixed":
		return int(math.Round(l.Mean))
	case "uniform":
		return l.Min + r.IntN(l.Max-l.Min+1)
	case "normal":
		x = l.Mean + l.Std*r.NormFloat64()
	case "lognormal":
		s2 := math.Log1p(l.Std * l.Std / (l.Mean * l.Mean))
		x = math.Exp(math.Log(l.Mean) - s2/2 + math.Sqrt(s2)*r.NormFloat64())
	case "exponential":
		x = l.Mean * r.ExpFloat64()
	}
	n := int(math.Round(x))
	if n < l.Min {
		n = l.Min
	}
	if l.Max > 0 && n > l.Max {
		n = l.Max
	}
	if n < 1 {
		n = 1
	}
	return n
}

// MinLen is the smallest length the distribution can yield (at least 1).
func (l LengthDist) MinLen() int {
	switch l.Kind {
	case "fixed":
		return max(1, int(math.Round(l.Mean)))
	case "empirical":
		if len(l.Values) == 0 {
			return 1
		}
		return max(1, slices.Min(l.Values))
	}
	return max(1, l.Min)
}

// MaxLen is the largest length the distribution can yield, or -1 when unbounded.
func (l LengthDist) MaxLen() int {
	switch l.Kind {
	case "fixed":
		return int(math.Round(l.Mean))
	case "uniform":
		return l.Max
	case "empirical":
		m := 0
		for _, v := range l.Values {
			m = max(m, v)
		}
		return m
	}
	if l.Max > 0 {
		return l.Max
	}
	return -1
}

// gamma draws from Gamma(shape, scale) by Marsaglia and Tsang's method
// (with the shape < 1 boost), using only r.
func gamma(r *rand.Rand, shape, scale float64) float64 {
	if shape == 1 {
		return scale * r.ExpFloat64()
	}
	boost := 1.0
	if shape < 1 {
		// Gamma(a) = Gamma(a+1) · U^(1/a)
		boost = math.Pow(1-r.Float64(), 1/shape)
		shape++
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for {
			x = r.NormFloat64()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := 1 - r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return scale * d * v * boost
		}
	}
}
