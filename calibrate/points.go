package calibrate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// fitMetrics are the metrics the fit compares, with their weight in the loss.
// Output throughput stands in for request throughput when a source lacks it.
var fitMetrics = []struct {
	name   string
	weight float64
}{
	{model.RequestThroughput, 1.5},
	{model.MeanTPOT, 1},
	{model.MeanTTFT, 0.5},
	{model.MeanE2EL, 0.5},
	{model.OutputThroughput, 1},
}

// ReportMetrics are the metrics a fit report gives errors for.
var ReportMetrics = []string{model.RequestThroughput, model.MeanTTFT, model.MeanTPOT, model.MeanE2EL}

// point is one measured record prepared for fitting.
type point struct {
	rec    *results.Record
	series string // SeriesInfo.Key
	config string // configuration key (topology and settings) for leave-one-out
	shape  string // workload shape key
	topo   model.Topology
	load   model.Load
	isl    int
	osl    int
	prompt int // prompts to simulate
	meas   map[string]float64
	weight float64
	notes  []string
}

// groupKey identifies a (GPU, model, engine) group.
type groupKey struct{ gpu, model, engine string }

func (k groupKey) String() string {
	return fmt.Sprintf("%s / %s / %s", orDefaultS(k.gpu, "unknown GPU"), model.ShortName(orDefaultS(k.model, "unknown model")), k.engine)
}

func canonicalGPU(s string) string {
	if g, err := model.LookupGPU(s); err == nil {
		return g.Name
	}
	return s
}

func canonicalModel(s string) string {
	if m, err := model.LookupLLM(s); err == nil {
		return m.Name
	}
	return s
}

// preparePoints turns records into fit points and collects warnings about
// records that cannot be used or look non-physical. Records are never
// dropped silently: every skipped one gets a warning naming it.
func preparePoints(recs []results.Record, maxPrompts int) (map[groupKey][]*point, []groupKey, []string) {
	groups := map[groupKey][]*point{}
	var order []groupKey
	var warn []string
	for i := range recs {
		r := &recs[i]
		if r.Partial {
			warn = append(warn, fmt.Sprintf("record %s: skipped: an interrupted load point (capsim_partial); its metrics cover only the requests that finished", r.ID))
			continue
		}
		topo := r.System.Topology
		var notes []string
		if topo.GPUs() == 0 && topo.Validate() != nil {
			// The source does not say how it was deployed: assume one GPU.
			topo = model.Aggregated(model.Pool{Count: 1, TP: 1, PP: 1})
			notes = append(notes, "topology not stated: one GPU (1xTP1) assumed")
		}
		if err := topo.Validate(); err != nil {
			warn = append(warn, fmt.Sprintf("record %s: skipped: %v", r.ID, err))
			continue
		}
		osl := r.Workload.OSL
		if osl <= 0 && r.Workload.OSLMax > 0 {
			osl = oslEstimate(recs, r)
			notes = append(notes, fmt.Sprintf("output length not stated: %.0f tokens assumed (from rows of the same source with max_tokens %d)", osl, r.Workload.OSLMax))
		}
		if r.Workload.ISL <= 0 || osl <= 0 {
			warn = append(warn, fmt.Sprintf("record %s: skipped: prompt and output lengths unknown (isl %g, osl %g)", r.ID, r.Workload.ISL, r.Workload.OSL))
			continue
		}
		if err := r.Workload.Load.Validate(); err != nil {
			warn = append(warn, fmt.Sprintf("record %s: skipped: %v", r.ID, err))
			continue
		}
		p := &point{rec: r, topo: topo, load: r.Workload.Load, meas: map[string]float64{}, weight: 1, notes: notes}
		p.isl = max(1, int(math.Round(r.Workload.ISL)))
		p.osl = max(2, int(math.Round(osl)))
		bad := false
		for _, m := range fitMetrics {
			v, ok := r.Metric(m.name)
			if !ok {
				continue
			}
			if !(v > 0) || math.IsInf(v, 0) {
				warn = append(warn, fmt.Sprintf("record %s: %s = %v is not a positive number; metric ignored", r.ID, m.name, v))
				bad = true
				continue
			}
			p.meas[m.name] = v
		}
		if _, ok := p.meas[model.RequestThroughput]; ok {
			delete(p.meas, model.OutputThroughput)
		}
		if len(p.meas) == 0 {
			warn = append(warn, fmt.Sprintf("record %s: skipped: none of %s given", r.ID, strings.Join(ReportMetrics, ", ")))
			continue
		}
		if bad {
			p.weight *= 0.5
		}
		// Rows with failed requests are less trustworthy: weight by the success fraction.
		if r.Errors > 0 {
			total := r.Completed + r.Errors
			if total == 0 {
				total = max(r.Workload.NumPrompts, r.Errors)
			}
			frac := 1 - float64(r.Errors)/float64(max(total, 1))
			p.weight *= math.Max(0.1, frac)
			p.notes = append(p.notes, fmt.Sprintf("%d errors: weight %.2f", r.Errors, p.weight))
		}
		p.prompt = promptsFor(r, maxPrompts)
		key := groupKey{canonicalGPU(r.System.GPU), canonicalModel(r.System.Model), r.System.Engine}
		dep := r.DeploymentLabel()
		p.config = p.topo.Notation()
		if dep != "" {
			p.config += " " + dep
		}
		p.shape = shapeKey(r, osl)
		p.series = seriesKey(r, p)
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], p)
	}
	for _, key := range order {
		effectiveOSL(groups[key])
	}
	return groups, order, warn
}

// effectiveOSL corrects the output length of series whose requests stopped
// before the requested length. vLLM's identity E2E = TTFT + (OSL−1)·TPOT
// gives each point's mean output; when a series' median is clearly below
// the stated length, every point of the series uses that median.
func effectiveOSL(pts []*point) {
	est := map[string][]float64{}
	for _, p := range pts {
		e2e, ok1 := p.meas[model.MeanE2EL]
		ttft, ok2 := p.meas[model.MeanTTFT]
		tpot, ok3 := p.meas[model.MeanTPOT]
		if ok1 && ok2 && ok3 && e2e > ttft {
			est[p.series] = append(est[p.series], 1+(e2e-ttft)/tpot)
		}
	}
	for _, p := range pts {
		e := est[p.series]
		if len(e) < 2 {
			continue
		}
		m := math.Round(median(e))
		if m < 0.95*float64(p.osl) && m >= 2 {
			p.notes = append(p.notes, fmt.Sprintf("outputs stop early: mean output %.0f tokens (from E2E, TTFT and TPOT) instead of the stated %d", m, p.osl))
			p.osl = int(m)
		}
	}
}

// oslEstimate is the mean output length of a record that does not give it:
// the median ratio of output length to max_tokens over the rows of the same
// source, GPU and model that do, times the record's max_tokens (the
// max_tokens itself when no row says).
func oslEstimate(recs []results.Record, r *results.Record) float64 {
	var ratios []float64
	for i := range recs {
		q := &recs[i]
		if q.Source.File == r.Source.File && q.System.Model == r.System.Model && q.Workload.OSL > 0 && q.Workload.OSLMax > 0 {
			ratios = append(ratios, q.Workload.OSL/float64(q.Workload.OSLMax))
		}
	}
	if len(ratios) == 0 {
		return float64(r.Workload.OSLMax)
	}
	return math.Round(median(ratios) * float64(r.Workload.OSLMax))
}

// shapeKey names a workload shape by its requested lengths when the source
// states them (measured means vary from point to point), else by its means.
func shapeKey(r *results.Record, osl float64) string {
	isl := fmt.Sprintf("%g", math.Round(r.Workload.ISL))
	if r.Workload.ISLMax > 0 {
		isl = fmt.Sprint(r.Workload.ISLMax)
	}
	if r.Workload.OSLMax > 0 {
		return isl + ":" + fmt.Sprint(r.Workload.OSLMax)
	}
	// Without a stated maximum, mean outputs differ from point to point:
	// the shape is the prompt length alone.
	return isl + ":?"
}

// shapeLengths are the lengths shapeKey names.
func shapeLengths(r *results.Record) (isl, osl float64) {
	isl, osl = r.Workload.ISL, r.Workload.OSL
	if r.Workload.ISLMax > 0 {
		isl = float64(r.Workload.ISLMax)
	}
	if r.Workload.OSLMax > 0 {
		osl = float64(r.Workload.OSLMax)
	}
	return isl, osl
}

func seriesKey(r *results.Record, p *point) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s", r.Source.File, r.System.Engine, p.config, p.shape, r.Workload.Load.Kind, r.Source.Section)
}

// promptsFor is the number of prompts to simulate for a record: the
// record's own count when it says, else about ten per concurrent client
// (what vLLM's benchmark scripts typically used), at least 200.
func promptsFor(r *results.Record, maxPrompts int) int {
	if maxPrompts <= 0 {
		maxPrompts = 1280
	}
	l := r.Workload.Load
	if l.Kind == model.Burst {
		if r.Workload.NumPrompts > 0 {
			return r.Workload.NumPrompts // a burst's size is part of the workload
		}
		return 200
	}
	n := r.Workload.NumPrompts
	if n == 0 {
		n = 200
		if l.Concurrency > 0 {
			n = max(200, 10*l.Concurrency)
		}
	}
	return min(n, maxPrompts)
}

// physicalCheck warns about a record whose throughput exceeds what its GPUs
// could do at 100% of the roofline: every prompt or generated token costs at
// least 2 FLOPs per body parameter.
func physicalCheck(r *results.Record) string {
	g, err1 := model.LookupGPU(r.System.GPU)
	m, err2 := model.LookupLLM(r.System.Model)
	if err1 != nil || err2 != nil {
		return ""
	}
	gpus := r.System.Topology.GPUs()
	if gpus == 0 {
		return ""
	}
	tokPerS := 0.0
	if v, ok := r.Metric(model.TotalTokenThroughput); ok {
		tokPerS = v
	} else if v, ok := r.Metric(model.RequestThroughput); ok {
		tokPerS = v * (r.Workload.ISL + r.Workload.OSL)
	}
	peak := float64(gpus) * g.TFLOPS * 1e12 / (2 * m.BodyParams())
	if tokPerS > peak {
		return fmt.Sprintf("record %s: %.0f tokens/s exceeds the %.0f tokens/s %d×%s could compute at 100%% of peak for %s: non-physical, check the record",
			r.ID, tokPerS, peak, gpus, g.Name, model.ShortName(m.Name))
	}
	return ""
}

// settingsFrom reads a group's engine settings from its records, over the engine's defaults.
func settingsFrom(engine string, pts []*point) Settings {
	s := defaultSettings(engine)
	atoi := func(v string) int {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0
		}
		return n
	}
	for _, p := range pts {
		for k, v := range p.rec.System.Settings {
			k = strings.ReplaceAll(strings.ToLower(k), "_", "-")
			switch k {
			case "prefill.enforce-eager":
				s.PrefillEager = isTrue(v)
				continue
			case "decode.enforce-eager":
				s.DecodeEager = isTrue(v)
				continue
			case "decode.cudagraph-capture-sizes", "cudagraph-capture-sizes":
				if n := maxInList(v); n > 0 {
					s.GraphMax = n
				}
				continue
			}
			// Role-prefixed settings of the prefill or decode workers apply like plain ones.
			if i := strings.IndexByte(k, '.'); i >= 0 {
				k = k[i+1:]
			}
			switch k {
			case "block-size":
				if n := atoi(v); n > 0 {
					s.BlockSize = n
				}
			case "max-num-batched-tokens":
				if n := atoi(v); n > 0 {
					s.MaxNumBatchedTokens = n
				}
			case "max-num-seqs":
				if n := atoi(v); n > 0 {
					s.MaxNumSeqs = n
				}
			case "max-model-len":
				if n := atoi(v); n > 0 {
					s.MaxModelLen = n
				}
			case "gpu-memory-utilization":
				if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f <= 1 {
					s.GPUMemoryUtilization = f
				}
			case "prefill-enforce-eager":
				s.PrefillEager = isTrue(v)
			case "enforce-eager":
				if p.topo.Disaggregated() {
					s.PrefillEager = isTrue(v)
				} else {
					s.DecodeEager = isTrue(v)
				}
			case "decode-enforce-eager":
				s.DecodeEager = isTrue(v)
			case "cuda-graph-max", "cudagraph-max", "max-seq-len-to-capture", "cudagraph-capture-max":
				if n := atoi(v); n > 0 {
					s.GraphMax = n
				}
			case "router":
				s.Router = v
			}
		}
	}
	return s
}

func maxInList(v string) int {
	m := 0
	for _, f := range strings.Split(v, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			m = max(m, n)
		}
	}
	return m
}

func isTrue(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}
