// Package calibrate fits per-worker prefill and decode step costs to
// measured benchmark records and writes them as a versioned profile.
package calibrate
