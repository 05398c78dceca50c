// Package calibrate fits per-worker prefill and decode step costs to
// measured benchmark records and writes them as a versioned profile.
//
// A worker's step time is model.StepCost: the roofline is the peak-hardware
// time of each kind of work for a GPU, model and TP degree, each step's
// GEMMs priced as the larger of their compute and memory time; the
// coefficients are the engine's CPU overheads and inverse efficiencies,
// kept physical (never faster than peak; a fit at that bound is reported).
// Fit estimates one coefficient set per role (prefill, decode, aggregated)
// and (GPU, model, engine) group, shared by every TP degree, in two stages:
// a regularised least-squares fit of low-load TTFT and of TPOT (stage 1),
// then a Nelder–Mead refinement of a few log multipliers against
// simulations of every measured point (stage 2). Points the fit cannot
// explain are flagged with a reason and kept.
//
// A Profile (JSON schema "capsim.profile/v1") holds the coefficients with
// their uncertainty, the engine settings, provenance, per-point residuals
// and the calibrated series. Profile.Configure turns a GPU, model, engine
// and topology into a sim.Config, deriving costs for TP degrees, GPUs or
// models without data from the nearest fitted group and saying so (their
// CPU overheads from the engine table, model.EngineOverheadFor). With
// Options.CV, Fit also leaves out every GPU, engine version and source in
// turn and reports the held-out errors and ±1σ band coverage.
package calibrate
