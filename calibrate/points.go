package calibrate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
	"github.com/capsim/capsim/workload"
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
	series string // results.SeriesKey of the record
	config string // configuration key (topology and settings) for leave-one-out
	shape  string // workload shape key
	topo   model.Topology
	w      workload.Workload // the run as series.Workloads reads it (Seed unset: workload() sets FitSeed)
	// stated is the KV-cache sizing and batch limits of the record's own
	// engine: a group's records may differ (one source ran
	// --gpu-memory-utilization 0.25 and 0.5, another tuned
	// max_num_tokens), and each point is simulated with its own.
	stated engine.Settings
	meas   map[string]float64
	weight float64
	notes  []string
}

// groupKey identifies a (GPU, model, engine) group.
type groupKey struct{ gpu, model, engine string }

func (k groupKey) String() string {
	return fmt.Sprintf("%s / %s / %s", orDefaultS(k.gpu, "unknown GPU"), model.ShortName(orDefaultS(k.model, "unknown model")), orDefaultS(k.engine, "unknown engine"))
}

// defaultTopology is the deployment assumed for a source that does not say: one GPU.
func defaultTopology(t model.Topology) (model.Topology, string) {
	if t.GPUs() == 0 && t.Validate() != nil {
		return model.Aggregated(model.Pool{Count: 1, TP: 1, PP: 1}), "topology not stated: one GPU (1xTP1) assumed"
	}
	return t, ""
}

// preparePoints turns records into fit points and collects warnings about
// records that cannot be used or look non-physical. Records are never
// dropped silently: every skipped one gets a warning naming it. The
// workload of each point is series.Workloads', as every other simulation
// of a record uses it.
func preparePoints(recs []results.Record, maxPrompts int) (map[groupKey][]*point, []groupKey, []string) {
	groups := map[groupKey][]*point{}
	var order []groupKey
	var warn []string
	works, werrs := series.Workloads(recs, maxPrompts)
	for i := range recs {
		r := &recs[i]
		if r.Partial {
			warn = append(warn, fmt.Sprintf("record %s: skipped: an interrupted load point (capsim_partial); its metrics cover only the requests that finished", r.ID))
			continue
		}
		topo, note := defaultTopology(r.System.Topology)
		var notes []string
		if note != "" {
			notes = append(notes, note)
		}
		if err := topo.Validate(); err != nil {
			warn = append(warn, fmt.Sprintf("record %s: skipped: %v", r.ID, err))
			continue
		}
		var unusable *series.UnusableError
		if errors.As(werrs[i], &unusable) {
			warn = append(warn, fmt.Sprintf("record %s: skipped: %s", r.ID, unusable.Reason))
			continue
		} else if werrs[i] != nil {
			warn = append(warn, fmt.Sprintf("record %s: skipped: %v", r.ID, werrs[i]))
			continue
		}
		w := works[i]
		notes = append(notes, w.Notes...)
		p := &point{rec: r, topo: topo, w: w, meas: map[string]float64{}, weight: 1, notes: notes}
		p.stated = recordSettings(r.System.Engine, r, topo)
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
		key := groupKey{model.CanonicalGPU(r.System.GPU), model.CanonicalModel(recordModel(r)), r.System.Engine}
		if v, n := recordPlacement(r); v != "" && n == 0 {
			warn = append(warn, fmt.Sprintf("record %s: placement %q names no count of nodes (as in \"2 nodes\"); priced on one server", r.ID, v))
		}
		p.config = p.topo.Notation()
		if dep := r.DeploymentLabel(); dep != "" {
			p.config += " " + dep
		}
		p.shape = results.ShapeKey(r)
		p.series = results.SeriesKey(r)
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], p)
	}
	// One group prices all its records alike (settingsFrom takes the widest
	// placement): say so when they state different ones.
	for _, k := range order {
		seen := map[int]bool{}
		for _, p := range groups[k] {
			seen[max(1, recordNodes(p.rec))] = true
		}
		if len(seen) > 1 {
			var ns []int
			for n := range seen {
				ns = append(ns, n)
			}
			slices.Sort(ns)
			warn = append(warn, fmt.Sprintf("group %s: its records state workers on %v nodes; every record is priced on the widest, %d", k, ns, ns[len(ns)-1]))
		}
		// Each record runs with its own engine generation's defaults
		// (applyRecord); the group's own settings, which price other
		// deployments from it, take the last record's.
		gens := map[engine.Generation]bool{}
		for _, p := range groups[k] {
			gen, _ := vllmGeneration(k.engine, []*point{p})
			gens[gen] = true
		}
		if len(gens) > 1 {
			warn = append(warn, fmt.Sprintf("group %s: its records state different vLLM engine generations (VLLM_USE_V1); each record is simulated with its own, and the group's settings take the last record's", k))
		}
	}
	return groups, order, warn
}

// physicalCheck warns about a record whose throughput exceeds what its GPUs
// could do at 100% of the roofline: every prompt or generated token costs at
// least 2 FLOPs per body parameter.
func physicalCheck(r *results.Record) string {
	g, err1 := model.LookupGPU(r.System.GPU)
	m, err2 := model.LookupLLM(recordModel(r))
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
	peak := float64(gpus) * g.GEMMTFLOPS(m.Quant) * 1e12 / (2 * m.ActiveBodyParams())
	if tokPerS > peak {
		return fmt.Sprintf("record %s: %.0f tokens/s exceeds the %.0f tokens/s %d×%s could compute at 100%% of peak for %s: non-physical, check the record",
			r.ID, tokPerS, peak, gpus, g.Name, model.ShortName(m.Name))
	}
	return ""
}

// recordSettings are the settings r states over engine's defaults, read as
// settingsFrom reads them (engine: the record's own, or the one a
// prediction simulates it with instead). Of them, applyRecord takes what
// a group's records may not share.
func recordSettings(engine string, r *results.Record, topo model.Topology) engine.Settings {
	return settingsFrom(engine, []*point{{rec: r, topo: topo}})
}

// applyRecord sets s to what one benchmark record ran with where its
// group's records may differ: how it sized its KV cache (its own
// --gpu-memory-utilization and the KV cache per GPU it states, GiB; zero
// fields are the engine's defaults), its batch limits and how its engine
// scheduled (the engine's defaults unless it states its own: the budget
// and whether prompts run first are decided together, chunked prefill
// on or off). A stated KV cache holds for the worker shape the record ran
// (the weights per GPU depend on TP), so it sizes that record's
// simulation and never a group's (Target.Record).
func applyRecord(s *engine.Settings, rs engine.Settings) {
	s.GPUMemoryUtilization, s.KVCacheGiB = rs.GPUMemoryUtilization, rs.KVCacheGiB
	if rs.KVCacheDtype != "" {
		s.KVCacheDtype = rs.KVCacheDtype
	}
	if rs.MaxNumBatchedTokens > 0 {
		s.MaxNumBatchedTokens = rs.MaxNumBatchedTokens
	}
	if rs.MaxNumSeqs > 0 {
		s.MaxNumSeqs = rs.MaxNumSeqs
	}
	s.PrefillFirst, s.ReserveOutput, s.DelayedOutput = rs.PrefillFirst, rs.ReserveOutput, rs.DelayedOutput
	s.Generation = rs.Generation // its engine's CPU row, as its defaults
	s.DPAttention = rs.DPAttention
	s.ExpertParallel = rs.ExpertParallel
}

// expertParallelOf is the expert-parallel degree a record ran with
// (engine.Settings.ExpertParallel; results.ExpertParallelSettings reads
// it): a stated degree above 1, or vLLM's --enable-expert-parallel over
// every GPU of each worker; 0 otherwise.
func expertParallelOf(topo model.Topology, settings map[string]string) int {
	on, ep := results.ExpertParallelSettings(settings)
	switch {
	case ep > 1:
		return ep
	case on:
		return topo.WidestTP()
	}
	return 0
}

// agreed is of's value on every point of pts, or 0 where two disagree.
func agreed(pts []*point, of func(*point) int) int {
	v := of(pts[0])
	for _, p := range pts[1:] {
		if of(p) != v {
			return 0
		}
	}
	return v
}

// dpAttentionOf is the data-parallel attention degree a record ran with,
// simulated as engine: SGLang's --enable-dp-attention with --dp N (N > 1;
// results.DPAttentionSettings reads them),
// or one group per TP rank in the releases that set it so themselves
// whatever --dp said (engine.ID.SGLangAutoDP, read from the record's own engine
// label, recEngine, where it has one); 0 otherwise: later releases without
// --dp run plain TP attention or refuse to start, and another engine
// family has no such setting. A prefill worker's own setting is not read:
// the degree prices the KV cache the decoding workers hold.
//
// The chunked-prefill budget is left as stated or defaulted: SGLang
// divides it among the groups, but the simulator schedules the worker as
// one, and the groups together take the whole budget a step (the
// 0.4.0–0.4.3 releases' halving per group, dp/2 times the budget a step
// over the worker, is not modelled).
func dpAttentionOf(label, recEngine string, topo model.Topology, settings map[string]string) int {
	if engine.Family(label) != "sglang" {
		return 0
	}
	on, dp := results.DPAttentionSettings(settings, false)
	if recEngine == "" {
		recEngine = label
	}
	switch {
	case !on:
		return 0
	case engine.Parse(recEngine).SGLangAutoDP():
		return max(topo.Replicas.TP, topo.Decode.TP)
	case dp > 1:
		return dp
	}
	return 0
}

// settingsFrom reads a group's engine settings from its records, over the engine's defaults.
func settingsFrom(label string, pts []*point) engine.Settings {
	gpu, _ := model.LookupGPU(pts[0].rec.System.GPU) // the zero GPU when the source does not say
	llm, _ := model.LookupLLM(pts[0].rec.System.Model)
	// A vLLM release run with the other engine generation (VLLM_USE_V1)
	// takes that generation's defaults and CPU overheads.
	gen, e := vllmGeneration(label, pts)
	s := defaultSettings(e, gpu, llm.MaxContext)
	s.Generation = gen
	budgetStated, disableAsync := false, false
	chunkStated, chunkOn := false, false
	atoi := func(v string) int {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0
		}
		return n
	}
	for _, p := range pts {
		// A group's workers all run alike; should its records disagree,
		// the widest placement prices them (preparePoints warns).
		s.Nodes = max(s.Nodes, recordNodes(p.rec))
		// In key order: a record that spells one setting two ways is read
		// the same way every time.
		for _, k := range slices.Sorted(maps.Keys(p.rec.System.Settings)) {
			v := p.rec.System.Settings[k]
			k = engine.SettingKey(k)
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
			_, k = engine.SplitRole(k)
			switch k {
			case "block-size":
				if n := atoi(v); n > 0 {
					s.BlockSize = n
				}
			case "max-num-batched-tokens", "chunked-prefill-size", "max-num-tokens": // vLLM, SGLang, TensorRT-LLM
				if n := atoi(v); n > 0 {
					s.MaxNumBatchedTokens, budgetStated = n, true
				}
			case "max-num-seqs", "max-running-requests", "max-batch-size":
				if n := atoi(v); n > 0 {
					s.MaxNumSeqs = n
				}
			case "enable-mixed-chunk": // SGLang: prompts join the decodes' steps
				s.PrefillFirst = !isTrue(v)
			case "capacity-scheduler-policy", "capacity-scheduling-policy": // TensorRT-LLM
				s.ReserveOutput = strings.EqualFold(strings.TrimSpace(v), "GUARANTEED_NO_EVICT")
			case "max-model-len":
				if n := atoi(v); n > 0 {
					s.MaxModelLen = n
				}
			case "async-scheduling":
				if on, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
					s.AsyncScheduling = &on
				}
			case "no-async-scheduling":
				if off, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
					on := !off
					s.AsyncScheduling = &on
				}
			case "gpu-memory-utilization", "mem-fraction-static":
				if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f <= 1 {
					s.GPUMemoryUtilization = f
				}
			case "kv-cache-dtype":
				if d := strings.ToLower(strings.TrimSpace(v)); engine.KVCacheBytes(d) > 0 {
					s.KVCacheDtype = d
				}
			case "kv-cache-memory-gib":
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f > 0 {
					s.KVCacheGiB = f
				}
			case "kv-cache-memory-bytes":
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f > 0 {
					s.KVCacheGiB = f / (1 << 30)
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
			case "cuda-graph-max", "cudagraph-max", "cudagraph-capture-max": // not max-seq-len-to-capture: a context length, not a batch
				if n := atoi(v); n > 0 {
					s.GraphMax = n
				}
			case "router":
				s.Router = v
			case "enable-prefix-caching", "enable-block-reuse": // vLLM, TensorRT-LLM
				s.PrefixCaching = engine.PrefixSetting(isTrue(v))
			case "no-enable-prefix-caching", "disable-radix-cache": // vLLM, SGLang
				s.PrefixCaching = engine.PrefixSetting(!isTrue(v))
			case "enable-chunked-prefill":
				chunkStated, chunkOn = true, isTrue(v)
			case "disable-async-output-proc":
				disableAsync = disableAsync || isTrue(v)
			}
		}
	}
	// A group's records that disagree on data-parallel attention or
	// expert parallelism are priced one by one (applyRecord); the group
	// states none.
	s.DPAttention = agreed(pts, func(p *point) int { return dpAttentionOf(label, p.rec.System.Engine, p.topo, p.rec.System.Settings) })
	s.ExpertParallel = agreed(pts, func(p *point) int { return expertParallelOf(p.topo, p.rec.System.Settings) })

	if disableAsync {
		s.DelayedOutput = false // the stated flag wins over the generation's default
	}
	switch {
	case e.Family == "vllm" && len(e.Version) > 0 && !e.AtLeast(0, 8):
		// V0 schedules by whether chunked prefill is on (engine.V0Scheduling).
		stated := 0
		if budgetStated {
			stated = s.MaxNumBatchedTokens
		}
		chunked, budget := engine.V0Scheduling(cmp.Or(s.MaxModelLen, llm.MaxContext), stated, chunkStated, chunkOn)
		s.MaxNumBatchedTokens, s.PrefillFirst = budget, !chunked
	case e.Family == "vllm" && len(e.Version) > 0:
		// V1 always chunks and mixes prompts into the decodes' steps
		// (its arg_utils forces enable_chunked_prefill on).
		s.PrefillFirst = false
	case s.MaxModelLen > 0:
		// Some engines' default budget follows the max-model-len the records state.
		if d := defaultSettings(e, gpu, s.MaxModelLen); !budgetStated {
			s.MaxNumBatchedTokens = d.MaxNumBatchedTokens
		}
	}
	return s
}

// vllmGeneration is the vLLM engine generation a group's records state
// (VLLM_USE_V1, vllm-engine) where it is not their release's own
// (engine.Settings.Generation) and the release whose defaults they run
// with (engine.ID.AsGeneration); the zero value and the label's own
// otherwise.
func vllmGeneration(label string, pts []*point) (engine.Generation, engine.ID) {
	e := engine.Parse(label)
	if e.Family != engine.VLLM {
		return "", e
	}
	// The engine's own name for it wins over the environment variable.
	var fromEngine, fromEnv engine.Generation
	for _, p := range pts {
		for _, k := range slices.Sorted(maps.Keys(p.rec.System.Settings)) { // the same answer every time
			v := strings.ToLower(strings.TrimSpace(p.rec.System.Settings[k]))
			switch engine.SettingKey(k) {
			case "vllm-use-v1":
				switch {
				case isTrue(v):
					fromEnv = engine.GenV1
				case v == "0" || v == "false":
					fromEnv = engine.GenV0
				}
			case "vllm-engine":
				if g, err := engine.ParseGeneration(v); err == nil {
					fromEngine = g
				}
			}
		}
	}
	gen := cmp.Or(fromEngine, fromEnv)
	if id, ok := e.AsGeneration(gen); ok {
		return gen, id
	}
	return "", e
}

// nodesOf reads a stated placement, "2 nodes", "1 node", "2" or "2 nodes,
// InfiniBand" (what follows the count is not read: one node network is
// priced), as the number of servers a worker spans; 0 when it names no count.
func nodesOf(v string) int {
	f := strings.Fields(strings.ToLower(strings.NewReplacer(",", " ", ";", " ", "(", " ", ")", " ").Replace(v)))
	if len(f) == 0 || (len(f) >= 2 && f[1] != "node" && f[1] != "nodes") {
		return 0
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// recordNodes is the number of servers a record states each worker spans
// (its "placement" setting); 0 when it does not say.
func recordNodes(r *results.Record) int {
	_, n := recordPlacement(r)
	return n
}

// recordPlacement is a record's "placement" setting (any role prefix; the
// first in key order when several) and the widest node count among them.
func recordPlacement(r *results.Record) (string, int) {
	keys := make([]string, 0, len(r.System.Settings))
	for k := range r.System.Settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	value, n := "", 0
	for _, raw := range keys {
		if _, k := engine.SplitRole(engine.SettingKey(raw)); k == "placement" {
			if value == "" {
				value = strings.TrimSpace(r.System.Settings[raw])
			}
			n = max(n, nodesOf(r.System.Settings[raw]))
		}
	}
	return value, n
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

// recordModel is the checkpoint a record ran: its model, with the
// quantization its settings state ("quantization": "fp8", "nvfp4", "awq")
// as the checkpoint-name suffix model.LookupLLM understands.
func recordModel(r *results.Record) string {
	name := r.System.Model
	q := ""
	for k, v := range r.System.Settings {
		if strings.EqualFold(strings.TrimSpace(k), "quantization") {
			q = strings.ToLower(v)
		}
	}
	suffix := ""
	switch {
	case strings.Contains(q, "nvfp4") || strings.Contains(q, "fp4"):
		suffix = "-FP4"
	case strings.Contains(q, "fp8"):
		suffix = "-FP8"
	case strings.Contains(q, "awq"):
		suffix = "-AWQ"
	case strings.Contains(q, "gptq") || strings.Contains(q, "w4a16"):
		suffix = "-GPTQ"
	}
	if suffix == "" || strings.HasSuffix(strings.ToLower(name), strings.ToLower(suffix)) {
		return name
	}
	if m, err := model.LookupLLM(name); err == nil && m.Quant != model.QuantNone {
		return name // the checkpoint name already says it
	}
	return name + suffix
}
