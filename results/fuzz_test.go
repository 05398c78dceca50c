package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedCorpus adds every testdata file and the embedded-fixture seed
// documents (read from disk: results must not import fixtures).
func seedCorpus(f *testing.F, exts ...string) {
	var files []string
	for _, g := range []string{"testdata/*.*", "../fixtures/seeds/*"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	for _, p := range files {
		if strings.HasSuffix(p, ".meta.json") {
			continue
		}
		ok := len(exts) == 0
		for _, e := range exts {
			ok = ok || strings.HasSuffix(p, e)
		}
		if !ok {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// checkParse is the fuzz oracle: no panic (the fuzzer catches those), and
// either a one-line "results: NAME…" error with no records, or records that
// are consistent: IDs unique, lines inside the input, the parser's format,
// finite JSON-encodable metrics, at least one metric each.
func checkParse(t *testing.T, name string, data []byte, recs []Record, err error, format string) {
	t.Helper()
	if err != nil {
		if recs != nil {
			t.Fatalf("records returned with error %v", err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "results: "+name) || strings.Contains(msg, "\n") {
			t.Fatalf("bad error text %q", msg)
		}
		return
	}
	lines := bytes.Count(data, []byte{'\n'}) + 1
	ids := map[string]bool{}
	for _, r := range recs {
		if r.ID == "" || ids[r.ID] {
			t.Fatalf("empty or duplicate ID %q", r.ID)
		}
		ids[r.ID] = true
		if r.Source.Line < 1 || r.Source.Line > lines {
			t.Fatalf("%s: line %d outside 1..%d", r.ID, r.Source.Line, lines)
		}
		if format != "" && r.Source.Format != format {
			t.Fatalf("%s: format %q from the %s parser", r.ID, r.Source.Format, format)
		}
		if len(r.Metrics) == 0 {
			t.Fatalf("%s: no metrics", r.ID)
		}
		if r.Errors < 0 || r.Completed < 0 || r.Workload.NumPrompts < 0 {
			t.Fatalf("%s: negative count", r.ID)
		}
	}
	if _, err := json.Marshal(recs); err != nil {
		t.Fatalf("records do not encode as JSON: %v", err)
	}
}

func FuzzParseVLLMJSON(f *testing.F) {
	seedCorpus(f, ".json", ".jsonl", ".md")
	f.Add([]byte(`{"request_rate": NaN, "completed": 1, "mean_ttft_ms": Infinity}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseVLLMJSON("fuzz.json", data)
		checkParse(t, "fuzz.json", data, recs, err, FormatVLLMJSON)
	})
}

func FuzzParseVLLMText(f *testing.F) {
	seedCorpus(f, ".txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseVLLMText("fuzz.txt", data)
		checkParse(t, "fuzz.txt", data, recs, err, FormatVLLMText)
	})
}

func FuzzParseMarkdown(f *testing.F) {
	seedCorpus(f, ".md")
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseMarkdown("fuzz.md", data)
		checkParse(t, "fuzz.md", data, recs, err, FormatMarkdown)
	})
}

func FuzzParseHTML(f *testing.F) {
	seedCorpus(f, ".html", ".md")
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseHTML("fuzz.html", data)
		checkParse(t, "fuzz.html", data, recs, err, FormatHTML)
	})
}

func FuzzParse(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := Parse("fuzz.any", data)
		checkParse(t, "fuzz.any", data, recs, err, "")
		if err == nil && len(recs) == 0 {
			t.Fatal("Parse returned neither records nor an error")
		}
	})
}

func FuzzParseGuideLLM(f *testing.F) {
	seedCorpus(f, ".json", ".yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseGuideLLM("fuzz.json", data)
		checkParse(t, "fuzz.json", data, recs, err, FormatGuideLLM)
	})
}

func FuzzParseAIPerfJSON(f *testing.F) {
	seedCorpus(f, ".json")
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseAIPerfJSON("fuzz.json", data)
		checkParse(t, "fuzz.json", data, recs, err, FormatAIPerf)
	})
}

func FuzzParseGenAIPerfJSON(f *testing.F) {
	seedCorpus(f, ".json")
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseGenAIPerfJSON("fuzz.json", data)
		checkParse(t, "fuzz.json", data, recs, err, FormatGenAIPerf)
	})
}

func FuzzParseProfileCSV(f *testing.F) {
	seedCorpus(f, ".csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseProfileCSV("fuzz.csv", data)
		checkParse(t, "fuzz.csv", data, recs, err, FormatAIPerfCSV)
	})
}

func FuzzParseLLMDReport(f *testing.F) {
	seedCorpus(f, ".yaml", ".json")
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseLLMDReport("fuzz.yaml", data)
		checkParse(t, "fuzz.yaml", data, recs, err, FormatLLMD)
	})
}

func FuzzParseCSV(f *testing.F) {
	seedCorpus(f, ".csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseCSV("fuzz.csv", data)
		checkParse(t, "fuzz.csv", data, recs, err, FormatCSV)
	})
}

// FuzzParseMeta: a metadata sidecar is refused with a one-line
// "results: NAME" error or read into metadata that applies to records
// without panicking and encodes as JSON.
func FuzzParseMeta(f *testing.F) {
	m, _ := filepath.Glob("../fixtures/seeds/*.meta.json")
	for _, p := range m {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"document": "x.md", "defaults": {"gpu_count": -8, "isl": -1000}}`))
	f.Add([]byte("\ufeff{\"document\": \"x.md\", \"defaults\": {\"gpu\": \"H20\", \"gpu\": \"H100\"}}"))
	recs, _ := Parse("x.md", []byte("| Concurrency | Mean TTFT (ms) |\n|---|---|\n| 4 | 10 |\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		meta, err := ParseMeta("x.meta.json", data)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "results: x.meta.json") || strings.Contains(msg, "\n") {
				t.Fatalf("bad error text %q", msg)
			}
			return
		}
		if _, err := json.Marshal(meta); err != nil {
			t.Fatalf("metadata that was read does not encode: %v", err)
		}
		rs := append([]Record(nil), recs...)
		for i := range rs {
			rs[i].Metrics = map[string]float64{"mean_ttft_ms": 10}
		}
		if err := meta.Apply(rs); err == nil {
			for _, r := range rs {
				if r.System.GPUCount < 0 || r.Workload.ISL < 0 || r.Workload.NumPrompts < 0 {
					t.Fatalf("negative count after Apply: %+v", r)
				}
			}
		}
	})
}
