package figures

import (
	"fmt"
	"strings"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
)

// MaxNameLen bounds a series figure's name without extension, so that
// with a repeat's "-NN" and ".png" it stays under 80 characters.
const MaxNameLen = 72

// FileName is a series figure's name without extension, by the series'
// system and shape, not its first file: GPU, model, engine, topology and
// deployment label, then ISL, OSL and kind of load
// ("h20-qwen3-32b-dynamo-0.3.0-3p-tp4-1d-tp4-isl3000-osl150-conc").
// Beyond MaxNameLen the deployment label goes, then the system part is
// cut; the shape always stays. WriteDir numbers repeats (UniqueName).
func FileName(s *series.Series) string {
	r := s.First()
	topo := series.TopologySlug(r.System.Topology)
	mdl := r.System.Model
	if mdl != "" {
		mdl = model.ShortName(mdl)
	}
	shape := []string{"isl" + results.NominalISL(r.Workload)}
	if o := r.Workload.OSLMax; o > 0 {
		shape = append(shape, fmt.Sprintf("osl%d", o))
	} else if r.Workload.OSL > 0 {
		shape = append(shape, fmt.Sprintf("osl%.0f", r.Workload.OSL))
	}
	kind := string(s.Kind)
	if s.Kind == model.ClosedLoop {
		kind = "conc" // "concurrency" alone would take a sixth of the name
	}
	shape = append(shape, kind)
	sys := []string{r.System.GPU, mdl, r.System.Engine, topo}
	tail := slugify(strings.Join(shape, "-"))
	name := slugify(strings.Join(append(sys, r.DeploymentLabel()), "-"))
	if len(name)+1+len(tail) > MaxNameLen {
		name = slugify(strings.Join(sys, "-"))
	}
	if room := MaxNameLen - 1 - len(tail); len(name) > room {
		name = strings.TrimRight(name[:max(room, 0)], "-.")
	}
	if name == "" {
		return tail
	}
	return name + "-" + tail
}

// slugify is series.Slugify with no dot at its start either.
func slugify(s string) string { return strings.TrimLeft(series.Slugify(s), ".") }
