// Command capsim predicts LLM-serving capacity from benchmark-calibrated
// simulation.
//
// It only parses flags, calls one library function per command and formats
// what comes back: data (results.LoadPatterns, results.Filter), fit
// (calibrate.Fit), predict (predict.Run; --plot figures.WritePrediction,
// --export deploy.Export), plan (plan.Run; figures.WritePareto), plot
// (figures.WriteDir), validate (predict.ValidateRecords, or predict.Run and
// loadgen.RunPoints) and bench (loadgen.RunPoints). Domain rules live in
// those packages; errors naming a flag are made here (hints.go), as are the
// command-line conventions: capsim help and version (internal/buildinfo),
// did-you-mean hints (internal/suggest), progress lines with the time left
// and --quiet (internal/progress), and --format table|json|csv
// (internal/textout).
package main
