package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParseSeeds parses the five seed documents (239 records) per iteration.
func BenchmarkParseSeeds(b *testing.B) {
	files, _ := filepath.Glob("../fixtures/seeds/*")
	var docs [][]byte
	var names []string
	for _, f := range files {
		if strings.HasSuffix(f, ".meta.json") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs, names = append(docs, data), append(names, f)
	}
	if len(docs) != 5 {
		b.Fatalf("found %d seed documents", len(docs))
	}
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for i, d := range docs {
			recs, err := Parse(names[i], d)
			if err != nil {
				b.Fatal(err)
			}
			n += len(recs)
		}
		if n != 239 {
			b.Fatalf("%d records", n)
		}
	}
}

// BenchmarkParseLargeMarkdown parses one 20,000-row series (anomaly checks
// included), to keep the parsers and Annotate linear in the rows.
func BenchmarkParseLargeMarkdown(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("## Result (ISL:OSL=100:10)\n\n| Concurrency | Request Throughput (req/s) | Mean E2E Latency (ms) |\n|---|---|---|\n")
	for i := range 20000 {
		fmt.Fprintf(&sb, "| %d | %.2f | %.1f |\n", i+1, 0.1*float64(i%50+1), 100+float64(i%7))
	}
	data := []byte(sb.String())
	b.ResetTimer()
	for b.Loop() {
		recs, err := Parse("big.md", data)
		if err != nil || len(recs) != 20000 {
			b.Fatalf("%d records, %v", len(recs), err)
		}
	}
}

// BenchmarkParseHTMLSize parses HTML pages of growing size: the time per
// row must stay flat (one tokenizer pass, headings found in one pass).
func BenchmarkParseHTMLSize(b *testing.B) {
	for _, tables := range []int{10, 100, 1000} {
		var sb strings.Builder
		for t := 0; t < tables; t++ {
			fmt.Fprintf(&sb, "## Table %d\n\n<table><thead><tr><th>Concurrency</th><th>Gen TPS</th><th>Avg Latency (s)</th></tr></thead>\n<tbody>\n", t)
			for r := 1; r <= 10; r++ {
				fmt.Fprintf(&sb, "<tr><td>%d</td><td>%d.5 &nbsp;</td><td><b>%d.25</b></td></tr>\n", r, 100*r, r)
			}
			sb.WriteString("</tbody></table>\n\n")
		}
		data := []byte(sb.String())
		b.Run(fmt.Sprintf("rows=%d", tables*10), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				recs, err := ParseHTML("page.md", data)
				if err != nil || len(recs) != tables*10 {
					b.Fatalf("%d records, %v", len(recs), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tables*10), "ns/row")
		})
	}
}
