// Package results reads measured benchmark results into normalized records:
// one Record per measured load point, with its source (file, section, line),
// system, workload and every metric the source gives under vLLM bench
// serve's names. A metric the source does not give is absent, never zero.
//
// Parse (or ParseFile) sniffs the format and accepts:
//   - vLLM bench serve result JSON as --save-result writes it (also
//     --save-detailed and --append-result files, JSON arrays, and objects
//     concatenated "}{" or inside {% highlight json %} / ```json blocks of a
//     page): ParseVLLMJSON. --metadata keys that state the system (gpu,
//     tensor_parallel_size, engine_version, …; see applySystem) fill System,
//     and E2E statistics come from the latencies array when the summary
//     lacks them;
//   - vLLM's printed "Serving Benchmark Result" blocks: ParseVLLMText;
//   - GuideLLM benchmark reports, JSON or YAML: ParseGuideLLM;
//   - NVIDIA AIPerf's profile_export_aiperf.json and genai-perf's
//     profile_export_genai_perf.json: ParseAIPerfJSON, ParseGenAIPerfJSON;
//     their aggregated CSVs: ParseProfileCSV;
//   - llm-d-benchmark reports v0.2 (YAML or JSON): ParseLLMDReport;
//   - plain CSV tables, with vLLM field names or table headers, and columns
//     naming the system: ParseCSV;
//   - markdown result tables under configuration and "ISL:OSL=a:b" headings:
//     ParseMarkdown;
//   - HTML result tables, including column groups such as
//     "Pipeline (Gen TPS)" / "Tensor (Gen TPS)": ParseHTML.
//
// Peer formats are recognised by their shape (a JSON or YAML document's
// keys, a CSV's first row) and their file extension, before vLLM's JSON. A
// known peer file capsim cannot use (AIPerf's per-request records, a raw
// perf_analyzer export, an llm-d report of another version, a GuideLLM
// embeddings benchmark) is an error naming the format and what to use.
// Peers' statistics are mapped to vLLM's names where the definitions agree
// and documented where they differ: AIPerf's and genai-perf's
// inter_token_latency is vLLM's TPOT; GuideLLM's inter_token_latency mean is
// vLLM's mean ITL and its time_per_output_token (which counts the first
// token) is not read; percentiles are each tool's own (GuideLLM's from its
// density, numpy's in AIPerf and genai-perf). Units are converted from the
// file's own unit fields. A metric a file lacks stays absent.
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
// SeriesKey is the one rule for which records form a series (one
// configuration × workload shape at several loads) that fit, plot,
// predict and validate use; package series groups records by it.
//
// Writing vLLM result JSON belongs to package loadgen; this package only
// reads. It imports model, internal/stats, internal/jsondup and
// internal/jsonerr and nothing else of capsim; YAML is read with
// go.yaml.in/yaml/v3 and HTML with golang.org/x/net/html.
package results
