// Package plots draws fitted versus measured curves, residuals and
// prediction charts with gonum/plot.
//
// It knows nothing about calibration or prediction: callers convert their
// results into the plain input types here (Series, Prediction, Summary,
// IndexEntry) and get back a *Figure to Render as PNG or SVG, or to Save.
//
//   - SeriesFigure: one configuration × workload shape, a panel per metric
//     against load (log₂ x axis), measured points as markers, flagged ones
//     as red crosses, the calibrated simulation as a line.
//   - SummaryFigure: predicted against measured for every point, log–log,
//     with y = x and ±10% lines, one colour per metric family.
//   - PredictionFigure: predicted curves with the knee and TTFT blow-up
//     marked, an uncertainty band and an optional measured overlay.
//   - WriteIndex: one HTML page listing every figure with its errors.
//
// Figures are readable at a glance: axis labels carry units, legends sit
// in a strip above the panels so they never hide data, and a metric keeps
// its colour in every figure (MetricColor).
//
// Bad values never reach gonum, which panics on non-positive values on a
// log axis: loads that are not positive and finite are skipped, NaN and
// ±Inf values are skipped, the summary leaves out (and counts) pairs with a
// non-positive value, and a panel with nothing left says "no data". Linear
// y axes start at zero, so zero values plot. Rendering is deterministic: the
// same figure renders to the same SVG bytes.
package plots
