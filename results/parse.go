package results

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/capsim/capsim/internal/inputfile"
	"github.com/capsim/capsim/model"
)

// Format names, as they appear in Source.Format.
const (
	FormatVLLMJSON = "vllm-json"
	FormatVLLMText = "vllm-text"
	FormatMarkdown = "markdown"
	FormatHTML     = "html"
)

// Error is a problem in an input file. Its text is one line:
// "results: FILE:LINE: field "X": message".
type Error struct {
	File  string
	Line  int    // 1-based; 0 when the problem concerns the whole file
	Field string // the field, column or key at fault; "" when none
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("results: ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(oneLine(e.Msg))
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func errorf(file string, line int, field, format string, args ...any) error {
	return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ParseFile reads one result file of any supported format; see Parse.
func ParseFile(p string) ([]Record, error) {
	data, err := inputfile.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return Parse(p, data)
}

// Parse sniffs the format of data and returns one Record per measured point.
// A file that is a JSON value is read as vLLM bench serve result JSON; any
// other file is searched for every format it may hold (JSON objects inside
// {% highlight json %} or ```json blocks, "Serving Benchmark Result" text
// blocks, HTML tables and markdown tables) and the records come out in line
// order. name is used in Source.File, record IDs and error messages.
func Parse(name string, data []byte) ([]Record, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte-order mark
	var recs []Record
	ext := strings.ToLower(path.Ext(filepath.ToSlash(name)))
	var direct func(string, []byte) ([]Record, error)
	switch {
	case ext == ".csv":
		direct = parseCSVDocument
	case ext == ".yaml" || ext == ".yml":
		direct = parseYAMLDocument
	case isJSONDocument(data):
		direct = parseJSONDocument
	}
	if direct != nil {
		r, err := direct(name, data)
		if err != nil {
			return nil, err
		}
		recs = r
	} else {
		parsers := []func(string, []byte) ([]Record, error){}
		if hasEmbeddedJSON(data) {
			parsers = append(parsers, ParseVLLMJSON)
		}
		if bytes.Contains(data, []byte(textBanner)) {
			parsers = append(parsers, ParseVLLMText)
		}
		if bytes.Contains(bytes.ToLower(data), []byte("<table")) {
			parsers = append(parsers, ParseHTML)
		}
		if hasMarkdownTable(data) {
			parsers = append(parsers, ParseMarkdown)
		}
		for _, p := range parsers {
			r, err := p(name, data)
			if err != nil {
				return nil, err
			}
			recs = append(recs, r...)
			if len(recs) > MaxRecords {
				return nil, tooManyRecords(name, recs[MaxRecords].Source.Line)
			}
		}
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].Source.Line < recs[j].Source.Line })
		if len(recs) == 0 {
			var sniffed func(string, []byte) ([]Record, error)
			switch {
			case looksLikeYAMLReport(data):
				sniffed = parseYAMLDocument
			case looksLikeCSV(data):
				sniffed = parseCSVDocument
			}
			if sniffed != nil {
				r, err := sniffed(name, data)
				if err != nil {
					return nil, err
				}
				recs = r
			}
		}
	}
	if len(recs) == 0 {
		return nil, errorf(name, 0, "", "no benchmark results found (want vLLM bench serve JSON or text, GuideLLM, AIPerf, genai-perf or llm-d-benchmark reports, CSV, or markdown/HTML result tables)")
	}
	if err := checkRanges(name, recs); err != nil {
		return nil, err
	}
	Annotate(recs)
	return recs, nil
}

// MaxMetric bounds every metric read: no benchmark measures 1e15 of
// anything (tokens/s, ms, tokens), and a value near 1e308 overflows the fit.
const MaxMetric = 1e15

// checkRanges refuses a record whose prompt or output length, however its
// format gave it, is beyond model.MaxSequenceTokens, or with a metric
// beyond MaxMetric.
func checkRanges(name string, recs []Record) error {
	for i := range recs {
		for _, k := range slices.Sorted(maps.Keys(recs[i].Metrics)) {
			if v := recs[i].Metrics[k]; !(math.Abs(v) <= MaxMetric) {
				return errorf(name, recs[i].Source.Line, k, "%.4g is beyond %g, more than any benchmark measures", v, MaxMetric)
			}
		}
		w := &recs[i].Workload
		for _, f := range []struct {
			field, what string
			v           float64
		}{
			{"isl", "mean prompt", w.ISL}, {"osl", "mean output", w.OSL},
			{"isl_max", "requested prompt", float64(w.ISLMax)}, {"osl_max", "requested output", float64(w.OSLMax)},
		} {
			if !(f.v >= 0 && f.v <= model.MaxSequenceTokens) {
				return errorf(name, recs[i].Source.Line, f.field, "a %s of %.4g tokens, want at most %d", f.what, f.v, model.MaxSequenceTokens)
			}
		}
	}
	return nil
}

func isJSONDocument(data []byte) bool {
	t := bytes.TrimPrefix(data, []byte("\ufeff"))
	t = bytes.TrimLeft(t, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// DocID is the document name record IDs start with: the file's base name
// without its extension ("runs.json" → "runs").
func DocID(name string) string {
	base := path.Base(filepath.ToSlash(name))
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

// recordID builds "DOC:LINE", "DOC:LINE#ROW" (several rows on one line) or
// with "/column" for a column group.
func recordID(doc string, line, rowOnLine int, column string) string {
	id := doc + ":" + strconv.Itoa(line)
	if rowOnLine > 0 {
		id += "#" + strconv.Itoa(rowOnLine)
	}
	if column != "" {
		id += "/" + strings.ToLower(column)
	}
	return id
}

// MaxRecords bounds the records one file may hold: no benchmark has that
// many load points, and each record costs about a kilobyte, so a file of
// millions of rows is refused quickly instead of filling memory.
const MaxRecords = 200_000

func tooManyRecords(name string, line int) error {
	return errorf(name, line, "", "more than %d records: capsim reads at most %d load points per file", MaxRecords, MaxRecords)
}

// lineCounter maps byte offsets of data to 1-based line numbers. Offsets
// asked for in increasing order (a decoder's) cost the bytes between them,
// so a whole file costs one pass; an earlier offset restarts the count.
type lineCounter struct {
	data []byte
	off  int
	line int
}

func newLineCounter(data []byte) *lineCounter { return &lineCounter{data: data, line: 1} }

func (c *lineCounter) at(off int64) int {
	o := int(min(max(off, 0), int64(len(c.data))))
	if o < c.off {
		c.off, c.line = 0, 1
	}
	c.line += bytes.Count(c.data[c.off:o], []byte{'\n'})
	c.off = o
	return c.line
}

// lineAt returns the 1-based line of byte offset off in data. It scans from
// the start: use a lineCounter for many offsets of one file.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// parseNumber reads a table or text cell as a finite number. It accepts
// thousands separators ("1,234.5") and surrounding spaces.
func parseNumber(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if strings.Contains(t, ",") {
		if !thousandsOK(t) {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		t = strings.ReplaceAll(t, ",", "")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", strings.TrimSpace(s))
	}
	return v, nil
}

func thousandsOK(t string) bool {
	t = strings.TrimPrefix(t, "-")
	intPart, _, _ := strings.Cut(t, ".")
	groups := strings.Split(intPart, ",")
	if len(groups[0]) == 0 || len(groups[0]) > 3 {
		return false
	}
	for _, g := range groups[1:] {
		if len(g) != 3 {
			return false
		}
	}
	return true
}

// absentCell reports a cell that explicitly says "no value".
func absentCell(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "-", "—", "–", "n/a", "na", "none", "null":
		return true
	}
	return false
}
