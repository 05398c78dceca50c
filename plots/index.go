package plots

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
)

// indexPage is one self-contained HTML file: the figures grouped by GPU,
// model and engine, one table per group with a column per metric holding
// the median error; clicking a column header sorts its table by that
// column (a few lines of script, no framework; without script the page
// reads the same, unsorted).
var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #333; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.4em 0.8em; text-align: left; vertical-align: top; }
th.sort { cursor: pointer; text-decoration: underline dotted; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { width: 480px; border: 1px solid #eee; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>{{.Count}} figure(s) in {{len .Groups}} group(s) by GPU, model and engine. Errors are median absolute percentage errors of the prediction against the measurements; click a column to sort by it (largest error first, again for smallest).</p>
{{range .Groups}}<h2>{{.Name}}</h2>
<table>
<thead>
<tr><th>figure</th><th>title</th>{{range $.Metrics}}<th class="sort">{{.}}</th>{{end}}</tr>
</thead>
<tbody>
{{range .Rows}}<tr><td><a href="{{.File}}"><img src="{{.File}}" alt="{{.Title}}"></a></td><td><a href="{{.File}}">{{.Title}}</a></td>{{range .Errors}}<td class="num" data-v="{{.Value}}">{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{end}}<script>
document.querySelectorAll("th.sort").forEach(function (th) {
  th.addEventListener("click", function () {
    var col = th.cellIndex, body = th.closest("table").tBodies[0];
    var down = th.dataset.dir !== "down"; th.dataset.dir = down ? "down" : "up";
    var val = function (tr) { var v = tr.cells[col].dataset.v; return v === "" ? (down ? -Infinity : Infinity) : +v; };
    Array.from(body.rows).sort(function (a, b) { return down ? val(b) - val(a) : val(a) - val(b); })
      .forEach(function (tr) { body.appendChild(tr); });
  });
});
</script>
</body>
</html>
`))

type indexCell struct {
	Text, Value string // Value is the error as a number for sorting; "" when there is none
}

type indexRow struct {
	File, Title string
	Errors      []indexCell // one cell per column metric
}

type indexGroup struct {
	Name string
	Rows []indexRow
}

// WriteIndex writes an HTML page listing every figure, grouped by GPU,
// model and engine (groups in the order they first appear, entries in the
// given order within each), with a column per metric holding its median
// error as a percentage ("–" where an entry has none); each table sorts by
// a column when its header is clicked. File paths are used as given,
// relative to the page.
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
	var groups []indexGroup
	byName := map[string]int{}
	for _, e := range entries {
		row := indexRow{File: e.File, Title: e.Title, Errors: make([]indexCell, len(metrics))}
		for j, m := range metrics {
			v, ok := e.Errors[m]
			switch {
			case !ok || math.IsNaN(v) || math.IsInf(v, 0):
				row.Errors[j] = indexCell{Text: "–"}
			default:
				row.Errors[j] = indexCell{Text: fmt.Sprintf("%.1f%%", v), Value: strconv.FormatFloat(v, 'g', 6, 64)}
			}
		}
		name := e.GroupName()
		k, ok := byName[name]
		if !ok {
			k = len(groups)
			byName[name] = k
			groups = append(groups, indexGroup{Name: name})
		}
		groups[k].Rows = append(groups[k].Rows, row)
	}
	err := indexPage.Execute(w, struct {
		Title   string
		Count   int
		Metrics []string
		Groups  []indexGroup
	}{title, len(entries), labels, groups})
	if err != nil {
		return fmt.Errorf("plots: writing index: %w", err)
	}
	return nil
}

// GroupName is the heading an entry is listed under: its GPU, model and
// engine joined by " · ", or "all series" for an entry that names none
// (such as the summary figure).
func (e IndexEntry) GroupName() string {
	var parts []string
	for _, p := range []string{e.GPU, e.Model, e.Engine} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "all series"
	}
	return strings.Join(parts, " · ")
}
