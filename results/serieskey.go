package results

import (
	"fmt"
	"github.com/capsim/capsim/engine"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/capsim/capsim/model"
)

// SeriesKey identifies the series of a record, as fit, plot, predict and
// validate group them: source (seriesSource), GPU, model, engine,
// configuration (ConfigName), stated engine settings, nominal shape
// (ShapeKey) and kind of load. Measured means vary from point to point and
// do not split a series. GPU and model are compared as the catalog names
// them when the catalog knows them.
func SeriesKey(r *Record) string {
	return strings.Join([]string{seriesSource(r), model.CanonicalGPU(r.System.GPU),
		model.CanonicalModel(r.System.Model), r.System.Engine, ConfigName(r), settingsKey(r.System.Settings),
		ShapeKey(r), string(r.Workload.Load.Kind)}, "|")
}

// runFormats write one benchmark run per file (or per object), so the file
// itself says nothing about which points belong together: vLLM's
// --save-result writes one file per load point, AIPerf and genai-perf one
// export per run, llm-d one report per run.
var runFormats = map[string]bool{
	FormatVLLMJSON: true, FormatAIPerf: true, FormatAIPerfCSV: true,
	FormatGenAIPerf: true, FormatGenAIPerfCSV: true, FormatLLMD: true,
}

// seriesSource is the part of the series key that comes from where a record was
// read: its file and section, except for run-per-file formats whose
// records name their GPU and model — there, files of one system and
// workload form one series whatever their number (a six-file vLLM sweep
// with --metadata gpu=… is one series), and the section (vLLM's --label)
// still tells runs apart.
func seriesSource(r *Record) string {
	if runFormats[r.Source.Format] && r.System.GPU != "" && r.System.Model != "" {
		return "|" + r.Source.Section
	}
	return r.Source.File + "|" + r.Source.Section
}

// ConfigName names a record's configuration as the source writes it: the
// topology's notation ("3P(TP4) 1D(TP4)", "4xTP4"), then the deployment
// label that tells apart deployments of one topology ("base").
func ConfigName(r *Record) string {
	c := r.System.Topology.Notation()
	if d := r.DeploymentLabel(); d != "" {
		c += " " + d
	}
	return c
}

func settingsKey(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if IsHitRateKey(k) {
			continue // a property of the workload (per test), not of the deployment
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s;", k, m[k])
	}
	return b.String()
}

// NominalISL is the prompt length a series is named by: the requested
// length when the source states it, else the rounded mean.
func NominalISL(w Workload) string {
	if w.ISLMax > 0 {
		return strconv.Itoa(w.ISLMax)
	}
	return strconv.FormatFloat(math.Round(w.ISL), 'f', 0, 64)
}

// ShapeKey names a record's workload shape: "ISL:OSL" by the requested
// lengths where the source states them, "ISL:?" when it states no output
// maximum (mean outputs then differ from point to point).
func ShapeKey(r *Record) string {
	if r.Workload.OSLMax > 0 {
		return NominalISL(r.Workload) + ":" + strconv.Itoa(r.Workload.OSLMax)
	}
	return NominalISL(r.Workload) + ":?"
}

// HitRateSetting is the record setting that states a run's prefix-cache hit
// rate: a fraction in [0, 1) ("0.4") or a percentage ("40%") of the prompt
// tokens the engine served from its cache (vLLM's "Prefix cache hit rate").
// Spelled with dashes or underscores, in any case.
const HitRateSetting = "prefix_cache_hit_rate"

// IsHitRateKey says whether a settings key spells HitRateSetting.
func IsHitRateKey(k string) bool {
	return engine.SettingKey(k) == engine.SettingKey(HitRateSetting)
}

// anomalySeriesKey is the series Annotate checks a record against: the
// records of one file, section, row label and column group, with the
// same stated GPU, model, engine, topology, settings, load family (a
// burst beside the open-loop rates) and requested lengths. It stays finer
// and coarser than SeriesKey where a table's rows or columns are
// separate runs and a burst ends a rate sweep: on the fixtures the two
// group 23 of 67 files differently, and the anomaly notes follow this one.
func anomalySeriesKey(r Record) string {
	family := "open"
	switch r.Workload.Load.Kind {
	case model.ClosedLoop:
		family = "closed"
	case "":
		family = "unknown"
	}
	set := make([]string, 0, len(r.System.Settings))
	for _, k := range sortedKeys(r.System.Settings) {
		set = append(set, k+"="+r.System.Settings[k])
	}
	return strings.Join([]string{r.Source.File, r.Source.Section, r.Source.Row, r.Source.Column,
		r.System.GPU, r.System.Model, r.System.Engine, r.System.Topology.String(), strings.Join(set, ","), family,
		fmt.Sprint(r.Workload.ISLMax, "/", r.Workload.OSLMax)}, "\x00")
}
