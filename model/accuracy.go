package model

import "math"

// AbsPctError is capsim's one accuracy measure: the absolute percentage
// error |predicted − measured| / measured × 100 of a prediction against a
// measurement. ok is false when the pair cannot be compared: a measurement
// that is not a positive finite number, or a prediction that is not finite.
func AbsPctError(measured, predicted float64) (pct float64, ok bool) {
	if !(measured > 0) || math.IsInf(measured, 0) || math.IsNaN(predicted) || math.IsInf(predicted, 0) {
		return 0, false
	}
	return 100 * math.Abs(predicted-measured) / measured, true
}
