// Package series owns what capsim knows about measured records as
// benchmark runs, before any deployment or cost enters:
//
//   - series: which records are one configuration × workload shape
//     measured at several loads (Group, by results.SeriesKey);
//   - a record's workload shape: the lengths a user asked for (Requested;
//     results.ShapeKey names a series' nominal shape);
//   - a record's realised output length and the prompts simulated per load
//     point (Workloads, Prompts): what the fit, plot, predict's record mode
//     and validate all simulate for the same record;
//   - a record's place on the load axis (X).
//
// It imports results, model, sim and datasets (and internal/stats), none of
// which imports it, so calibrate, predict and the CLI can all share it.
package series
