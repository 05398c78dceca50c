// Package parallel runs independent jobs, identified by index, on a fixed
// number of goroutines: the fan-out the fit, predictions and the plan
// search share. Each job writes its own slot of the caller's slices, so
// results come back in index order whatever the scheduling.
package parallel
