// Package series owns what capsim knows about measured records as
// benchmark runs, before any deployment or cost enters:
//
//   - the series key: which records are one configuration × workload shape
//     measured at several loads (Key, Group);
//   - a record's workload shape: the lengths a user asked for (Requested)
//     and the nominal shape that names a series (ShapeKey);
//   - a record's realised output length and the prompts simulated per load
//     point (Workloads, Prompts): what the fit, plot, predict's record mode
//     and validate all simulate for the same record;
//   - a record's place on the load axis (X).
//
// It imports results, model, sim and datasets (and internal/stats), none of
// which imports it, so calibrate, predict and the CLI can all share it.
package series
