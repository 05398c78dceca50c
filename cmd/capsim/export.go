package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capsim/capsim/deploy"
)

// The deployable specs of a plan's recommendations and of a prediction.
var (
	planSpecs   = deploy.FromPlan
	predictSpec = deploy.FromPrediction
)

// writeExport writes specs under dir (deploy.Export) and says on w what it
// wrote and which specs it left out.
func writeExport(w io.Writer, dir string, specs []deploy.Spec) error {
	paths, skipped, err := deploy.Export(dir, specs)
	var warned []string // plan's attention layouts of one shape share a reason
	for _, s := range skipped {
		msg := fmt.Sprintf("capsim: warning: not exported: %s on %s: %v\n", s.Spec.Topology.Notation(), s.Spec.GPU, s.Err)
		if !slices.Contains(warned, msg) {
			warned = append(warned, msg)
			fmt.Fprint(w, msg)
		}
	}
	if err != nil {
		return err
	}
	var names []string
	for _, p := range paths {
		if n := filepath.Base(p); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	fmt.Fprintf(w, "exported %d deployment(s) to %s (%d files: %s)\n", len(specs)-len(skipped), dir, len(paths), strings.Join(names, ", "))
	var routers []string // the router behind each prediction and what deploys it
	for _, s := range specs {
		if l := s.RouterLine(); l != "" && !slices.Contains(routers, l) && !slices.ContainsFunc(skipped, func(k deploy.Skipped) bool { return k.Spec.Rank == s.Rank && k.Spec.Topology == s.Topology }) {
			routers = append(routers, l)
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	return nil
}
