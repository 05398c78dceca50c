package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden parses every testdata/*.good.* file and compares the records
// with testdata/golden/NAME.json, and every *.bad.* file with the exact
// error text in testdata/golden/NAME.err.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.*.*")
	if err != nil {
		t.Fatal(err)
	}
	var good, bad int
	for _, f := range files {
		base := filepath.Base(f)
		switch {
		case strings.Contains(base, ".good."):
			good++
			t.Run(base, func(t *testing.T) {
				recs, err := ParseFile(f)
				if err != nil {
					t.Fatalf("ParseFile: %v", err)
				}
				got, err := json.MarshalIndent(recs, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, filepath.Join("testdata", "golden", base+".json"), append(got, '\n'))
			})
		case strings.Contains(base, ".bad."):
			bad++
			t.Run(base, func(t *testing.T) {
				recs, err := ParseFile(f)
				if err == nil {
					t.Fatalf("ParseFile succeeded with %d records, want an error", len(recs))
				}
				if recs != nil {
					t.Errorf("ParseFile returned %d records with its error", len(recs))
				}
				msg := err.Error()
				if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "results: "+f) {
					t.Errorf("error %q is not one line starting with %q", msg, "results: "+f)
				}
				checkGolden(t, filepath.Join("testdata", "golden", base+".err"), []byte(msg+"\n"))
			})
		}
	}
	if good < 5 || bad < 15 {
		t.Fatalf("found %d good and %d bad testdata files; the glob is broken", good, bad)
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./results -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update after checking):\ngot:\n%s\nwant:\n%s", path, clip(got), clip(want))
	}
}

func clip(b []byte) string {
	if len(b) > 3000 {
		return string(b[:3000]) + "…"
	}
	return string(b)
}
