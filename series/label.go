package series

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// TopologySlug is a topology as file names spell it: "4xTP2", or
// "3p-tp4-1d-tp4" for prefill and decode pools; "" when none is stated.
func TopologySlug(t model.Topology) string {
	switch {
	case t.Disaggregated():
		return fmt.Sprintf("%dp-tp%d-%dd-tp%d", t.Prefill.Count, t.Prefill.TP, t.Decode.Count, t.Decode.TP)
	case t.GPUs() == 0:
		return ""
	}
	return t.Replicas.String()
}

// Slug is a file name for the series, without extension: readable and
// stable ("004-h20-qwen3-32b-dynamo-0.3.0-3p-tp4-1d-tp4-isl3000-osl150-concurrency").
func (s *Series) Slug() string {
	r := s.First()
	doc := results.DocID(r.Source.File)
	if i := strings.IndexByte(doc, '_'); i > 0 {
		doc = doc[:i] // seed documents: "004_40ae…" → "004"
	}
	topo := TopologySlug(r.System.Topology)
	parts := []string{doc, r.System.GPU, model.ShortName(r.System.Model), r.System.Engine, topo, r.DeploymentLabel(),
		"isl" + results.NominalISL(r.Workload)}
	if o := r.Workload.OSLMax; o > 0 {
		parts = append(parts, fmt.Sprintf("osl%d", o))
	} else if r.Workload.OSL > 0 {
		parts = append(parts, fmt.Sprintf("osl%.0f", r.Workload.OSL))
	}
	parts = append(parts, string(s.Kind))
	return Slugify(strings.Join(parts, "-"))
}

// Slugify lower-cases s and keeps letters, digits and dots, one dash for
// every run of anything else, with no dash or dot at its end: a file name's
// stem.
func Slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-.")
}

// Label names a series' configuration as the source states it:
// "H20 · Qwen3-32B · dynamo-0.3.0 · 3P(TP4) 1D(TP4)", leaving out what the
// source does not say and naming the GPU and model assumed for it, if any.
func (s *Series) Label(assumedGPU, assumedModel string) string {
	r := s.First()
	var parts []string
	gpu, mdl := r.System.GPU, model.ShortName(r.System.Model)
	switch {
	case gpu == "" && mdl == "" && assumedGPU != "":
		parts = append(parts, fmt.Sprintf("GPU and model not stated (as %s · %s)", assumedGPU, model.ShortName(assumedModel)))
	case gpu == "" && mdl == "":
		parts = append(parts, "GPU and model not stated")
	case gpu == "":
		parts = append(parts, "GPU not stated", mdl)
	case mdl == "":
		parts = append(parts, gpu, "model not stated")
	default:
		parts = append(parts, gpu, mdl)
	}
	if r.System.Engine != "" {
		parts = append(parts, r.System.Engine)
	}
	if r.System.Topology.GPUs() > 0 {
		parts = append(parts, results.ConfigName(r))
	}
	return strings.Join(parts, " · ")
}

// Where says where a series comes from: the file, its section (clipped)
// and the kind of load.
func (s *Series) Where() []string {
	r := s.First()
	out := []string{filepath.Base(r.Source.File)}
	if sec := []rune(r.Source.Section); len(sec) > 64 {
		out = append(out, string(sec[:63])+"…")
	} else if len(sec) > 0 {
		out = append(out, r.Source.Section)
	}
	return append(out, LoadDescription(r.Workload.Load))
}

// LoadDescription says how a load offers requests: "closed loop",
// "Poisson arrivals", "gamma arrivals, burstiness 0.5", "all prompts sent at once".
func LoadDescription(l model.Load) string {
	switch l.Kind {
	case model.ClosedLoop:
		return "closed loop"
	case model.OpenLoop:
		if l.Burstiness == 1 || l.Burstiness == 0 {
			return "Poisson arrivals"
		}
		return fmt.Sprintf("gamma arrivals, burstiness %g", l.Burstiness)
	case model.Burst:
		return "all prompts sent at once"
	}
	return string(l.Kind)
}
