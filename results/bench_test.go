package results

import (
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
