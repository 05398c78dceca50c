// Package results reads measured benchmark results into normalized records:
// one Record per measured load point, with its source (file, section, line),
// system, workload and every metric the source gives under vLLM bench
// serve's names. A metric the source does not give is absent, never zero.
//
// Parse (or ParseFile) sniffs the format and accepts:
//   - vLLM bench serve result JSON as --save-result writes it (also
//     --save-detailed and --append-result files, JSON arrays, and objects
//     concatenated "}{" or inside {% highlight json %} / ```json blocks of a
//     page): ParseVLLMJSON;
//   - vLLM's printed "Serving Benchmark Result" blocks: ParseVLLMText;
//   - markdown result tables under configuration and "ISL:OSL=a:b" headings:
//     ParseMarkdown;
//   - HTML result tables, including column groups such as
//     "Pipeline (Gen TPS)" / "Tensor (Gen TPS)": ParseHTML.
//
// Bad input — a malformed or truncated file, a missing cell, a non-numeric
// value, a JSON value of the wrong type — gives one *Error whose text is a
// single line, "results: FILE:LINE: field "X": message"; a parser never
// returns records together with an error and never drops a row silently.
//
// What a document's prose says and no parser can read (GPU, model, engine
// version, topology, arrival process, engine settings) comes from a Meta
// (NAME.meta.json next to the data file) applied with Meta.Apply. Annotate
// flags cheap anomalies (throughput dips, latency inversions, slow first
// requests, high error rates, duplicates) without dropping anything.
//
// Writing vLLM result JSON belongs to package loadgen; this package only
// reads. It imports model and nothing else of capsim.
package results
