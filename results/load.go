package results

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/capsim/capsim/internal/inputfile"
)

// LoadFiles reads result files with their sidecar metadata: NAME.meta.json
// beside a file adds what the file does not say (GPU, topology, engine, …).
// Empty names are skipped; two files whose records would share IDs are
// refused. No names at all is an error.
func LoadFiles(paths []string) ([]Record, error) {
	var all []Record
	seen := map[string]string{}    // record ID prefix → the file that has it
	firstOf := map[string][2]int{} // DocID → the first such file's records in all, to rename on a collision
	renamed := map[string]bool{}   // DocIDs whose files are named by their directory
	for _, p := range paths {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		recs, err := ParseFile(p)
		if err != nil {
			return nil, err
		}
		if err := applyConfigBeside(p, recs); err != nil {
			return nil, err
		}
		mp := MetaPath(p)
		if data, err := inputfile.ReadFile(mp); err == nil {
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
		doc := DocID(p)
		if prev := seen[doc]; (prev != "" && prev != p) || renamed[doc] {
			// Sweeps write one run=0.json per directory: name every file
			// of the colliding name by its directory too.
			if !renamed[doc] {
				span := firstOf[doc]
				alt := dirDoc(prev, doc)
				if seen[alt] != "" {
					return nil, fmt.Errorf("results: %s and %s would give records the same IDs (%s:LINE); rename one", seen[alt], prev, alt)
				}
				renameDoc(all[span[0]:span[1]], doc, alt)
				seen[alt], renamed[doc] = prev, true
			}
			alt := dirDoc(p, doc)
			if other := seen[alt]; other != "" && other != p {
				return nil, fmt.Errorf("results: %s and %s would give records the same IDs (%s:LINE); rename one", other, p, alt)
			}
			renameDoc(recs, doc, alt)
			doc = alt
		} else {
			firstOf[doc] = [2]int{len(all), len(all) + len(recs)}
		}
		seen[doc] = p
		all = append(all, recs...)
	}
	if len(all) == 0 {
		return nil, errors.New("results: no result files named")
	}
	return all, nil
}

// applyConfigBeside applies the inference-perf config found near the
// report at p to its records (inferencePerfConfig); other formats have none.
func applyConfigBeside(p string, recs []Record) error {
	if len(recs) == 0 || recs[0].Source.Format != FormatInferencePerf {
		return nil
	}
	cp, err := inferencePerfConfig(p)
	if err != nil || cp == "" {
		return err
	}
	data, err := inputfile.ReadFile(cp)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return ApplyInferencePerfConfig(cp, data, recs)
}

// dirDoc is a file's record ID prefix named by its directory too: "dir/doc".
func dirDoc(path, doc string) string {
	return filepath.Base(filepath.Dir(path)) + "/" + doc
}

// renameDoc moves records whose IDs begin with doc to alt (a sidecar's own
// "id", which does not begin with doc, is kept).
func renameDoc(recs []Record, doc, alt string) {
	for i := range recs {
		if rest, ok := strings.CutPrefix(recs[i].ID, doc+":"); ok {
			recs[i].ID = alt + ":" + rest
		}
	}
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
