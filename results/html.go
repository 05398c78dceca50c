package results

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

var htmlHeadingRE = regexp.MustCompile(`(?i)^\s*(#{1,6}\s+.*|\*\*.*|<h[1-6][^>]*>.*)$`)

// ParseHTML reads HTML result tables (<table> with <th> headers and <td>
// cells), as pages written with GitBook and similar tools embed them. The
// nearest heading above a table — a markdown heading, a line in bold, or an
// <hN> — is its section. Each row, and each column group such as
// "Pipeline (Prompt TPS)" / "Tensor (Prompt TPS)", is one record; rows
// sharing a source line get IDs "DOC:LINE#N".
//
// The markup is read with golang.org/x/net/html's tokenizer, which handles
// entities, attributes, comments and raw-text elements; one pass over the
// input, so the time is linear in its size. Cells must be closed explicitly
// (</td>, </th>): a row or table that starts while a cell is open is an
// error rather than a guess.
func ParseHTML(name string, data []byte) ([]Record, error) {
	doc := DocID(name)
	tables, err := readHTMLTables(name, data)
	if err != nil {
		return nil, err
	}
	headings := headingsByLine(data)
	for _, t := range tables {
		t.section = headings.before(t.startLine, t.startsLine)
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

// htmlTable is a table being read, with where it starts.
type htmlTable struct {
	*table
	startLine  int
	startsLine bool // the <table> tag is the first thing on its line
}

// readHTMLTables tokenizes data once and collects its outermost tables.
func readHTMLTables(name string, data []byte) ([]htmlTable, error) {
	z := html.NewTokenizer(bytes.NewReader(data))
	line := 1
	lineStart := true // only spaces since the last newline
	var (
		tables   []htmlTable
		cur      *htmlTable
		depth    int // nesting of <table> elements
		row      *tableRow
		rowIsHdr bool
		cellOpen bool
		cellTag  string
		cellText strings.Builder
	)
	flushRow := func() {
		if row == nil {
			return
		}
		if rowIsHdr && cur.header == nil {
			cur.header, cur.headerLine = row.cells, row.line
		} else if len(row.cells) > 0 {
			cur.rows = append(cur.rows, *row)
		}
		row = nil
	}
	for {
		tt := z.Next()
		raw := z.Raw()
		tokLine, tokAtStart := line, lineStart
		line += bytes.Count(raw, []byte{'\n'})
		if i := bytes.LastIndexByte(raw, '\n'); i >= 0 {
			lineStart = len(bytes.TrimSpace(raw[i+1:])) == 0
		} else if len(bytes.TrimSpace(raw)) > 0 {
			lineStart = false
		}
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); !errors.Is(err, io.EOF) {
				return nil, errorf(name, tokLine, "", "invalid HTML: %v", err)
			}
			if cur != nil {
				return nil, errorf(name, cur.startLine, "", "truncated: <table> is never closed")
			}
			return tables, nil
		case html.TextToken:
			if cellOpen && depth == 1 {
				cellText.Write(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			tn, _ := z.TagName()
			tag := string(tn)
			closing := tt == html.EndTagToken
			if tag == "table" {
				if closing {
					if depth == 0 {
						continue
					}
					depth--
					if depth > 0 {
						continue
					}
					if cellOpen {
						return nil, errorf(name, tokLine, "", "<%s> is never closed", cellTag)
					}
					flushRow()
					t := *cur
					if t.header == nil && len(t.rows) > 0 { // no <th>: the first row is the header
						t.header, t.headerLine = t.rows[0].cells, t.rows[0].line
						t.rows = t.rows[1:]
					}
					tables = append(tables, t)
					cur = nil
					continue
				}
				if tt == html.SelfClosingTagToken {
					continue
				}
				depth++
				if depth == 1 {
					cur = &htmlTable{table: &table{format: FormatHTML}, startLine: tokLine, startsLine: tokAtStart}
				}
				continue
			}
			if depth != 1 {
				continue // outside tables, or inside a nested one
			}
			switch tag {
			case "tr":
				if cellOpen {
					return nil, errorf(name, tokLine, "", "<%s> is never closed", cellTag)
				}
				flushRow()
				if !closing {
					row, rowIsHdr = &tableRow{line: tokLine}, false
				}
			case "th", "td":
				if !closing {
					if row == nil {
						row = &tableRow{line: tokLine}
					}
					if cellOpen {
						return nil, errorf(name, tokLine, "", "<%s> is never closed", cellTag)
					}
					cellOpen, cellTag = true, tag
					cellText.Reset()
					if tag == "th" {
						rowIsHdr = true
					}
					continue
				}
				if !cellOpen {
					return nil, errorf(name, tokLine, "", "</%s> without an open cell", tag)
				}
				row.cells = append(row.cells, strings.TrimSpace(cellEmphasis.Replace(cellText.String())))
				cellOpen = false
			case "br", "p", "div", "li":
				if cellOpen {
					cellText.WriteByte(' ')
				}
			}
		}
	}
}

// headingLines holds, for each line, the nearest heading-like line at or
// above it (a markdown heading, a line in bold, an <hN>), found in one pass.
type headingLines struct {
	at    []string // at[i]: the heading at or above 0-based line i
	table []bool   // line i starts with <table
}

func headingsByLine(data []byte) headingLines {
	lines := strings.Split(string(data), "\n")
	h := headingLines{at: make([]string, len(lines)), table: make([]bool, len(lines))}
	last := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		h.table[i] = strings.HasPrefix(strings.ToLower(t), "<table")
		if htmlHeadingRE.MatchString(t) {
			last = cleanHeading(strings.TrimLeft(t, "# "))
		}
		h.at[i] = last
	}
	return h
}

// before is the section of a table whose tag is on 1-based line: the
// heading at or above it, not counting the table's own line when the line
// starts with the table.
func (h headingLines) before(line int, startsLine bool) string {
	i := min(line, len(h.at)) - 1
	if i < 0 {
		return ""
	}
	if h.table[i] || startsLine {
		i--
	}
	if i < 0 {
		return ""
	}
	return h.at[i]
}
