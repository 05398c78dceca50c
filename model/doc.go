// Package model is capsim's vocabulary: deployment topology (6xTP2), offered
// load, engine steps, vLLM metric names, and the GPU and LLM catalogs with
// memory feasibility, the interconnect catalog, the per-engine-version CPU
// overheads and the physical (roofline) form of step costs.
//
// It imports nothing else of capsim; every other package builds on it.
package model
