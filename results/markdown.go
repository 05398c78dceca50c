package results

import (
	"bytes"
	"html"
	"regexp"
	"strings"
)

var (
	mdHeadingRE   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdSeparatorRE = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)
	mdFenceRE     = regexp.MustCompile("^\\s*(```|~~~)")
	tagRE         = regexp.MustCompile(`<[^>]*>`)
)

func hasMarkdownTable(data []byte) bool {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if bytes.IndexByte(line, '|') >= 0 && bytes.IndexByte(line, '-') >= 0 && isSeparator(string(bytes.TrimSpace(line))) {
			return true
		}
	}
	return false
}

// isSeparator reports a markdown table delimiter row such as "|:--|---:|".
func isSeparator(line string) bool {
	if !strings.Contains(line, "-") {
		return false
	}
	for _, c := range line {
		switch c {
		case '|', '-', ':', ' ', '\t':
		default:
			return false
		}
	}
	return mdSeparatorRE.MatchString(line)
}

// ParseMarkdown reads markdown result tables. The headings above a table
// (joined with " > ") are its section; an "ISL:OSL=3000:150" in them gives
// the requested prompt and output lengths. Each row (and each column group,
// see classifyHeader) is one record; tables without metric columns are skipped.
func ParseMarkdown(name string, data []byte) ([]Record, error) {
	doc := DocID(name)
	lr := newLineReader(data)
	var (
		recs    []Record
		heads   [7]string
		inFence bool
		fence   string
	)
	section := func() string {
		var parts []string
		for _, h := range heads[1:] {
			if h != "" {
				parts = append(parts, h)
			}
		}
		return strings.Join(parts, " > ")
	}
	for {
		raw, ok := lr.next()
		if !ok {
			break
		}
		i := lr.line // 1-based line of raw
		line := strings.TrimSpace(raw)
		if m := mdFenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case !inFence:
				inFence, fence = true, m[1]
			case strings.HasPrefix(line, fence):
				inFence = false
			}
			continue
		}
		if inFence {
			continue
		}
		if m := mdHeadingRE.FindStringSubmatch(line); m != nil {
			level := len(m[1])
			heads[level] = cleanHeading(m[2])
			for l := level + 1; l < len(heads); l++ {
				heads[l] = ""
			}
			continue
		}
		sep, hasNext := lr.peek()
		if !strings.HasPrefix(line, "|") || !hasNext || !isSeparator(strings.TrimSpace(sep)) {
			continue
		}
		lr.next() // the separator
		t := table{format: FormatMarkdown, section: section(), headerLine: i, header: splitMarkdownRow(line)}
		sepCells := len(splitMarkdownRow(strings.TrimSpace(sep)))
		if sepCells != len(t.header) {
			return nil, errorf(name, i+1, "", "table separator has %d cells, the header %d", sepCells, len(t.header))
		}
		for {
			next, ok := lr.peek()
			if !ok || !strings.HasPrefix(strings.TrimSpace(next), "|") {
				break
			}
			lr.next()
			if len(recs)+len(t.rows) >= MaxRecords {
				return nil, tooManyRecords(name, lr.line)
			}
			t.rows = append(t.rows, tableRow{line: lr.line, cells: splitMarkdownRow(strings.TrimSpace(next))})
		}
		r, err := t.records(name, doc)
		if err != nil {
			return nil, err
		}
		if r != nil && len(t.rows) == 0 {
			return nil, errorf(name, t.headerLine, "", "result table has no rows")
		}
		if len(recs)+len(r) > MaxRecords {
			return nil, tooManyRecords(name, r[MaxRecords-len(recs)].Source.Line)
		}
		recs = append(recs, r...)
	}
	if inFence {
		// An unclosed fence hides everything after it; say so rather than drop rows.
		return nil, errorf(name, lr.line, "", "truncated: a ``` code block is never closed")
	}
	return recs, nil
}

// lineReader hands out the lines of a file one at a time, as substrings of
// one copy of it, so a parser's memory is the file plus what it keeps.
// A byte-order mark is dropped; "\r\n" counts as one line break (callers
// trim the "\r").
type lineReader struct {
	rest string
	line int  // 1-based number of the line next returned last
	done bool // the last line (after the final '\n', maybe empty) was returned
}

func newLineReader(data []byte) *lineReader {
	return &lineReader{rest: strings.TrimPrefix(string(data), "\ufeff")}
}

// next returns the next line; a file ending in '\n' ends with an empty line.
func (r *lineReader) next() (string, bool) {
	if r.done {
		return "", false
	}
	r.line++
	if i := strings.IndexByte(r.rest, '\n'); i >= 0 {
		l := r.rest[:i]
		r.rest = r.rest[i+1:]
		return l, true
	}
	r.done = true
	return r.rest, true
}

// peek returns the line next would return, without consuming it.
func (r *lineReader) peek() (string, bool) {
	if r.done {
		return "", false
	}
	if i := strings.IndexByte(r.rest, '\n'); i >= 0 {
		return r.rest[:i], true
	}
	return r.rest, true
}

// splitMarkdownRow splits "| a | b |" into cells, honouring "\|" escapes.
func splitMarkdownRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var b strings.Builder
	for k := 0; k < len(line); k++ {
		switch {
		case line[k] == '\\' && k+1 < len(line) && line[k+1] == '|':
			b.WriteByte('|')
			k++
		case line[k] == '|':
			cells = append(cells, cleanCell(b.String()))
			b.Reset()
		default:
			b.WriteByte(line[k])
		}
	}
	return append(cells, cleanCell(b.String()))
}

var (
	cellEmphasis    = strings.NewReplacer("**", "", "`", "")
	headingEmphasis = strings.NewReplacer("**", "", "__", "", "`", "", `\~`, "~", `\`, "")
)

func cleanCell(s string) string {
	if strings.IndexByte(s, '<') >= 0 {
		s = tagRE.ReplaceAllString(s, "")
	}
	s = cellEmphasis.Replace(s)
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	return strings.TrimSpace(s)
}

// cleanHeading strips markdown emphasis, HTML tags and entities from a heading.
func cleanHeading(s string) string {
	s = tagRE.ReplaceAllString(s, "")
	s = headingEmphasis.Replace(s)
	s = html.UnescapeString(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\u00a0", " ")), " ")
}
