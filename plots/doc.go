// Package plots draws fitted versus measured curves, residuals and
// prediction charts with gonum/plot.
package plots
