// Package figures turns capsim's results into figures: it is the one place
// that converts measured series simulated by package predict, and
// predictions, into the plain inputs of package plots.
//
//   - WriteDir: every measured series against the calibrated simulation
//     (predict.Series), a summary of predicted against measured and an
//     index.html, written to a directory (capsim plot).
//   - WritePrediction: predicted curves with the band, knee and TTFT
//     blow-up, and the measured records of the same configuration overlaid
//     (capsim predict --plot).
//   - WritePareto: a plan's simulated deployments and Pareto frontier
//     (capsim plan --plot).
//
// It imports predict, plan and plots; plots itself knows nothing of
// prediction or planning.
package figures
