// Package progress prints how far long work has come, with an estimate of
// the time left, for the command line: one line per update, at most every
// Interval, always at the end of a stage, and nothing at all when quiet.
// It knows nothing of what the work is; callers pass a label and counts.
package progress
