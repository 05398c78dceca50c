// Package results reads and writes measured benchmark results: vLLM bench
// serve result JSON (single files or objects concatenated inside a page),
// vLLM's plain-text "Serving Benchmark Result" blocks, markdown and HTML
// result tables. Every measured load point becomes one Record with its
// source (file, section, line), system, workload and vLLM-named metrics.
package results
