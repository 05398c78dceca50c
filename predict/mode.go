package predict

import (
	"fmt"

	"github.com/capsim/capsim/sim"
)

// HowSimulated says how the prediction's points were simulated: a
// benchmark replay, or steady state with the most requests measured at a
// point.
func (p Prediction) HowSimulated() string {
	if p.Mode != sim.SteadyState {
		return "benchmark replay (ramp-up and drain included)"
	}
	measured := 0
	for _, pt := range p.Points {
		if pt.Steady != nil {
			measured = max(measured, pt.Steady.Measured)
		}
	}
	return fmt.Sprintf("steady state (warm-up left out; up to %d measured requests a point)", measured)
}
