package predict

import (
	"fmt"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/workload"
)

// Measured is one load point measured on a live server.
type Measured struct {
	Load                          model.Load
	Metrics                       map[string]float64
	NumPrompts, Completed, Failed int
	FailureNote                   string // why requests failed, e.g. " (http_500 4)"
}

// AddMeasured compares measured load points of shape with pred's points, in
// order, and warns of every point where requests failed.
func (v *Validation) AddMeasured(shape workload.Workload, pred Prediction, ms []Measured) {
	for i, m := range ms {
		if m.Failed > 0 {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s: %d of %d requests failed%s; latencies are over the completed ones",
				m.Load, m.Failed, m.NumPrompts, m.FailureNote))
		}
		pt := ComparePoint(m.Load, shape, pred.Points[i].Metrics, m.Metrics)
		pt.NumPrompts, pt.Completed, pt.Failed = m.NumPrompts, m.Completed, m.Failed
		pt.ExactOutput = pred.ExactOutput
		v.Points = append(v.Points, pt)
	}
}
