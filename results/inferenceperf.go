package results

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/capsim/capsim/model"
)

// FormatInferencePerf is the Source.Format of records read from
// inference-perf's per-stage reports.
const FormatInferencePerf = "inference-perf"

// stageFileRE names inference-perf's per-stage request lifecycle reports
// (after the config's report_file_prefix, if any).
var stageFileRE = regexp.MustCompile(`stage_(\d+)_lifecycle_metrics[^/]*\.json$`)

// isInferencePerfReport reports inference-perf's lifecycle report shape:
// load_summary beside successes.
func isInferencePerfReport(root *node) bool {
	return root.get("load_summary") != nil && root.get("successes") != nil
}

// inferencePerfRecords reads one stage report of inference-perf
// (kubernetes-sigs/inference-perf, llm-d's harness),
// stage_N_lifecycle_metrics.json, as one record: load_summary gives the
// load (requested_rate, concurrency) and the requests sent; successes the
// latencies (seconds, statistics as vLLM names them), the throughputs and
// the mean prompt and output lengths (ISL, OSL); failures.count the errors.
// The summary across stages (summary_lifecycle_metrics.json) mixes loads
// and is refused. The config the run was started with, config.yaml or
// config.yml beside the report or one directory up, adds the model, the
// arrival process and the shared-prefix workload (ApplyInferencePerfConfig).
func inferencePerfRecords(name string, root *node) ([]Record, error) {
	p := &peer{name: name, format: FormatInferencePerf, label: "inference-perf report"}
	base := filepath.Base(filepath.ToSlash(name))
	m := stageFileRE.FindStringSubmatch(base)
	if m == nil {
		if strings.Contains(base, "summary") {
			return nil, p.fail(root, 1, "", "inference-perf summary across load stages: read its per-stage reports (stage_N_lifecycle_metrics.json), one load point each")
		}
		return nil, p.fail(root, 1, "", "inference-perf lifecycle report not named stage_N_lifecycle_metrics.json: its stage (load point) is unknown")
	}
	r := Record{
		ID:      recordID(DocID(name), 1, 0, ""),
		Source:  Source{File: name, Line: 1, Format: p.format, Section: "stage " + m[1]},
		Metrics: map[string]float64{},
	}
	ls := root.get("load_summary")
	if err := p.object(ls, "load_summary"); err != nil {
		return nil, err
	}
	sent, hasSent, err := p.count(ls.get("count"), "load_summary.count")
	if err != nil {
		return nil, err
	}
	rate, hasRate, err := p.number(ls.get("requested_rate"), "load_summary.requested_rate")
	if err != nil {
		return nil, err
	}
	conc, hasConc, err := p.count(ls.get("concurrency"), "load_summary.concurrency")
	if err != nil {
		return nil, err
	}
	switch {
	case hasRate && rate > 0:
		r.Workload.Load = model.Open(rate, 0) // the arrival process is the config's (0: unstated, Poisson)
		if hasConc && conc > 0 {
			r.Workload.Load.Concurrency = conc
		}
	case hasConc && conc > 0:
		r.Workload.Load = model.Closed(conc)
	}
	succ := root.get("successes")
	if err := p.object(succ, "successes"); err != nil {
		return nil, err
	}
	done, hasDone, err := p.count(succ.get("count"), "successes.count")
	if err != nil {
		return nil, err
	}
	failed, _, err := p.count(root.at("failures", "count"), "failures.count")
	if err != nil {
		return nil, err
	}
	if hasSent {
		if hasDone && done+failed > sent {
			return nil, p.fail(succ.get("count"), 0, "successes.count", "%d successes and %d failures exceed the %d requests sent (load_summary.count)", done, failed, sent)
		}
		r.Workload.NumPrompts = sent
	}
	r.Completed, r.Errors = done, failed
	lat := succ.get("latency")
	if err := p.object(lat, "successes.latency"); err != nil {
		return nil, err
	}
	for _, t := range []struct{ key, fam string }{
		{"time_to_first_token", "ttft"}, {"time_per_output_token", "tpot"},
		{"inter_token_latency", "itl"}, {"request_latency", "e2el"},
	} {
		if err := p.latencyStats(r.Metrics, lat.get(t.key), "successes.latency."+t.key, t.fam, 1000); err != nil {
			return nil, err
		}
	}
	thr := succ.get("throughput")
	if err := p.object(thr, "successes.throughput"); err != nil {
		return nil, err
	}
	for _, t := range []struct{ key, metric string }{
		{"requests_per_sec", model.RequestThroughput}, {"output_tokens_per_sec", model.OutputThroughput},
		{"total_tokens_per_sec", model.TotalTokenThroughput}, {"input_tokens_per_sec", "prompt_throughput"},
	} {
		if v, ok, err := p.number(thr.get(t.key), "successes.throughput."+t.key); err != nil {
			return nil, err
		} else if ok {
			r.Metrics[t.metric] = v
		}
	}
	for _, t := range []struct {
		keys []string
		set  *float64
	}{{[]string{"prompt_len", "prompt_tokens"}, &r.Workload.ISL}, {[]string{"output_len", "output_tokens"}, &r.Workload.OSL}} {
		for _, k := range t.keys {
			if v, ok, err := p.number(succ.at(k, "mean"), "successes."+k+".mean"); err != nil {
				return nil, err
			} else if ok {
				*t.set = v
				break
			}
		}
	}
	if len(r.Metrics) == 0 {
		return nil, p.fail(succ, 0, "successes", "inference-perf report states no latency or throughput")
	}
	return []Record{r}, nil
}

// AnomalyMultiTurn marks an inference-perf record whose config runs its
// shared-prefix prompts as multi-turn chats (enable_multi_turn_chat):
// their conversations grow without a turn limit, across stages, which
// model.Sharing.Turns does not express, so the sharing is left out.
const AnomalyMultiTurn = "multi-turn-unbounded"

// stageOf is the load stage of an inference-perf record (its Source.Section "stage N").
func stageOf(r *Record) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(r.Source.Section, "stage "))
	return n, err == nil && strings.HasPrefix(r.Source.Section, "stage ")
}

// inferencePerfConfig finds the config of the run whose report is at
// path: config.yaml or config.yml beside it or one directory up ("" when
// none is there).
func inferencePerfConfig(path string) (string, error) {
	dir := filepath.Dir(path)
	for _, d := range []string{dir, filepath.Dir(dir)} {
		for _, n := range []string{"config.yaml", "config.yml"} {
			c := filepath.Join(d, n)
			if _, err := os.Stat(c); err == nil {
				return c, nil
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("results: %w", err)
			}
		}
	}
	return "", nil
}

// ApplyInferencePerfConfig reads inference-perf's config YAML (name,
// data) into the records of its stage reports:
//
//   - server.model_name → the model; server.type (vllm, sglang, …) → the
//     engine, without a version.
//   - load.type poisson (or constant: evenly spaced arrivals) and
//     load.stages[N].rate → stage N's load.
//   - data.type shared_prefix with data.shared_prefix num_groups,
//     num_prompts_per_group, system_prompt_len → the prompts' sharing
//     (model.Sharing); question_len and output_len → the requested lengths.
//
// A record's own figures (its measured means, its requested rate) are
// kept where both say; a stage the config does not list is an error.
func ApplyInferencePerfConfig(name string, data []byte, recs []Record) error {
	root, err := yamlTree(name, data)
	if err != nil {
		return err
	}
	p := &peer{name: name, format: FormatInferencePerf, label: "inference-perf config"}
	if root.kind != kindObject || root.get("load") == nil {
		return p.fail(root, 1, "load", "inference-perf config without a load: section")
	}
	load := root.get("load")
	if err := p.object(load, "load"); err != nil {
		return err
	}
	shape := 0.0
	switch t := strings.ToLower(load.get("type").text()); t {
	case "", "constant":
		shape = constantArrivalShape
		if t == "" {
			shape = 0
		}
	case "poisson":
		shape = 1
	default:
		shape = -1 // concurrency or trace loads: the report's own load stands
	}
	stages := load.get("stages")
	if !stages.absent() && stages.kind != kindArray {
		return p.fail(stages, 0, "load.stages", "want a list of stages, got %s", stages.kind)
	}
	var sharing model.Sharing
	var isl, osl int
	if strings.EqualFold(root.at("data", "type").text(), "shared_prefix") {
		sp := root.at("data", "shared_prefix")
		if err := p.object(sp, "data.shared_prefix"); err != nil {
			return err
		}
		var q int
		for _, f := range []struct {
			key string
			v   *int
		}{{"num_groups", &sharing.Groups}, {"num_prompts_per_group", &sharing.PromptsPerGroup}, {"system_prompt_len", &sharing.SharedLen}, {"question_len", &q}, {"output_len", &osl}} {
			n, _, err := p.count(sp.get(f.key), "data.shared_prefix."+f.key)
			if err != nil {
				return err
			}
			*f.v = n
		}
		if sharing.Groups == 0 || sharing.PromptsPerGroup == 0 {
			return p.fail(sp, 0, "data.shared_prefix", "want positive num_groups and num_prompts_per_group")
		}
		if err := sharing.Validate(); err != nil {
			return p.fail(sp, 0, "data.shared_prefix", "%v", err)
		}
		if q > 0 {
			isl = sharing.SharedLen + q
		}
	}
	mt := root.at("data", "shared_prefix", "enable_multi_turn_chat")
	multiTurn := sharing.On() && mt != nil && ((mt.kind == kindBool && mt.b) || strings.EqualFold(mt.text(), "true"))
	mdl := root.at("server", "model_name").text()
	engine := strings.ToLower(root.at("server", "type").text())
	for i := range recs {
		r := &recs[i]
		if r.Source.Format != FormatInferencePerf {
			continue
		}
		if mdl != "" && r.System.Model == "" {
			r.System.Model = mdl
		}
		if engine != "" && r.System.Engine == "" {
			r.System.Engine = engine
		}
		if multiTurn {
			r.note(AnomalyMultiTurn, "the config's shared_prefix prompts run as multi-turn chats without a turn limit: the prompts' sharing is not simulated")
		} else if sharing.On() {
			r.Workload.Sharing = sharing
			if r.Workload.ISLMax == 0 {
				r.Workload.ISLMax = isl
			}
			if r.Workload.OSLMax == 0 {
				r.Workload.OSLMax = osl
			}
		}
		if shape < 0 {
			continue
		}
		stage, ok := stageOf(r)
		rate := r.Workload.Load.Rate
		if r.Workload.Load.Kind != model.OpenLoop {
			if !ok || stages.absent() || stage >= len(stages.items) {
				return p.fail(stages, 0, "load.stages", "%s is stage %d; the config lists %d stages", r.Source.File, stage, len(stages.items))
			}
			v, ok, err := p.number(stages.items[stage].get("rate"), fmt.Sprintf("load.stages[%d].rate", stage))
			if err != nil {
				return err
			}
			if !ok || !(v > 0) || math.IsInf(v, 0) {
				return p.fail(stages.items[stage], 0, fmt.Sprintf("load.stages[%d].rate", stage), "want a positive rate")
			}
			rate = v
		}
		c := r.Workload.Load.Concurrency
		r.Workload.Load = model.Open(rate, shape)
		r.Workload.Load.Concurrency = c
	}
	return nil
}
