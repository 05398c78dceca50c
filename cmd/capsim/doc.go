// Command capsim predicts LLM-serving capacity from benchmark-calibrated
// simulation.
//
// It only parses flags, calls one library function per command and formats
// what comes back: data (results.LoadFiles, results.Filter), fit
// (calibrate.Fit), predict (predict.Run), plan (plan.Run), plot
// (predict.Series and package plots), validate (predict.Records, or
// loadgen.RunPoints then predict.Run) and bench (loadgen.RunPoints). Domain
// rules live in those packages; errors naming a flag are made here, as are
// the command-line conventions: capsim help and version, did-you-mean
// hints (internal/suggest), progress lines with the time left and --quiet
// (internal/progress), and --format csv (the table's rows as CSV).
package main
