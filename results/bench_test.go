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
