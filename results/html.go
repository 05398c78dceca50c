package results

import (
	"regexp"
	"strings"
)

var (
	htmlTagRE     = regexp.MustCompile(`(?s)<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>`)
	htmlHeadingRE = regexp.MustCompile(`(?i)^\s*(#{1,6}\s+.*|\*\*.*|<h[1-6][^>]*>.*)$`)
)

// ParseHTML reads HTML result tables (<table> with <th> headers and <td>
// cells), as pages written with GitBook and similar tools embed them. The
// nearest heading above a table — a markdown heading, a line in bold, or an
// <hN> — is its section. Each row, and each column group such as
// "Pipeline (Prompt TPS)" / "Tensor (Prompt TPS)", is one record; rows
// sharing a source line get IDs "DOC:LINE#N".
func ParseHTML(name string, data []byte) ([]Record, error) {
	doc := DocID(name)
	text := string(data)
	lower := asciiLower(text) // same length as text, unlike strings.ToLower
	lines := strings.Split(text, "\n")
	var tables []*table
	for pos := 0; ; {
		start := strings.Index(lower[pos:], "<table")
		if start < 0 {
			break
		}
		start += pos
		end := strings.Index(lower[start:], "</table>")
		if end < 0 {
			return nil, errorf(name, lineAt(data, int64(start)), "", "truncated: <table> is never closed")
		}
		end += start + len("</table>")
		t, err := readHTMLTable(name, data, start, end)
		if err != nil {
			return nil, err
		}
		t.section = headingBefore(lines, lineAt(data, int64(start)))
		tables = append(tables, t)
		pos = end
	}
	// Number rows that share a line across the whole document, so IDs are unique.
	var all []tableRow
	for _, t := range tables {
		all = append(all, t.rows...)
	}
	numberRowsOnLines(all)
	var recs []Record
	k := 0
	for _, t := range tables {
		copy(t.rows, all[k:k+len(t.rows)])
		k += len(t.rows)
		r, err := t.records(name, doc)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r...)
	}
	return recs, nil
}

func readHTMLTable(name string, data []byte, start, end int) (*table, error) {
	t := &table{format: FormatHTML}
	src := string(data[start:end])
	var (
		row      *tableRow
		rowIsHdr bool
		cellOpen = -1 // offset in src where the open cell's text starts
		cellTag  string
	)
	flushRow := func() {
		if row == nil {
			return
		}
		if rowIsHdr && t.header == nil {
			t.header, t.headerLine = row.cells, row.line
		} else if len(row.cells) > 0 {
			t.rows = append(t.rows, *row)
		}
		row = nil
	}
	for _, m := range htmlTagRE.FindAllStringSubmatchIndex(src, -1) {
		closing := src[m[2]:m[3]] == "/"
		tag := strings.ToLower(src[m[4]:m[5]])
		switch tag {
		case "tr":
			if cellOpen >= 0 {
				return nil, errorf(name, lineAt(data, int64(start+m[0])), "", "<%s> is never closed", cellTag)
			}
			flushRow()
			if !closing {
				row, rowIsHdr = &tableRow{line: lineAt(data, int64(start+m[0]))}, false
			}
		case "th", "td":
			if !closing {
				if row == nil {
					row = &tableRow{line: lineAt(data, int64(start+m[0]))}
				}
				if cellOpen >= 0 {
					return nil, errorf(name, lineAt(data, int64(start+m[0])), "", "<%s> is never closed", cellTag)
				}
				cellOpen, cellTag = m[1], tag
				if tag == "th" {
					rowIsHdr = true
				}
				continue
			}
			if cellOpen < 0 {
				return nil, errorf(name, lineAt(data, int64(start+m[0])), "", "</%s> without an open cell", tag)
			}
			row.cells = append(row.cells, cleanCell(src[cellOpen:m[0]]))
			cellOpen = -1
		case "table":
			if closing {
				if cellOpen >= 0 {
					return nil, errorf(name, lineAt(data, int64(start+m[0])), "", "<%s> is never closed", cellTag)
				}
				flushRow()
			}
		}
	}
	if t.header == nil && len(t.rows) > 0 { // no <th>: the first row is the header
		t.header, t.headerLine = t.rows[0].cells, t.rows[0].line
		t.rows = t.rows[1:]
	}
	return t, nil
}

// headingBefore returns the nearest heading-like line at or above line (1-based).
func headingBefore(lines []string, line int) string {
	for i := min(line, len(lines)) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(strings.ToLower(l), "<table") {
			if i == line-1 {
				continue
			}
		}
		if htmlHeadingRE.MatchString(l) {
			return cleanHeading(strings.TrimLeft(l, "# "))
		}
	}
	return ""
}

// asciiLower lower-cases ASCII letters only, keeping byte offsets valid.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
