package results

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/capsim/capsim/model"
)

// table is a result table read from markdown or HTML, before interpretation.
type table struct {
	format     string
	section    string
	headerLine int
	header     []string
	rows       []tableRow
}

type tableRow struct {
	line   int
	onLine int // 1-based index among rows sharing the line; 0 when alone
	cells  []string
}

type colKind int

const (
	colIgnore colKind = iota
	colLabel
	colConcurrency
	colRate
	colNumPrompts
	colISL
	colOSL
	colErrors
	colCompleted
	colMetric
)

type column struct {
	kind   colKind
	metric string  // vLLM name (or a clearly named extra) for colMetric
	scale  float64 // multiply the cell by this (seconds → ms)
	group  string  // column group, e.g. "Pipeline" in "Pipeline (Prompt TPS)"
	header string
}

var (
	groupedHeaderRE = regexp.MustCompile(`^(.+?)\s*\((.+)\)$`)
	statWordRE      = regexp.MustCompile(`^(mean|avg|average|median|std|p\d+(?:\.\d+)?)$`)
	unitRE          = regexp.MustCompile(`\(([^()]*)\)\s*$`)
	islOslRE        = regexp.MustCompile(`(?i)\bISL\s*[:/]\s*OSL\s*[=:]\s*(\d+)\s*[:/]\s*(\d+)`)
)

// classifyHeader maps a column header to what it holds. Headers are matched
// loosely (case, spacing, the typos of published tables such as "Reqeuest
// Throughput" and "E2E Lantency").
func classifyHeader(h string) column {
	c := classifyPlain(h)
	if c.kind != colIgnore {
		return c
	}
	// "Pipeline (Prompt TPS)": a column group around a known quantity.
	if m := groupedHeaderRE.FindStringSubmatch(strings.TrimSpace(h)); m != nil {
		inner := classifyPlain(m[2])
		if inner.kind == colMetric && classifyPlain(m[1]).kind == colIgnore && !strings.Contains(strings.ToLower(m[1]), "speedup") {
			inner.group = strings.TrimSpace(m[1])
			inner.header = h
			return inner
		}
	}
	return column{kind: colIgnore, header: h}
}

func classifyPlain(h string) column {
	c := column{header: h, scale: 1}
	raw := strings.TrimSpace(h)
	n := strings.ToLower(strings.Join(strings.Fields(headerSpaces.Replace(raw)), " "))
	unit := ""
	if m := unitRE.FindStringSubmatch(n); m != nil {
		unit = strings.TrimSpace(m[1])
	}
	base := strings.TrimSpace(unitRE.ReplaceAllString(n, ""))
	// vLLM's own field names used as headers.
	if statMetricRE.MatchString(strings.TrimSpace(raw)) || knownNumericFields[strings.TrimSpace(raw)] {
		c.kind, c.metric = colMetric, strings.TrimSpace(raw)
		return c
	}
	switch base {
	case "preset", "gpu preset", "config", "configuration", "name", "system", "setup", "deployment", "engine", "backend", "framework":
		c.kind = colLabel
		return c
	case "concurrency", "max concurrency", "max concurrent requests", "concurrent requests", "clients":
		c.kind = colConcurrency
		return c
	case "request rate", "rate", "qps", "rps":
		c.kind = colRate
		return c
	case "num prompts", "prompts", "number of prompts":
		c.kind = colNumPrompts
		return c
	case "isl", "input len", "input length", "prompt length":
		c.kind = colISL
		return c
	case "osl", "output len", "output length", "max tokens":
		c.kind = colOSL
		return c
	case "errors", "error", "failed", "failed requests", "error count":
		c.kind = colErrors
		return c
	case "successful requests", "completed":
		c.kind = colCompleted
		return c
	}
	if strings.Contains(base, "speedup") {
		return column{kind: colIgnore, header: h}
	}
	words := strings.Fields(base)
	throughputish := strings.Contains(base, "throughput") || strings.Contains(base, "tps") || unit == "tok/s" || unit == "req/s" || unit == "tokens/s"
	perRequest := strings.Contains(base, "level") || strings.Contains(base, "per request") || strings.Contains(base, "per-request")
	if throughputish {
		c.kind = colMetric
		switch {
		case strings.Contains(base, "goodput"):
			c.metric = "request_goodput"
		case strings.Contains(base, "prompt") || strings.Contains(base, "input") || strings.Contains(base, "prefill"):
			c.metric = "prompt_throughput"
			if perRequest {
				c.metric = "per_request_prompt_throughput"
			}
		case strings.Contains(base, "total"):
			c.metric = model.TotalTokenThroughput
		case strings.Contains(base, "output") || strings.Contains(base, "gen") || strings.Contains(base, "decode"):
			c.metric = model.OutputThroughput
			if perRequest {
				c.metric = "per_request_output_throughput"
			}
		case len(words) > 0 && strings.HasPrefix(words[0], "req") || unit == "req/s":
			c.metric = model.RequestThroughput
		default:
			return column{kind: colIgnore, header: h}
		}
		return c
	}
	// Latency statistics: "Mean TTFT (ms)", "P99 E2E Lantency (ms)", "Avg Latency (s)".
	if len(words) >= 2 && statWordRE.MatchString(words[0]) {
		stat := words[0]
		if stat == "avg" || stat == "average" {
			stat = "mean"
		}
		rest := strings.Join(words[1:], " ")
		fam := ""
		switch {
		case strings.Contains(rest, "ttft") || strings.Contains(rest, "first token"):
			fam = "ttft"
		case strings.Contains(rest, "tpot") || strings.Contains(rest, "per output token"):
			fam = "tpot"
		case strings.Contains(rest, "itl") || strings.Contains(rest, "inter-token") || strings.Contains(rest, "inter token"):
			fam = "itl"
		case strings.Contains(rest, "e2e") || strings.Contains(rest, "end-to-end") || strings.Contains(rest, "end to end") ||
			strings.HasPrefix(rest, "la") || strings.HasPrefix(rest, "request la"):
			fam = "e2el"
		}
		if fam != "" {
			switch unit {
			case "ms", "":
			case "s", "sec", "seconds":
				c.scale = 1000
			default:
				return column{kind: colIgnore, header: h}
			}
			c.kind, c.metric = colMetric, model.MetricName(stat, fam)
			return c
		}
	}
	return column{kind: colIgnore, header: h}
}

// records turns a table into one record per row and column group. A table
// without any metric column is not a result table and yields nothing.
func (t *table) records(name, doc string) ([]Record, error) {
	cols := make([]column, len(t.header))
	fields := make([]string, len(t.header))
	hasMetric := false
	groups := []string{}
	seenGroup := map[string]bool{}
	for i, h := range t.header {
		cols[i] = classifyHeader(h)
		fields[i] = cleanHeader(h)
		if i == 0 && cols[i].kind == colIgnore && strings.TrimSpace(h) != "" {
			cols[i].kind = colLabel // an unnamed first column labels the row
		}
		if cols[i].kind == colMetric {
			hasMetric = true
			if cols[i].group != "" && !seenGroup[cols[i].group] {
				seenGroup[cols[i].group] = true
				groups = append(groups, cols[i].group)
			}
		}
	}
	if !hasMetric {
		return nil, nil
	}
	benchFields := benchServingFields(t.header, cols)
	if err := duplicateColumn(name, t.headerLine, cols, fields); err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		groups = []string{""}
	}
	isl, osl := 0, 0
	if m := islOslRE.FindStringSubmatch(t.section); m != nil {
		fmt.Sscan(m[1], &isl)
		fmt.Sscan(m[2], &osl)
	}
	var recs []Record
	for _, row := range t.rows {
		if len(row.cells) < len(cols) {
			return nil, errorf(name, row.line, fields[len(row.cells)], "missing cell: the row has %d cells, the header %d", len(row.cells), len(cols))
		}
		if len(row.cells) > len(cols) {
			return nil, errorf(name, row.line, "", "the row has %d cells, the header at line %d only %d", len(row.cells), t.headerLine, len(cols))
		}
		base := Record{Source: Source{File: name, Section: t.section, Line: row.line, Format: t.format}}
		base.Workload.ISL, base.Workload.ISLMax = float64(isl), isl
		base.Workload.OSL, base.Workload.OSLMax = float64(osl), osl
		metrics := map[string]map[string]float64{}
		for _, g := range groups {
			metrics[g] = map[string]float64{}
		}
		rowCap, rowRate := 0, 0.0 // a bench_serving table's max_concurrency and request_rate on this row
		for i, c := range cols {
			cell := strings.TrimSpace(row.cells[i])
			field := fields[i]
			if c.kind == colIgnore {
				continue
			}
			if c.kind == colLabel {
				base.Source.Row = cell
				continue
			}
			if cell == "" {
				if benchFields {
					// A bench_serving table (a pandas export of vLLM's result
					// fields, vllm bench sweep's summary.csv) leaves a field it
					// did not measure empty: request_rate beside
					// max_concurrency, request_goodput without SLOs.
					continue
				}
				return nil, errorf(name, row.line, field, "empty cell")
			}
			if absentCell(cell) {
				continue
			}
			if c.kind == colRate && strings.EqualFold(cell, "inf") {
				// Every prompt sent at once, as bench serve's request_rate "inf".
				base.Workload.Load = model.Open(math.Inf(1), 0)
				rowRate = math.Inf(1)
				continue
			}
			v, err := parseNumber(cell)
			if err != nil {
				return nil, errorf(name, row.line, field, "%v", err)
			}
			integer := func() (int, error) {
				if v < 0 || v != math.Trunc(v) || v > 1e12 {
					return 0, errorf(name, row.line, field, "want a non-negative integer, got %q", cell)
				}
				return int(v), nil
			}
			switch c.kind {
			case colConcurrency:
				n, err := integer()
				if err != nil {
					return nil, err
				}
				if n == 0 {
					return nil, errorf(name, row.line, field, "want a positive concurrency, got 0")
				}
				base.Workload.Load = model.Closed(n)
				rowCap = n
			case colRate:
				if v <= 0 {
					return nil, errorf(name, row.line, field, "want a positive rate, got %q", cell)
				}
				base.Workload.Load = model.Open(v, 0)
				rowRate = v
			case colNumPrompts:
				if base.Workload.NumPrompts, err = integer(); err != nil {
					return nil, err
				}
			case colISL:
				n, err := integer()
				if err != nil {
					return nil, err
				}
				base.Workload.ISL, base.Workload.ISLMax = float64(n), n
			case colOSL:
				n, err := integer()
				if err != nil {
					return nil, err
				}
				base.Workload.OSL, base.Workload.OSLMax = float64(n), n
			case colErrors:
				if base.Errors, err = integer(); err != nil {
					return nil, err
				}
			case colCompleted:
				if base.Completed, err = integer(); err != nil {
					return nil, err
				}
			case colMetric:
				if v < 0 {
					return nil, errorf(name, row.line, field, "want a non-negative number, got %q", cell)
				}
				for _, g := range groups {
					if c.group == "" || c.group == g {
						metrics[g][c.metric] = v * c.scale
					}
				}
			}
		}
		switch {
		case benchFields && rowCap > 0 && math.IsInf(rowRate, 1):
			// request_rate inf beside max_concurrency: a closed loop, as
			// in vLLM's result JSON.
			base.Workload.Load = model.Closed(rowCap)
		case benchFields && rowCap > 0 && rowRate > 0:
			// A stated rate beside max_concurrency: an open loop capped at
			// it, whichever of the two columns comes first.
			base.Workload.Load = model.Open(rowRate, 0)
			base.Workload.Load.Concurrency = rowCap
		}
		for _, g := range groups {
			r := base
			r.Source.Column = g
			r.ID = recordID(doc, row.line, row.onLine, g)
			r.Metrics = metrics[g]
			if len(r.Metrics) == 0 {
				return nil, errorf(name, row.line, "", "row has no metric values")
			}
			// A bench_serving table's totals give the mean prompt, as in
			// vLLM's result JSON (the requested length stays ISLMax).
			if tin, ok := r.Metrics[model.TotalInputTokens]; ok && benchFields && r.Completed > 0 {
				r.Workload.ISL = tin / float64(r.Completed)
			}
			// Outputs often stop before the requested length: estimate the mean.
			if est, ok := estimateOSL(r.Metrics); ok {
				if r.Workload.OSLMax > 0 && est > float64(r.Workload.OSLMax) {
					est = float64(r.Workload.OSLMax)
				}
				r.Workload.OSL = est
			}
			recs = append(recs, r)
		}
	}
	return recs, nil
}

// benchServingFields reports a header of sglang.bench_serving's result field
// names (a CSV of its JSON lines: both request_rate and max_concurrency) and
// drops its "concurrency" column: there max_concurrency is the client's cap
// and concurrency the measured mean of requests in flight (total latency over
// duration), which the text reader skips too ("Concurrency: 92.26"). In such
// a table an empty request_rate cell says nothing (the JSON's Infinity or
// null, written empty), so the caller skips it instead of failing.
func benchServingFields(header []string, cols []column) bool {
	has := map[string]bool{}
	for _, h := range header {
		has[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = true
	}
	if !has["max_concurrency"] || !has["request_rate"] {
		return false
	}
	for i, h := range header {
		if strings.TrimSpace(h) == "concurrency" && cols[i].kind == colConcurrency {
			cols[i].kind = colIgnore
		}
	}
	return true
}

// colKindNames say what a column holds, for errors.
var colKindNames = map[colKind]string{
	colConcurrency: "the concurrency", colRate: "the request rate",
	colNumPrompts: "the prompt count", colISL: "the input length", colOSL: "the output length",
	colErrors: "the error count", colCompleted: "the completed count",
}

// duplicateColumn reports two columns that give the same quantity (for the
// same column group): the second would silently replace the first.
func duplicateColumn(name string, line int, cols []column, fields []string) error {
	seen := map[string]int{}
	for i, c := range cols {
		what := colKindNames[c.kind]
		if c.kind == colMetric {
			what = c.metric
		}
		if what == "" {
			continue
		}
		key := what + "\x00" + c.group
		if j, dup := seen[key]; dup {
			return errorf(name, line, fields[i], "duplicate column: %q also gives %s", fields[j], what)
		}
		seen[key] = i
	}
	return nil
}

var (
	headerSpaces = strings.NewReplacer("*", " ", "`", " ", "_", " ")
	emphasis     = strings.NewReplacer("*", "", "`", "")
)

func cleanHeader(h string) string {
	return strings.Join(strings.Fields(emphasis.Replace(h)), " ")
}

// numberRowsOnLines sets onLine for rows that share a source line (HTML tables on one line).
func numberRowsOnLines(rows []tableRow) {
	count := map[int]int{}
	for _, r := range rows {
		count[r.line]++
	}
	seen := map[int]int{}
	for i := range rows {
		if count[rows[i].line] > 1 {
			seen[rows[i].line]++
			rows[i].onLine = seen[rows[i].line]
		}
	}
}

// estimateOSL estimates the mean output length of a table row from its
// metrics: 1 + (mean E2E − mean TTFT) / mean TPOT when the three are given
// (exact when every request has the same length, and free of the rounding of
// small request rates), else output / request throughput (the ratio of
// vLLM's totals), else a per-request generation rate times the mean latency.
func estimateOSL(m map[string]float64) (float64, bool) {
	round := func(v float64) float64 { return math.Round(v*10) / 10 }
	e2e, ok1 := m[model.MeanE2EL]
	ttft, ok2 := m[model.MeanTTFT]
	tpot, ok3 := m[model.MeanTPOT]
	if ok1 && ok2 && ok3 && tpot > 0 && e2e > ttft {
		return round(1 + (e2e-ttft)/tpot), true
	}
	out, ok1 := m[model.OutputThroughput]
	req, ok2 := m[model.RequestThroughput]
	if ok1 && ok2 && req > 0 && out > 0 {
		return round(out / req), true
	}
	g, ok1 := m["per_request_output_throughput"]
	e2e, ok2 = m[model.MeanE2EL]
	if ok1 && ok2 && e2e > 0 && g > 0 {
		return round(g * e2e / 1000), true
	}
	return 0, false
}
