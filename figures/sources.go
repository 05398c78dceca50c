package figures

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// ProfileRecords reads the records a profile was fitted from, for the
// overlay of a prediction priced with it: its series' source files (as the
// profile names them, else beside the profile file), each fitted record
// with the GPU, model, engine and topology the fit gave its series (a
// sidecar or a flag may have stated them). missing names the sources not
// found, whose points are not overlaid.
func ProfileRecords(prof *calibrate.Profile, profilePath string) (recs []results.Record, missing []string, err error) {
	bySeries := map[string]calibrate.SeriesInfo{}
	var paths []string
	for _, s := range prof.Calibrated {
		for _, id := range s.Records {
			bySeries[id] = s
		}
		if s.Source == "" {
			continue
		}
		p := s.Source
		if _, err := os.Stat(p); err != nil && !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(profilePath), s.Source)
		}
		if _, err := os.Stat(p); err != nil {
			if !slices.Contains(missing, s.Source) {
				missing = append(missing, s.Source)
			}
			continue
		}
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil, missing, nil
	}
	all, err := results.LoadFiles(paths)
	if err != nil {
		return nil, missing, err
	}
	for _, r := range all {
		s, ok := bySeries[r.ID]
		if !ok {
			continue // not fitted (filtered out, or flagged away)
		}
		r.System.GPU, r.System.Model, r.System.Engine = model.CanonicalGPU(s.GPU), model.CanonicalModel(s.Model), s.Engine
		r.System.Topology = s.Topology
		recs = append(recs, r)
	}
	return recs, missing, nil
}
