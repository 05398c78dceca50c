// Package model is capsim's vocabulary: deployment topology (6xTP2,
// 3P(TP4) 1D(TP4), with pipeline parallelism kept), offered load (Load, its
// vLLM JSON form and Label), engine steps, vLLM metric names, the GPU and
// LLM catalogs with memory feasibility (the LLM catalog is embedded Hugging
// Face config.json files, read by ParseHFConfig as users' files are), the
// interconnect catalog, quantized checkpoints (quant.go), the physical
// (roofline) form of step costs, and:
//   - canonical GPU and model names (names.go), resolved once at the border;
//   - the one accuracy measure (accuracy.go: AbsPctError, in percent).
//
// Engine labels, settings and CPU overheads are package engine's; beside
// it, model imports nothing else of capsim, and every other package
// builds on it.
package model
