package plots

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
)

// indexPage is one self-contained HTML file: a table of every figure with
// its errors, each thumbnail linking to the full-size figure.
var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #333; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid #ddd; padding: 0.4em 0.8em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { width: 480px; border: 1px solid #eee; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>{{len .Rows}} figure(s). Errors are median absolute percentage errors of the prediction against the measurements.</p>
<table>
<tr><th>figure</th><th>title</th>{{range .Metrics}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td><a href="{{.File}}"><img src="{{.File}}" alt="{{.Title}}"></a></td><td><a href="{{.File}}">{{.Title}}</a></td>{{range .Errors}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}</table>
</body>
</html>
`))

type indexRow struct {
	File, Title string
	Errors      []string // one cell per column metric
}

// WriteIndex writes an HTML page listing every figure, in the given order,
// with a column per metric holding its median error as a percentage ("–"
// where an entry has none). File paths are used as given, relative to the
// page.
func WriteIndex(w io.Writer, title string, entries []IndexEntry) error {
	seen := map[string]bool{}
	for _, e := range entries {
		for m := range e.Errors {
			seen[m] = true
		}
	}
	metrics := orderMetrics(keys(seen))
	labels := make([]string, len(metrics))
	for i, m := range metrics {
		// The unit of the metric is not the unit of its error.
		labels[i], _, _ = strings.Cut(MetricLabel(m), " (")
	}
	rows := make([]indexRow, len(entries))
	for i, e := range entries {
		rows[i] = indexRow{File: e.File, Title: e.Title, Errors: make([]string, len(metrics))}
		for j, m := range metrics {
			v, ok := e.Errors[m]
			switch {
			case !ok || math.IsNaN(v):
				rows[i].Errors[j] = "–"
			default:
				rows[i].Errors[j] = fmt.Sprintf("%.1f%%", v)
			}
		}
	}
	err := indexPage.Execute(w, struct {
		Title   string
		Metrics []string
		Rows    []indexRow
	}{title, labels, rows})
	if err != nil {
		return fmt.Errorf("plots: writing index: %w", err)
	}
	return nil
}
