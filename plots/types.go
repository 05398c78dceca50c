package plots

import (
	"math"
	"strings"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// X-axis labels for the two ways a benchmark offers load.
const (
	XConcurrency = "concurrency"
	XRequestRate = "request rate (req/s)"
)

// DefaultPanels are the metrics a series or prediction figure shows when
// its Metrics field is nil: one panel each, in this order (2×2).
var DefaultPanels = []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL}

// Point is one load point of a measured series.
//
// A point may carry only Measured values, only Fitted values (to draw the
// simulated curve on a finer grid than the measurements) or both.
type Point struct {
	// X is the offered load: concurrency or request rate. Points whose X is
	// not a positive finite number are skipped, because the x axis is log₂.
	X float64
	// Measured and Fitted hold values by vLLM metric name. A metric that is
	// absent, NaN or ±Inf is skipped at this point.
	Measured map[string]float64
	Fitted   map[string]float64
	// Flagged marks a measurement the calibration did not trust (it is drawn
	// as a red ×, not a filled circle); FlagReason is shown in the footer.
	Flagged    bool
	FlagReason string
}

// Series is one configuration × workload shape: what SeriesFigure draws.
type Series struct {
	// Title names the configuration, shape and median error (the caller
	// writes it); Subtitle is an optional second, smaller line.
	Title, Subtitle string
	// XLabel is XConcurrency or XRequestRate; "" means XConcurrency.
	XLabel string
	// Metrics are the panels, by vLLM metric name; nil means DefaultPanels.
	Metrics []string
	Points  []Point
}

// PredPoint is one predicted load point.
type PredPoint struct {
	// X is the offered load; not positive or not finite means skipped.
	X float64
	// Metrics are the predicted values by vLLM metric name.
	Metrics map[string]float64
	// Lo and Hi bound the uncertainty band by metric name. The band is
	// drawn where both are finite; Lo > Hi is tolerated (they are swapped).
	Lo, Hi map[string]float64
}

// Marker is a load worth pointing at, drawn as a labelled vertical line.
type Marker struct {
	X float64
	// Label is the text at the top of the line, e.g. "knee: 48 (9.1 req/s)";
	// "" means "knee" or "TTFT blow-up".
	Label string
}

// Prediction is what PredictionFigure draws: predicted curves against load.
type Prediction struct {
	Title, Subtitle string
	// XLabel is XConcurrency or XRequestRate; "" means XConcurrency.
	XLabel string
	// Metrics are the panels; nil means DefaultPanels.
	Metrics []string
	Points  []PredPoint
	// Knee and TTFTBlowup are marked in every panel when not nil.
	Knee, TTFTBlowup *Marker
	// Measured, when not empty, is overlaid as markers (Fitted is ignored).
	Measured []Point
	// P99 also draws, in each panel of a mean ("mean_ttft_ms"), the
	// predicted p99 of the same latency as a dashed curve: SLOs are p99s.
	P99 bool
}

// Pair is one measured value and the prediction for it.
type Pair struct {
	Metric              string
	Measured, Predicted float64
}

// Summary is what SummaryFigure draws: every predicted value against its
// measurement, for all series at once.
type Summary struct {
	Title, Subtitle string
	Pairs           []Pair
}

// IndexEntry is one figure listed by WriteIndex.
type IndexEntry struct {
	// File is the figure's path relative to the index file.
	File  string
	Title string
	// GPU, Model and Engine group the entries on the page; empty ones are
	// listed under "all series".
	GPU, Model, Engine string
	// Errors are median absolute percentage errors by metric name, in
	// percent (model.AbsPctError's unit: 8.1 is shown as 8.1%).
	Errors map[string]float64
}

// LoadX returns the x coordinate of a load for a figure: the concurrency of
// a closed loop or the rate of an open loop. Burst loads (infinite rate)
// have no place on a log axis and return false.
func LoadX(l model.Load) (float64, bool) {
	if l.Kind != model.ClosedLoop && l.Kind != model.OpenLoop {
		return 0, false
	}
	return l.X(), validX(l.X())
}

// XLabelFor returns the x-axis label for a kind of load.
func XLabelFor(kind model.LoadKind) string {
	if kind == model.OpenLoop {
		return XRequestRate
	}
	return XConcurrency
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// validX reports whether x can sit on a log axis.
func validX(x float64) bool { return x > 0 && finite(x) }

// PointFromRecord returns a record's load and metrics as a measured point,
// flagged when ingestion noted anomalies (calibration may flag more). It
// returns false for a load with no place on a log axis (burst).
func PointFromRecord(r *results.Record) (Point, bool) {
	x, ok := LoadX(r.Workload.Load)
	if !ok {
		return Point{}, false
	}
	return Point{
		X:          x,
		Measured:   r.Metrics,
		Flagged:    len(r.Anomalies) > 0,
		FlagReason: strings.Join(r.Anomalies, ", "),
	}, true
}
