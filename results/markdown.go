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
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
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
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
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
		if !strings.HasPrefix(line, "|") || i+1 >= len(lines) || !isSeparator(strings.TrimSpace(lines[i+1])) {
			continue
		}
		t := table{format: FormatMarkdown, section: section(), headerLine: i + 1, header: splitMarkdownRow(line)}
		sepCells := len(splitMarkdownRow(strings.TrimSpace(lines[i+1])))
		if sepCells != len(t.header) {
			return nil, errorf(name, i+2, "", "table separator has %d cells, the header %d", sepCells, len(t.header))
		}
		j := i + 2
		for ; j < len(lines); j++ {
			l := strings.TrimSpace(lines[j])
			if !strings.HasPrefix(l, "|") {
				break
			}
			t.rows = append(t.rows, tableRow{line: j + 1, cells: splitMarkdownRow(l)})
		}
		r, err := t.records(name, doc)
		if err != nil {
			return nil, err
		}
		if r != nil && len(t.rows) == 0 {
			return nil, errorf(name, t.headerLine, "", "result table has no rows")
		}
		recs = append(recs, r...)
		i = j - 1
	}
	if inFence {
		// An unclosed fence hides everything after it; say so rather than drop rows.
		return nil, errorf(name, len(lines), "", "truncated: a ``` code block is never closed")
	}
	return recs, nil
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
