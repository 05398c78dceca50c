package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
)

// FormatLLMD is the Source.Format of records read from an llm-d-benchmark report.
const FormatLLMD = "llm-d-report"

// ParseLLMDReport reads an llm-d-benchmark report v0.2 (YAML or JSON); one
// report is one record:
//   - results.request_performance.aggregate: request counts, length means
//     (ISL/OSL), latencies ttft, tpot, itl, e2el converted from their
//     "units", and request, output and total token rates (requests_rate in
//     the draft). The report defines TPOT and ITL as vLLM does.
//   - scenario.load.standardized: rate_qps and concurrency (.inf: none) and
//     the requested lengths.
//   - scenario.stack: inference_engine components (standardized.kind, or
//     metadata.kind in the draft) give model, GPU (accelerator.model),
//     engine (tool, tool_version) and topology: replicas × accelerator.count
//     GPUs at tp × pp per worker are that many ÷ (tp·pp) workers in the
//     role's pool (replica, prefill or decode).
func ParseLLMDReport(name string, data []byte) ([]Record, error) {
	root, err := readTree(name, data)
	if err != nil {
		return nil, err
	}
	return llmdRecords(name, root)
}

func llmdRecords(name string, root *node) ([]Record, error) {
	p := &peer{name: name, format: FormatLLMD, label: "llm-d benchmark report"}
	if root.kind != kindObject {
		return nil, p.fail(root, 1, "", "llm-d benchmark report: want a mapping, got %s", root.kind)
	}
	ver := root.get("version")
	v := ver.text()
	if ver != nil && ver.kind == kindNumber {
		v = ver.str
	}
	if !strings.HasPrefix(v, "0.2") {
		return nil, p.fail(ver, 1, "version", "llm-d benchmark report version %q: capsim reads v0.2 (convert older reports with llm-d-benchmark's benchmark-report tool)", v)
	}
	agg := root.at("results", "request_performance", "aggregate")
	if agg.absent() {
		return nil, p.fail(root.get("results"), 1, "results.request_performance.aggregate", "llm-d benchmark report without aggregate request performance")
	}
	if err := p.object(agg, "results.request_performance.aggregate"); err != nil {
		return nil, err
	}
	r := Record{
		ID:      recordID(DocID(name), 1, 0, ""),
		Source:  Source{File: name, Line: 1, Format: p.format, Section: root.at("run", "uid").text()},
		Metrics: map[string]float64{},
	}
	const af = "results.request_performance.aggregate"
	// Requests.
	req := agg.get("requests")
	if err := p.object(req, af+".requests"); err != nil {
		return nil, err
	}
	total, hasTotal, err := p.count(req.get("total"), af+".requests.total")
	if err != nil {
		return nil, err
	}
	failures, _, err := p.count(req.get("failures"), af+".requests.failures")
	if err != nil {
		return nil, err
	}
	incomplete, _, err := p.count(req.get("incomplete"), af+".requests.incomplete")
	if err != nil {
		return nil, err
	}
	if hasTotal {
		if failures+incomplete > total {
			return nil, p.fail(req, 0, af+".requests", "failures %d and incomplete %d exceed total %d", failures, incomplete, total)
		}
		r.Workload.NumPrompts = total
		r.Completed = total - failures - incomplete
	}
	r.Errors = failures
	for _, t := range []struct {
		key string
		set *float64
	}{{"input_length", &r.Workload.ISL}, {"output_length", &r.Workload.OSL}} {
		if v, ok, err := p.number(req.at(t.key, "mean"), af+".requests."+t.key+".mean"); err != nil {
			return nil, err
		} else if ok {
			*t.set = v
		}
	}
	// Latency.
	lat := agg.get("latency")
	if err := p.object(lat, af+".latency"); err != nil {
		return nil, err
	}
	for _, t := range []struct{ key, fam string }{
		{"time_to_first_token", "ttft"}, {"time_per_output_token", "tpot"},
		{"inter_token_latency", "itl"}, {"request_latency", "e2el"},
	} {
		st := lat.get(t.key)
		f := af + ".latency." + t.key
		if st.absent() {
			continue
		}
		if err := p.object(st, f); err != nil {
			return nil, err
		}
		units := st.get("units").text()
		scale, ok := timeScale(units)
		if !ok {
			return nil, p.fail(st.get("units"), st.line, f+".units", "units %q: want s, ms, s/token or ms/token", units)
		}
		if err := p.latencyStats(r.Metrics, st, f, t.fam, scale); err != nil {
			return nil, err
		}
	}
	// Throughput.
	thr := agg.get("throughput")
	if err := p.object(thr, af+".throughput"); err != nil {
		return nil, err
	}
	for _, t := range []struct{ key, metric string }{
		{"requests_rate", model.RequestThroughput}, {"request_rate", model.RequestThroughput}, // the draft's name, then the schema's
		{"output_token_rate", model.OutputThroughput}, {"total_token_rate", model.TotalTokenThroughput}, {"input_token_rate", "prompt_throughput"},
	} {
		if v, ok, err := p.number(thr.at(t.key, "mean"), af+".throughput."+t.key+".mean"); err != nil {
			return nil, err
		} else if ok {
			r.Metrics[t.metric] = v
		}
	}
	if len(r.Metrics) == 0 {
		return nil, p.fail(agg, 0, af, "llm-d benchmark report states no latency or throughput")
	}
	if err := p.llmdLoad(&r, root.at("scenario", "load")); err != nil {
		return nil, err
	}
	if err := p.llmdStack(&r, root.at("scenario", "stack")); err != nil {
		return nil, err
	}
	return []Record{r}, nil
}

func (p *peer) llmdLoad(r *Record, load *node) error {
	const lf = "scenario.load.standardized"
	std := load.get("standardized")
	if std.absent() {
		return nil
	}
	if err := p.object(std, lf); err != nil {
		return err
	}
	rate, hasRate, err := p.numberOrInf(std.get("rate_qps"), lf+".rate_qps")
	if err != nil {
		return err
	}
	conc, hasConc := 0, false
	if c := std.get("concurrency"); !c.absent() {
		v, ok, err := p.numberOrInf(c, lf+".concurrency")
		if err != nil {
			return err
		}
		switch {
		case !ok || math.IsInf(v, 1): // .inf: no concurrency limit
		case v < 1 || v != math.Trunc(v) || v > 1e9:
			return p.fail(c, 0, lf+".concurrency", "want a positive integer or .inf, got %v", v)
		default:
			conc, hasConc = int(v), true
		}
	}
	for _, t := range []struct {
		key string
		set *int
	}{{"input_seq_len", &r.Workload.ISLMax}, {"output_seq_len", &r.Workload.OSLMax}} {
		if v, ok, err := p.number(std.at(t.key, "value"), lf+"."+t.key+".value"); err != nil {
			return err
		} else if ok && v >= 1 {
			*t.set = int(math.Round(v))
		}
	}
	switch {
	case hasConc && hasRate && math.IsInf(rate, 1):
		r.Workload.Load = model.Closed(conc) // a closed loop writes rate_qps: .inf
	case hasRate && rate > 0:
		r.Workload.Load = model.Open(rate, 0) // the arrival process is the harness's; 0 means unstated (Poisson)
		if hasConc {
			r.Workload.Load.Concurrency = conc
		}
	case hasConc:
		r.Workload.Load = model.Closed(conc)
	}
	return nil
}

func (p *peer) llmdStack(r *Record, stack *node) error {
	if stack.absent() {
		return nil
	}
	if stack.kind != kindArray {
		return p.fail(stack, 0, "scenario.stack", "want a list of components, got %s", stack.kind)
	}
	var pools = map[string]*model.Pool{}
	gpus, engines, models := map[string]bool{}, map[string]bool{}, map[string]bool{}
	gpuCount := 0
	for i, c := range stack.items {
		f := fmt.Sprintf("scenario.stack[%d]", i)
		// The component's kind: under standardized since the report's
		// schema of 2026-01-15, under metadata in the draft before it.
		if kind := cmp.Or(c.at("standardized", "kind").text(), c.at("metadata", "kind").text()); kind != "inference_engine" {
			continue
		}
		s := c.get("standardized")
		if err := p.object(s, f+".standardized"); err != nil {
			return err
		}
		role := strings.ToLower(s.get("role").text())
		switch role {
		case "replica", "aggregate", "prefill", "decode":
		default:
			return p.fail(s.get("role"), s.line, f+".standardized.role", "want replica, prefill or decode, got %q", role)
		}
		if m := s.at("model", "name").text(); m != "" {
			models[m] = true
		}
		acc := s.get("accelerator")
		if acc.absent() {
			continue
		}
		if g := acc.get("model").text(); g != "" {
			gpus[catalogGPU(g)] = true
		}
		count, ok, err := p.count(acc.get("count"), f+".standardized.accelerator.count")
		if err != nil {
			return err
		}
		if !ok || count == 0 {
			return p.fail(acc, 0, f+".standardized.accelerator.count", "want a positive GPU count")
		}
		tp, pp := 1, 1
		if par := acc.get("parallelism"); !par.absent() {
			for _, d := range []struct {
				key string
				v   *int
			}{{"tp", &tp}, {"pp", &pp}} {
				n, ok, err := p.count(par.get(d.key), f+".standardized.accelerator.parallelism."+d.key)
				if err != nil {
					return err
				}
				if ok {
					if n == 0 {
						return p.fail(par, 0, f+".standardized.accelerator.parallelism."+d.key, "want a positive degree, got 0")
					}
					*d.v = n
				}
			}
		}
		if count%(tp*pp) != 0 {
			return p.fail(acc, 0, f+".standardized.accelerator", "count %d is not a multiple of tp %d × pp %d", count, tp, pp)
		}
		// accelerator.count is per replica of the component.
		if reps, ok, err := p.count(s.get("replicas"), f+".standardized.replicas"); err != nil {
			return err
		} else if ok {
			if reps == 0 {
				return p.fail(s, 0, f+".standardized.replicas", "want a positive replica count, got 0")
			}
			count *= reps
		}
		if role == "aggregate" {
			role = "replica"
		}
		pool := model.Pool{Count: count / (tp * pp), TP: tp, PP: pp}
		if have := pools[role]; have != nil {
			if have.TP != tp || have.PP != pp {
				return p.fail(s, 0, f+".standardized", "%s workers of different shapes (TP%d PP%d and TP%d PP%d): capsim models one shape per pool", role, have.TP, have.PP, tp, pp)
			}
			have.Count += pool.Count
		} else {
			pools[role] = &pool
		}
		gpuCount += count
		tool, ver := strings.ToLower(s.get("tool").text()), s.get("tool_version").text()
		if tool != "" {
			engines[engineLabel(tool, ver)] = true
		}
		llmdEngineArgs(r, c.at("native", "args"), role)
	}
	one := func(set map[string]bool) string {
		if len(set) != 1 {
			return ""
		}
		for k := range set {
			return k
		}
		return ""
	}
	r.System.GPU, r.System.Engine, r.System.Model = one(gpus), one(engines), one(models)
	if pl := pools["replica"]; pl != nil {
		if pools["prefill"] != nil || pools["decode"] != nil {
			return p.fail(stack, 0, "scenario.stack", "both replica and prefill/decode engines: capsim models one or the other")
		}
		r.System.Topology = model.Aggregated(*pl)
	} else if pools["prefill"] != nil && pools["decode"] != nil {
		r.System.Topology = model.Topology{Prefill: *pools["prefill"], Decode: *pools["decode"]}
	}
	r.System.GPUCount = gpuCount
	return nil
}

// llmdEngineArgs reads the engine settings capsim models (engine.FlagNames)
// from a component's native.args, the engine's command line as a mapping
// ("--block-size": 16; a switch's value null or true), into r's settings,
// role-prefixed for prefill and decode workers ("decode.max-num-seqs").
func llmdEngineArgs(r *Record, args *node, role string) {
	if args == nil || args.kind != kindObject {
		return
	}
	for i, k := range args.keys {
		name := engine.SettingKey(strings.TrimLeft(k, "-"))
		if off, neg := strings.CutPrefix(name, "no-"); !slices.Contains(engine.FlagNames, name) && !(neg && engine.Negatable(off)) {
			continue
		}
		v := args.vals[i]
		var val string
		switch v.kind {
		case kindString, kindNumber:
			val = v.str
		case kindBool:
			val = strconv.FormatBool(v.b)
		case kindNull:
			val = "true" // a switch given without a value
		default:
			continue
		}
		if role == "prefill" || role == "decode" {
			name = role + "." + name
		}
		if r.System.Settings == nil {
			r.System.Settings = map[string]string{}
		}
		r.System.Settings[name] = val
	}
}

// engineLabel builds "tool-version" from a tool and a version that may be a
// container image ("ghcr.io/llm-d/llm-d-cuda:0.3.1" → "0.3.1").
func engineLabel(tool, version string) string {
	v := strings.TrimSpace(version)
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		v = v[i+1:]
	}
	v = strings.TrimPrefix(strings.ToLower(v), "v")
	if v == "" || v == "latest" {
		return tool
	}
	return tool + "-" + v
}
