package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LoadFiles reads result files with their sidecar metadata: NAME.meta.json
// beside a file adds what the file does not say (GPU, topology, engine, …).
// Empty names are skipped; two files whose records would share IDs are
// refused. No names at all is an error.
func LoadFiles(paths []string) ([]Record, error) {
	var all []Record
	seen := map[string]string{}
	for _, p := range paths {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		recs, err := ParseFile(p)
		if err != nil {
			return nil, err
		}
		doc := DocID(p)
		if prev := seen[doc]; prev != "" && prev != p {
			// Sweeps write one run=0.json per directory: name a later
			// file's records by its directory too.
			alt := filepath.Base(filepath.Dir(p)) + "/" + doc
			if other := seen[alt]; other != "" || alt == "./"+doc || alt == "//"+doc {
				return nil, fmt.Errorf("results: %s and %s would give records the same IDs (%s:LINE); rename one", prev, p, doc)
			}
			for i := range recs {
				recs[i].ID = alt + strings.TrimPrefix(recs[i].ID, doc)
			}
			doc = alt
		}
		seen[doc] = p
		mp := MetaPath(p)
		if data, err := os.ReadFile(mp); err == nil {
			meta, err := ParseMeta(mp, data)
			if err != nil {
				return nil, err
			}
			if err := meta.Apply(recs); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("results: %w", err)
		}
		all = append(all, recs...)
	}
	if len(all) == 0 {
		return nil, errors.New("results: no result files named")
	}
	return all, nil
}

// Filter selects records; empty fields match everything.
type Filter struct {
	GPU    string // case-insensitive substring of the GPU name
	Model  string // case-insensitive substring of the model id
	Engine string // case-insensitive substring of the engine label
	Source string // case-insensitive prefix of the record ID or of the file's base name
}

// Select returns the records the filter matches, in order (never nil).
func (f Filter) Select(recs []Record) []Record {
	contains := func(s, sub string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(sub)) }
	hasPrefix := func(s, p string) bool { return strings.HasPrefix(strings.ToLower(s), strings.ToLower(p)) }
	out := []Record{}
	for _, r := range recs {
		switch {
		case f.GPU != "" && (r.System.GPU == "" || !contains(r.System.GPU, f.GPU)):
		case f.Model != "" && !contains(r.System.Model, f.Model):
		case f.Engine != "" && !contains(r.System.Engine, f.Engine):
		case f.Source != "" && !hasPrefix(r.ID, f.Source) && !hasPrefix(filepath.Base(r.Source.File), f.Source):
		default:
			out = append(out, r)
		}
	}
	return out
}
