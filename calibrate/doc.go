// Package calibrate fits per-worker prefill and decode step costs to
// measured benchmark records and writes them as a versioned profile, and
// turns a profile back into simulator configurations.
//
// A worker's step time is model.StepCost: the roofline is the peak-hardware
// time of each kind of work for a GPU, model and TP degree, each step's
// GEMMs priced as the smooth roofline of their compute and memory time; the
// coefficients are the engine's CPU overheads and inverse efficiencies,
// kept physical (never faster than peak; a fit at that bound is reported).
// Fit estimates one coefficient set per role (prefill, decode, aggregated)
// and (GPU, model, engine) group, shared by every TP degree, in two stages:
// a regularised least-squares fit of low-load TTFT and of TPOT (stage 1),
// then a Nelder–Mead refinement of a few log multipliers against
// simulations of every measured point (stage 2). Points the fit cannot
// explain are flagged with a reason and kept. Each point simulates the
// workload series.Workloads gives its record, with FitSeed.
//
// What it owns:
//   - the profile (JSON schema "capsim.profile/v1", profile.go): coefficients
//     with their uncertainty, engine settings, provenance, residuals and
//     calibrated series; names in it are catalog names, resolved once when
//     parsed (ParseProfile, LoadProfile);
//   - resolution of user names and engine labels to a calibrated target
//     (target.go: Resolve, RecordTarget, and profile.go: ResolveEngine,
//     DefaultEngine — one engine version for every GPU when none is named);
//     labels are parsed by engine.Parse, defaults come from
//     engine.Defaults;
//   - the one function that prices a deployment into a sim.Config
//     (deployment.go: pricing.build), used by Configure for profile costs
//     and by the fit for trial costs; Deployment.WithWorkload adds the
//     workload, and Simulate runs it (the frontend latency is part of the
//     configuration, never patched on afterwards);
//   - derivation of costs for TP degrees, GPUs or models without data:
//     another TP or engine version of the same GPU and model is carried
//     from its own group; another GPU or model is priced from every
//     fitted group pooled (pooled.go), said in each pool's Derivation.
//   - the cross-group validation (holdout.go): with Options.CV, Fit leaves
//     out every GPU, engine version and source in turn and reports the
//     held-out errors and ±1σ band coverage; derived costs take their CPU
//     overheads from the engine table (engine.OverheadFor).
package calibrate
