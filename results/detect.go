package results

import (
	"bytes"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// parseJSONDocument reads a file that is one JSON value (or several
// concatenated): a peer tool's report when its shape says so, else vLLM
// bench serve result JSON. A known peer file capsim cannot use is an error
// that names it and says what to use instead.
func parseJSONDocument(name string, data []byte) ([]Record, error) {
	if t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n"); len(t) > 0 && t[0] == '[' {
		// Only vLLM's result arrays are arrays: its streaming reader refuses
		// a wrong element at once, where a tree of 10M numbers took 1.8 GB.
		return ParseVLLMJSON(name, data)
	}
	root, err := jsonTree(name, data)
	if err != nil || root.kind != kindObject {
		return ParseVLLMJSON(name, data) // its errors are the most precise for these
	}
	switch {
	case root.get("benchmarks") != nil:
		return guideLLMRecords(name, root)
	case isInferencePerfReport(root):
		return inferencePerfRecords(name, root)
	case root.get("version") != nil && (root.get("results") != nil || root.get("scenario") != nil):
		return llmdRecords(name, root)
	case root.get("metadata") != nil && root.get("metrics") != nil && root.at("metadata", "benchmark_phase") != nil:
		return nil, errorf(name, root.line, "", "AIPerf per-request records (profile_export.jsonl): capsim reads the aggregated profile_export_aiperf.json (or .csv) AIPerf writes next to it")
	case root.get("experiments") != nil && root.get("version") != nil:
		return nil, errorf(name, root.line, "", "perf_analyzer / genai-perf raw profile export (experiments[]): capsim reads the profile_export_genai_perf.json (or .csv) genai-perf writes next to it")
	case isProfileExport(root):
		p := &peer{name: name, format: FormatGenAIPerf, label: "genai-perf profile export"}
		if isAIPerf(name, root) {
			p = &peer{name: name, format: FormatAIPerf, label: "AIPerf profile export"}
		}
		return profileRecords(p, root)
	}
	return ParseVLLMJSON(name, data)
}

// isProfileExport reports an AIPerf or genai-perf aggregated export: a
// "records" object, or a top-level metric tag holding {unit, avg, …}.
func isProfileExport(root *node) bool {
	if rec := root.get("records"); rec != nil && rec.kind == kindObject {
		return true
	}
	for i, k := range root.keys {
		if _, ok := profileMetrics[k]; ok && root.vals[i].kind == kindObject && root.vals[i].get("unit") != nil {
			return true
		}
	}
	return false
}

// isAIPerf tells AIPerf from genai-perf: AIPerf nests its configuration
// (input_config.endpoint is an object, genai-perf's is a string or null)
// and writes "records" or "aiperf_version" in newer versions.
func isAIPerf(name string, root *node) bool {
	if root.get("records") != nil || root.get("aiperf_version") != nil {
		return true
	}
	if root.at("input_config", "perf_analyzer") != nil {
		return false // genai-perf's config JSON, which has an endpoint object too
	}
	if ep := root.at("input_config", "endpoint"); ep != nil && ep.kind == kindObject {
		return true
	}
	if root.at("input_config", "loadgen") != nil {
		return true
	}
	base := strings.ToLower(path.Base(filepath.ToSlash(name)))
	return strings.Contains(base, "aiperf") && !strings.Contains(base, "genai")
}

// parseYAMLDocument reads a YAML report: GuideLLM's (benchmarks:) or
// llm-d-benchmark's (version:, results:).
func parseYAMLDocument(name string, data []byte) ([]Record, error) {
	root, err := yamlTree(name, data)
	if err != nil {
		return nil, err
	}
	switch {
	case root.kind != kindObject:
	case root.get("benchmarks") != nil:
		return guideLLMRecords(name, root)
	case root.get("version") != nil && (root.get("results") != nil || root.get("scenario") != nil):
		return llmdRecords(name, root)
	}
	return nil, errorf(name, 0, "", "YAML document is neither a GuideLLM benchmark report (benchmarks:) nor an llm-d benchmark report (version: \"0.2\", results:)")
}

// parseCSVDocument reads AIPerf's and genai-perf's aggregated CSV exports
// (first row "Metric,…") and plain CSV tables.
func parseCSVDocument(name string, data []byte) ([]Record, error) {
	first := firstLine(data)
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(first)), "metric,") {
		return ParseProfileCSV(name, data)
	}
	return ParseCSV(name, data)
}

func firstLine(data []byte) string {
	t := bytes.TrimPrefix(data, []byte("\ufeff"))
	for len(t) > 0 {
		ln, rest, _ := bytes.Cut(t, []byte{'\n'})
		if s := strings.TrimSpace(string(ln)); s != "" {
			return s
		}
		t = rest
	}
	return ""
}

var yamlReportRE = regexp.MustCompile(`(?m)^(benchmarks|results):\s*$`)

// looksLikeYAMLReport sniffs a YAML report in a file without a .yaml name.
func looksLikeYAMLReport(data []byte) bool {
	return yamlReportRE.Match(data)
}

// looksLikeCSV sniffs a CSV table: the first two non-empty lines have the
// same number (at least two) of commas and no markdown or HTML markers.
func looksLikeCSV(data []byte) bool {
	var lines []string
	for _, ln := range strings.SplitN(string(bytes.TrimPrefix(data, []byte("\ufeff"))), "\n", 64) {
		if s := strings.TrimSpace(ln); s != "" {
			lines = append(lines, s)
			if len(lines) == 2 {
				break
			}
		}
	}
	if len(lines) < 2 {
		return false
	}
	for _, l := range lines {
		if strings.ContainsAny(l[:1], "|<#{[") {
			return false
		}
	}
	n := strings.Count(lines[0], ",")
	return n >= 2 && strings.Count(lines[1], ",") == n
}
