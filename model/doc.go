// Package model is capsim's vocabulary: deployment topology (6xTP2,
// 3P(TP4) 1D(TP4), with pipeline parallelism kept), offered load (Load, its
// vLLM JSON form and Label), engine steps, vLLM metric names, the GPU and
// LLM catalogs with memory feasibility (the LLM catalog is embedded Hugging
// Face config.json files, read by ParseHFConfig as users' files are), the
// interconnect catalog, the per-engine-version CPU overheads (overhead.go), quantized checkpoints
// (quant.go), the physical (roofline) form of step costs, and:
//   - engine labels and defaults (engine.go): family and version
//     (ParseEngine), and the settings an engine computes for itself on a
//     GPU (DefaultsFor: block size, max-num-seqs, max-num-batched-tokens,
//     CUDA-graph sizes), release by release, as a plain table to extend;
//   - canonical GPU and model names (names.go), resolved once at the border;
//   - the one accuracy measure (accuracy.go: AbsPctError, in percent).
//
// It imports nothing else of capsim; every other package builds on it.
package model
