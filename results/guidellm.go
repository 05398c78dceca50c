package results

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/capsim/capsim/model"
)

// FormatGuideLLM is the Source.Format of records read from a GuideLLM report.
const FormatGuideLLM = "guidellm"

// constantArrivalShape is the gamma shape that stands for evenly spaced
// arrivals (GuideLLM's "constant" strategy, perf_analyzer's default request
// distribution): the coefficient of variation of the gaps is 1/√1000 ≈ 3%.
const constantArrivalShape = 1000

// ParseGuideLLM reads a GuideLLM report, benchmarks.json or its YAML form
// (GenerativeBenchmarksReport); each benchmark is one record:
//   - load from config.strategy (args.strategy before 0.4): synchronous,
//     concurrent (streams), throughput (all at once, capped by
//     max_concurrency), constant (even arrivals) or poisson at a rate;
//   - metrics from the "successful" summaries' means: requests_per_second,
//     output_ and tokens_per_second, request_latency (s) → e2el,
//     time_to_first_token_ms → ttft, inter_token_latency_ms → itl (weighted
//     by output tokens − 1, so its mean is vLLM's mean ITL; its percentiles
//     are of per-request averages). Its time_per_output_token_ms counts the
//     first token, unlike vLLM's TPOT, so TPOT stays absent;
//   - request_totals → completed, errors, num_prompts; token count means →
//     ISL/OSL. Percentiles are GuideLLM's, not numpy's interpolation.
func ParseGuideLLM(name string, data []byte) ([]Record, error) {
	root, err := readTree(name, data)
	if err != nil {
		return nil, err
	}
	return guideLLMRecords(name, root)
}

// readTree reads a JSON document, or else a YAML one.
func readTree(name string, data []byte) (*node, error) {
	if isJSONDocument(data) {
		return jsonTree(name, data)
	}
	return yamlTree(name, data)
}

func guideLLMRecords(name string, root *node) ([]Record, error) {
	p := &peer{name: name, format: FormatGuideLLM, label: "GuideLLM report"}
	benches := root.get("benchmarks")
	if benches.absent() {
		return nil, p.fail(root, 1, "benchmarks", "GuideLLM report without benchmarks")
	}
	if benches.kind != kindArray {
		return nil, p.fail(benches, 0, "benchmarks", "want an array, got %s", benches.kind)
	}
	if len(benches.items) == 0 {
		return nil, p.fail(benches, 0, "benchmarks", "GuideLLM report has no benchmarks (the run finished none)")
	}
	modelID := guideLLMModel(root)
	islMax, oslMax := guideLLMLengths(root)
	doc := DocID(name)
	var recs []Record
	perLine := map[int]int{}
	for _, b := range benches.items {
		perLine[b.line]++
	}
	seen := map[int]int{}
	for i, b := range benches.items {
		field := fmt.Sprintf("benchmarks[%d]", i)
		if b.kind != kindObject {
			return nil, p.fail(b, 0, field, "want an object, got %s", b.kind)
		}
		if t := b.get("type_").text(); t != "" && t != "generative_benchmark" {
			return nil, p.fail(b.get("type_"), 0, field+".type_", "GuideLLM %s: capsim reads generative (text) benchmarks only", t)
		}
		r, err := p.guideLLMBenchmark(b, field)
		if err != nil {
			return nil, err
		}
		n := 0
		if perLine[b.line] > 1 {
			seen[b.line]++
			n = seen[b.line]
		}
		r.ID = recordID(doc, r.Source.Line, n, "")
		r.System.Model = modelID
		r.Workload.ISLMax, r.Workload.OSLMax = islMax, oslMax
		recs = append(recs, r)
	}
	return recs, nil
}

// guideLLMModel is the model the report names: args.model, else the
// backend's model in the first benchmark's config.
func guideLLMModel(root *node) string {
	if m := root.at("args", "model").text(); m != "" {
		return m
	}
	if b := root.get("benchmarks"); b != nil && len(b.items) > 0 {
		for _, path := range [][]string{{"config", "backend", "model"}, {"config", "requests", "model"}, {"args", "model"}} {
			if m := b.items[0].at(path...).text(); m != "" {
				return m
			}
		}
	}
	return ""
}

var guideLLMTokensRE = regexp.MustCompile(`\b(prompt_tokens|output_tokens)\s*[=:]\s*(\d+)\b`)

// guideLLMLengths reads the requested lengths of GuideLLM's synthetic data
// ("prompt_tokens=512,output_tokens=128" in args.data, or in the first
// benchmark's config.requests.data); 0 when the report does not say.
func guideLLMLengths(root *node) (isl, osl int) {
	var texts []string
	collect := func(n *node) {
		switch {
		case n == nil:
		case n.kind == kindString:
			texts = append(texts, n.str)
		case n.kind == kindArray:
			for _, it := range n.items {
				texts = append(texts, it.text())
			}
		}
	}
	collect(root.at("args", "data"))
	if b := root.get("benchmarks"); b != nil && len(b.items) > 0 {
		collect(b.items[0].at("config", "requests", "data"))
	}
	for _, t := range texts {
		for _, m := range guideLLMTokensRE.FindAllStringSubmatch(t, -1) {
			n, err := strconv.Atoi(m[2])
			if err != nil || n <= 0 || n > 1e9 {
				continue
			}
			if m[1] == "prompt_tokens" && isl == 0 {
				isl = n
			} else if m[1] == "output_tokens" && osl == 0 {
				osl = n
			}
		}
	}
	return isl, osl
}

func (p *peer) guideLLMBenchmark(b *node, field string) (Record, error) {
	r := Record{Source: Source{File: p.name, Line: b.line, Format: p.format}, Metrics: map[string]float64{}}
	strat := b.at("config", "strategy")
	sfield := field + ".config.strategy"
	if strat.absent() {
		strat, sfield = b.at("args", "strategy"), field+".args.strategy"
	}
	if strat.absent() {
		return r, p.fail(b, 0, field+".config.strategy", "GuideLLM benchmark without a scheduling strategy: the load is unknown")
	}
	if err := p.object(strat, sfield); err != nil {
		return r, err
	}
	kind := strat.get("type_").text()
	num := func(key string) (float64, bool, error) { return p.number(strat.get(key), sfield+"."+key) }
	switch kind {
	case "synchronous":
		r.Workload.Load = model.Closed(1)
		r.Source.Row = "synchronous"
	case "concurrent":
		n, ok, err := p.count(strat.get("streams"), sfield+".streams")
		if err != nil {
			return r, err
		}
		if !ok || n == 0 {
			return r, p.fail(strat, 0, sfield+".streams", "want a positive number of streams")
		}
		r.Workload.Load = model.Closed(n)
		r.Source.Row = fmt.Sprintf("concurrent@%d", n)
	case "throughput":
		n, ok, err := p.count(strat.get("max_concurrency"), sfield+".max_concurrency")
		if err != nil {
			return r, err
		}
		if ok && n > 0 {
			r.Workload.Load = model.Closed(n)
		} else {
			r.Workload.Load = model.Open(math.Inf(1), 1)
		}
		r.Source.Row = "throughput"
	case "constant", "poisson":
		rate, ok, err := num("rate")
		if err != nil {
			return r, err
		}
		if !ok || !(rate > 0) {
			return r, p.fail(strat, 0, sfield+".rate", "want a positive request rate")
		}
		shape := 1.0
		if kind == "constant" {
			shape = constantArrivalShape
		}
		r.Workload.Load = model.Open(rate, shape)
		if n, ok, err := p.count(strat.get("max_concurrency"), sfield+".max_concurrency"); err != nil {
			return r, err
		} else if ok {
			r.Workload.Load.Concurrency = n
		}
		r.Source.Row = fmt.Sprintf("%s@%s", kind, r.Workload.Load.RateString())
	default:
		return r, p.fail(strat.get("type_"), strat.line, sfield+".type_", "unknown GuideLLM strategy %q (want synchronous, concurrent, throughput, constant or poisson)", kind)
	}

	metrics := b.get("metrics")
	if metrics.absent() {
		return r, p.fail(b, 0, field+".metrics", "GuideLLM benchmark without metrics")
	}
	if err := p.object(metrics, field+".metrics"); err != nil {
		return r, err
	}
	mfield := field + ".metrics"
	successful := func(key string) (*node, string, error) {
		d := metrics.get(key)
		f := mfield + "." + key
		if d.absent() {
			return nil, f, nil
		}
		if err := p.object(d, f); err != nil {
			return nil, f, err
		}
		s := d.get("successful")
		if err := p.object(s, f+".successful"); err != nil {
			return nil, f, err
		}
		// An empty distribution is written as zeros with count 0: absent.
		if c, ok, err := p.number(s.get("count"), f+".successful.count"); err != nil {
			return nil, f, err
		} else if ok && c == 0 {
			return nil, f, nil
		}
		return s, f + ".successful", nil
	}
	for _, t := range []struct{ key, metric string }{
		{"requests_per_second", model.RequestThroughput},
		{"output_tokens_per_second", model.OutputThroughput},
		{"tokens_per_second", model.TotalTokenThroughput},
	} {
		s, f, err := successful(t.key)
		if err != nil {
			return r, err
		}
		v, ok, err := p.number(s.get("mean"), f+".mean")
		if err != nil {
			return r, err
		}
		if ok {
			r.Metrics[t.metric] = v
		}
	}
	for _, t := range []struct {
		key, fam string
		scale    float64
	}{
		{"request_latency", "e2el", 1000},
		{"time_to_first_token_ms", "ttft", 1},
		{"inter_token_latency_ms", "itl", 1},
	} {
		s, f, err := successful(t.key)
		if err != nil {
			return r, err
		}
		if err := p.latencyStats(r.Metrics, guideLLMStats(s), f, t.fam, t.scale); err != nil {
			return r, err
		}
	}
	for _, t := range []struct {
		key, total string
		set        func(float64)
	}{
		{"prompt_token_count", model.TotalInputTokens, func(v float64) { r.Workload.ISL = v }},
		{"output_token_count", model.TotalOutputTokens, func(v float64) { r.Workload.OSL = v }},
	} {
		s, f, err := successful(t.key)
		if err != nil {
			return r, err
		}
		if v, ok, err := p.number(s.get("mean"), f+".mean"); err != nil {
			return r, err
		} else if ok {
			t.set(v)
		}
		if v, ok, err := p.number(s.get("total_sum"), f+".total_sum"); err != nil {
			return r, err
		} else if ok {
			r.Metrics[t.total] = v
		}
	}
	if d, ok, err := p.number(b.get("duration"), field+".duration"); err != nil {
		return r, err
	} else if ok {
		r.Metrics[model.Duration] = d
	}

	totals := metrics.get("request_totals")
	tfield := mfield + ".request_totals"
	if totals.absent() {
		totals, tfield = b.get("request_totals"), field+".request_totals" // reports before 0.4
	}
	if err := p.object(totals, tfield); err != nil {
		return r, err
	}
	if n, ok, err := p.count(totals.get("successful"), tfield+".successful"); err != nil {
		return r, err
	} else if ok {
		r.Completed = n
	}
	if n, ok, err := p.count(totals.get("errored"), tfield+".errored"); err != nil {
		return r, err
	} else if ok {
		r.Errors = n
	}
	if n, ok, err := p.count(totals.get("total"), tfield+".total"); err != nil {
		return r, err
	} else if ok {
		r.Workload.NumPrompts = n
	}
	if len(r.Metrics) == 0 {
		return r, p.fail(metrics, 0, mfield, "GuideLLM benchmark states no successful-request metrics (did every request fail?)")
	}
	return r, nil
}

// guideLLMStats flattens a DistributionSummary (mean, median, std_dev,
// percentiles{p001…p999}) into one object of statistics.
func guideLLMStats(s *node) *node {
	if s.absent() || s.kind != kindObject {
		return s
	}
	flat := &node{kind: kindObject, line: s.line}
	for i, k := range s.keys {
		if k == "percentiles" && s.vals[i].kind == kindObject {
			pc := s.vals[i]
			for j, pk := range pc.keys {
				if pk == "p50" {
					continue // the same as median
				}
				flat.keys = append(flat.keys, pk)
				flat.vals = append(flat.vals, pc.vals[j])
			}
			continue
		}
		switch k {
		case "mean", "median", "std_dev":
			flat.keys = append(flat.keys, k)
			flat.vals = append(flat.vals, s.vals[i])
		}
	}
	return flat
}
