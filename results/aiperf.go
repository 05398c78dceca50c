package results

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/capsim/capsim/model"
)

// Formats of NVIDIA's benchmark clients, as they appear in Source.Format.
const (
	FormatAIPerf       = "aiperf"         // profile_export_aiperf.json
	FormatAIPerfCSV    = "aiperf-csv"     // profile_export_aiperf.csv
	FormatGenAIPerf    = "genai-perf"     // profile_export_genai_perf.json
	FormatGenAIPerfCSV = "genai-perf-csv" // profile_export_genai_perf.csv
)

// profileMetric is how one AIPerf / genai-perf metric tag maps to vLLM.
type profileMetric struct {
	fam    string // latency family (ttft, tpot, itl, e2el): all statistics are read
	metric string // a throughput or total: the average is read
	what   string // "isl", "osl", "completed", "errors", "duration"
}

// profileMetrics maps the tags both tools export. Their inter_token_latency
// is per request (request latency − TTFT)/(output tokens − 1): vLLM's TPOT,
// so it is read as tpot.
var profileMetrics = map[string]profileMetric{
	"request_latency":         {fam: "e2el"},
	"time_to_first_token":     {fam: "ttft"},
	"inter_token_latency":     {fam: "tpot"},
	"request_throughput":      {metric: model.RequestThroughput},
	"output_token_throughput": {metric: model.OutputThroughput},
	"total_token_throughput":  {metric: model.TotalTokenThroughput},
	"request_goodput":         {metric: "request_goodput"},
	"goodput":                 {metric: "request_goodput"},
	"total_output_tokens":     {metric: model.TotalOutputTokens},
	"total_isl":               {metric: model.TotalInputTokens},
	"total_osl":               {metric: model.TotalOutputTokens},
	"input_sequence_length":   {what: "isl"},
	"output_sequence_length":  {what: "osl"},
	"request_count":           {what: "completed"},
	"error_request_count":     {what: "errors"},
	"benchmark_duration":      {what: "duration"},
}

// ParseAIPerfJSON reads NVIDIA AIPerf's aggregated profile_export_aiperf.json:
// metric results keyed by tag (at the top level, or under "records" in
// newer versions), each {unit, avg, p1 … p99, std, …}, and input_config.
// One file is one record. Units are converted to ms from the file's own
// "unit"; inter_token_latency is vLLM's TPOT (see profileMetrics); the load is
// input_config.loadgen's concurrency and request_rate (request_rate_mode or
// arrival_pattern "constant" means evenly spaced arrivals); the model is
// input_config.endpoint.model_names[0]; the GPU and GPU count come from
// telemetry_data when AIPerf collected it. Percentiles are numpy's.
func ParseAIPerfJSON(name string, data []byte) ([]Record, error) {
	root, err := jsonTree(name, data)
	if err != nil {
		return nil, err
	}
	return profileRecords(&peer{name: name, format: FormatAIPerf, label: "AIPerf profile export"}, root)
}

// ParseGenAIPerfJSON reads genai-perf's profile_export_genai_perf.json: the
// same metric objects as AIPerf at the top level, and input_config holding
// genai-perf's arguments (model, concurrency, request_rate, backend, …).
// genai-perf states no request counts, so errors and completions stay
// unknown. A request_rate load is perf_analyzer's default constant
// distribution unless input_config says request_distribution "poisson".
func ParseGenAIPerfJSON(name string, data []byte) ([]Record, error) {
	root, err := jsonTree(name, data)
	if err != nil {
		return nil, err
	}
	return profileRecords(&peer{name: name, format: FormatGenAIPerf, label: "genai-perf profile export"}, root)
}

func profileRecords(p *peer, root *node) ([]Record, error) {
	if root.kind != kindObject {
		return nil, p.fail(root, 1, "", "%s: want a JSON object, got %s", p.label, root.kind)
	}
	r := Record{
		ID:      recordID(DocID(p.name), root.line, 0, ""),
		Source:  Source{File: p.name, Line: root.line, Format: p.format},
		Metrics: map[string]float64{},
	}
	metrics := root
	if rec := root.get("records"); !rec.absent() {
		if err := p.object(rec, "records"); err != nil {
			return nil, err
		}
		metrics = rec
	}
	for i, tag := range metrics.keys {
		if err := p.profileMetric(&r, tag, metrics.vals[i]); err != nil {
			return nil, err
		}
	}
	// Newer AIPerf writes a bare count beside "records"; at the top level
	// it is a metric object {unit, avg}, read with the metrics above.
	if ec := root.get("error_request_count"); ec.absent() || ec.kind != kindObject {
		if n, ok, err := p.count(ec, "error_request_count"); err != nil {
			return nil, err
		} else if ok {
			r.Errors = n
		}
	}
	if err := p.profileConfig(&r, root.get("input_config")); err != nil {
		return nil, err
	}
	if err := p.profileTelemetry(&r, root.get("telemetry_data")); err != nil {
		return nil, err
	}
	if r.Completed > 0 || r.Errors > 0 {
		r.Workload.NumPrompts = r.Completed + r.Errors
	}
	if len(r.Metrics) == 0 {
		what := "no performance metrics"
		if r.Errors > 0 {
			what = fmt.Sprintf("no performance metrics: all %d requests failed", r.Errors)
		}
		return nil, p.fail(root, 1, "", "%s has %s", p.label, what)
	}
	return []Record{r}, nil
}

// profileMetric reads one AIPerf / genai-perf metric object into r.
func (p *peer) profileMetric(r *Record, tag string, st *node) error {
	pm, known := profileMetrics[tag]
	if !known || st.absent() {
		return nil
	}
	if st.kind == kindNumber { // "goodput": 12.5 in some versions
		if pm.metric != "" {
			r.Metrics[pm.metric] = st.num
		}
		return nil
	}
	if st.kind != kindObject {
		return p.fail(st, 0, tag, "want a metric object {unit, avg, …}, got %s", st.kind)
	}
	unit := st.get("unit").text()
	avg, hasAvg, err := p.number(st.get("avg"), tag+".avg")
	if err != nil {
		return err
	}
	switch {
	case pm.fam != "":
		scale, ok := timeScale(unit)
		if !ok {
			return p.fail(st.get("unit"), st.line, tag+".unit", "unit %q: want ms, s, us or ns", unit)
		}
		return p.latencyStats(r.Metrics, st, tag, pm.fam, scale)
	case !hasAvg:
	case pm.metric != "":
		r.Metrics[pm.metric] = avg
	case pm.what == "isl":
		r.Workload.ISL = avg
	case pm.what == "osl":
		r.Workload.OSL = avg
	case pm.what == "completed" || pm.what == "errors":
		if avg < 0 || avg != math.Trunc(avg) || avg > 1e12 {
			return p.fail(st.get("avg"), st.line, tag+".avg", "want a request count, got %v", avg)
		}
		if pm.what == "completed" {
			r.Completed = int(avg)
		} else {
			r.Errors = int(avg)
		}
	case pm.what == "duration":
		scale, ok := timeScale(unit)
		if !ok {
			return p.fail(st.get("unit"), st.line, tag+".unit", "unit %q: want s, ms, us or ns", unit)
		}
		r.Metrics[model.Duration] = avg * scale / 1000
	}
	return nil
}

// profileConfig reads the model, engine and load from input_config, in
// AIPerf's layout (endpoint.model_names, loadgen.concurrency) or
// genai-perf's (model, concurrency, request_rate at the top).
func (p *peer) profileConfig(r *Record, cfg *node) error {
	if cfg.absent() {
		return nil
	}
	if err := p.object(cfg, "input_config"); err != nil {
		return err
	}
	models := cfg.at("endpoint", "model_names")
	for _, alt := range []string{"model_names", "model"} { // genai-perf's config JSON; its older flat layout
		if models.absent() {
			models = cfg.get(alt)
		}
	}
	switch {
	case models.absent():
	case models.kind == kindString:
		r.System.Model = models.str
	case models.kind == kindArray && len(models.items) > 0:
		r.System.Model = models.items[0].text()
	}
	if b := strings.ToLower(cmp.Or(cfg.get("backend").text(), cfg.at("endpoint", "backend").text())); b == "vllm" {
		r.System.Engine = "vllm" // genai-perf's --backend names the engine behind Triton
	}
	lg, lfield := cfg.get("loadgen"), "input_config.loadgen"
	if lg.absent() {
		// genai-perf's config JSON keeps the load in perf_analyzer.stimulus;
		// its older flat layout at the top of input_config.
		lg, lfield = cfg.at("perf_analyzer", "stimulus"), "input_config.perf_analyzer.stimulus"
		if lg.absent() {
			lg, lfield = cfg, "input_config"
		}
	}
	if err := p.object(lg, lfield); err != nil {
		return err
	}
	conc, hasConc, err := p.count(lg.get("concurrency"), lfield+".concurrency")
	if err != nil {
		return err
	}
	rate, hasRate, err := p.number(lg.get("request_rate"), lfield+".request_rate")
	if err != nil {
		return err
	}
	mode := strings.ToLower(lg.get("request_rate_mode").text() + lg.get("arrival_pattern").text() + cfg.get("request_distribution").text())
	if n, ok, err := p.count(lg.get("request_count"), lfield+".request_count"); err != nil {
		return err
	} else if ok && n > 0 && r.Workload.NumPrompts == 0 {
		r.Workload.NumPrompts = n
	}
	// The requested lengths: genai-perf's synthetic_input_tokens_mean and
	// output_tokens_mean, AIPerf's input.prompt.{input,output}_tokens.mean.
	for _, t := range []struct {
		paths [][]string
		set   *int
	}{
		{[][]string{{"synthetic_input_tokens_mean"}, {"input", "prompt", "input_tokens", "mean"}, {"input", "synthetic_tokens", "mean"}}, &r.Workload.ISLMax},
		{[][]string{{"output_tokens_mean"}, {"input", "prompt", "output_tokens", "mean"}, {"input", "output_tokens", "mean"}}, &r.Workload.OSLMax},
	} {
		for _, path := range t.paths {
			v, ok, err := p.number(cfg.at(path...), "input_config."+strings.Join(path, "."))
			if err != nil {
				return err
			}
			if ok && v >= 1 && v <= 1e9 {
				*t.set = int(math.Round(v))
				break
			}
		}
	}
	switch {
	case hasRate && rate > 0:
		shape := 1.0
		switch {
		case strings.Contains(mode, "constant"):
			shape = constantArrivalShape
		case strings.Contains(mode, "poisson"):
		case p.format == FormatGenAIPerf:
			shape = constantArrivalShape // perf_analyzer's default request distribution
		}
		r.Workload.Load = model.Open(rate, shape)
		if hasConc && conc > 0 {
			r.Workload.Load.Concurrency = conc
		}
	case hasConc && conc > 0:
		r.Workload.Load = model.Closed(conc)
	}
	return nil
}

// profileTelemetry reads the GPU name and count from AIPerf's GPU telemetry
// (DCGM): every GPU of every endpoint it scraped.
func (p *peer) profileTelemetry(r *Record, tel *node) error {
	eps := tel.get("endpoints")
	if eps.absent() || eps.kind != kindObject {
		return nil
	}
	names := map[string]bool{}
	count := 0
	for _, ep := range eps.vals {
		gpus := ep.get("gpus")
		if gpus == nil || gpus.kind != kindObject {
			continue
		}
		for _, g := range gpus.vals {
			if n := g.get("gpu_name").text(); n != "" {
				names[n] = true
				count++
			}
		}
	}
	if len(names) == 1 {
		for n := range names {
			r.System.GPU = catalogGPU(n)
		}
		r.System.GPUCount = count
	}
	return nil
}

// catalogGPU is the catalog name of a GPU a file names ("NVIDIA H100 80GB
// HBM3" → "H100-SXM"), or the name as written when the catalog lacks it.
func catalogGPU(name string) string {
	if g, err := model.LookupGPU(name); err == nil {
		return g.Name
	}
	return strings.TrimSpace(name)
}

// ParseProfileCSV reads the aggregated CSV AIPerf (profile_export_aiperf.csv)
// and genai-perf (profile_export_genai_perf.csv) write: a section of rows
// "Metric,avg,min,max,p…" and a section "Metric,Value", metric names being
// headers with units ("Time to First Token (ms)"). The CSV states no load;
// it is taken from the artifact directory the tools name after it
// ("…-concurrency8", "…-request_rate4.0") when the path has one.
func ParseProfileCSV(name string, data []byte) ([]Record, error) {
	format, label := FormatAIPerfCSV, "AIPerf CSV export"
	if strings.Contains(strings.ToLower(path.Base(filepath.ToSlash(name))), "genai_perf") {
		format, label = FormatGenAIPerfCSV, "genai-perf CSV export"
	}
	p := &peer{name: name, format: format, label: label}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	r := Record{
		ID:      recordID(DocID(name), 1, 0, ""),
		Source:  Source{File: name, Line: 1, Format: format},
		Metrics: map[string]float64{},
	}
	var header []string
	for {
		row, line, err := readCSVRow(cr, name)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(row) == 0 || len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue
		}
		if strings.EqualFold(strings.TrimSpace(row[0]), "metric") {
			header = row
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(row[0]), "===") {
			break // GPU telemetry sections follow
		}
		if header == nil {
			return nil, errorf(name, line, "", "%s: want a header row starting with \"Metric\"", label)
		}
		tag, unit := profileCSVTag(row[0])
		if _, known := profileMetrics[tag]; !known {
			continue
		}
		if len(row) > len(header) {
			return nil, errorf(name, line, row[0], "the row has %d cells, the header %d", len(row), len(header))
		}
		st := &node{kind: kindObject, line: line}
		for i := 1; i < len(row); i++ {
			cell := strings.TrimSpace(row[i])
			if cell == "" || absentCell(cell) {
				continue
			}
			key := strings.ToLower(strings.TrimSpace(header[i]))
			if key == "value" {
				key = "avg"
			}
			v, err := parseNumber(cell)
			if err != nil {
				return nil, errorf(name, line, row[0], "%s: %v", header[i], err)
			}
			st.keys = append(st.keys, key)
			st.vals = append(st.vals, &node{kind: kindNumber, num: v, line: line})
		}
		st.keys = append(st.keys, "unit")
		st.vals = append(st.vals, &node{kind: kindString, str: unit, line: line})
		if err := p.profileMetric(&r, tag, st); err != nil {
			return nil, err
		}
	}
	if header == nil {
		return nil, errorf(name, 0, "", "%s: no \"Metric\" header row", label)
	}
	if len(r.Metrics) == 0 {
		return nil, errorf(name, 0, "", "%s has no performance metrics", label)
	}
	if r.Completed > 0 || r.Errors > 0 {
		r.Workload.NumPrompts = r.Completed + r.Errors
	}
	if m := artifactLoadRE.FindStringSubmatch(filepath.ToSlash(name)); m != nil {
		r.Source.Row = strings.TrimSuffix(strings.TrimPrefix(m[0], "-"), "/"+path.Base(filepath.ToSlash(name)))
		switch m[1] {
		case "concurrency":
			if n, err := strconv.Atoi(m[2]); err == nil && n > 0 {
				r.Workload.Load = model.Closed(n)
			}
		default:
			if v, err := strconv.ParseFloat(m[2], 64); err == nil && v > 0 {
				r.Workload.Load = model.Open(v, 0)
			}
		}
	}
	return []Record{r}, nil
}

// artifactLoadRE finds the load in AIPerf's and genai-perf's artifact
// directory names: MODEL-SERVICE-ENDPOINT-concurrencyN or -request_rateX.
var artifactLoadRE = regexp.MustCompile(`-(concurrency|request_rate)(\d+(?:\.\d+)?)/[^/]*$`)

// profileCSVTag turns "Time to First Token (ms)" into its tag and unit.
func profileCSVTag(h string) (tag, unit string) {
	h = strings.TrimSpace(h)
	if m := unitRE.FindStringSubmatch(h); m != nil {
		unit = strings.TrimSpace(m[1])
		h = strings.TrimSpace(unitRE.ReplaceAllString(h, ""))
	}
	tag = strings.ToLower(strings.Join(strings.Fields(h), "_"))
	if tag == "request_throughput" && strings.Contains(unit, "per sec") {
		unit = "requests/sec"
	}
	return tag, unit
}
