package results

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

func TestClassifyHeader(t *testing.T) {
	tests := []struct {
		header string
		kind   colKind
		metric string
		scale  float64
		group  string
	}{
		{"Reqeuest Throughput (req/s)", colMetric, model.RequestThroughput, 1, ""},
		{"Request Throughput (req/s)", colMetric, model.RequestThroughput, 1, ""},
		{"Output Token Throughput (tok/s)", colMetric, model.OutputThroughput, 1, ""},
		{"Total Token Throughput (tok/s)", colMetric, model.TotalTokenThroughput, 1, ""},
		{"Mean E2E Lantency (ms) ", colMetric, model.MeanE2EL, 1, ""},
		{"P99 E2E Lantency (ms)", colMetric, model.P99E2EL, 1, ""},
		{"Mean TTFT (ms)", colMetric, model.MeanTTFT, 1, ""},
		{"P99 TPOT (ms)", colMetric, model.P99TPOT, 1, ""},
		{"Median ITL (ms)", colMetric, model.MedianITL, 1, ""},
		{"P99.9 TTFT (ms)", colMetric, "p99.9_ttft_ms", 1, ""},
		{"Avg Latency (s)", colMetric, model.MeanE2EL, 1000, ""},
		{"Gen TPS", colMetric, model.OutputThroughput, 1, ""},
		{"Prompt TPS", colMetric, "prompt_throughput", 1, ""},
		{"Request Generation Level TPS", colMetric, "per_request_output_throughput", 1, ""},
		{"Request Prompt Level TPS", colMetric, "per_request_prompt_throughput", 1, ""},
		{"Pipeline (Prompt TPS)", colMetric, "prompt_throughput", 1, "Pipeline"},
		{"Tensor (Gen TPS)", colMetric, model.OutputThroughput, 1, "Tensor"},
		{"mean_ttft_ms", colMetric, model.MeanTTFT, 1, ""},
		{"Concurrency", colConcurrency, "", 1, ""},
		{"Request Rate", colRate, "", 1, ""},
		{"Errors", colErrors, "", 1, ""},
		{"Preset", colLabel, "", 1, ""},
		{"Engine", colLabel, "", 1, ""},
		{"Backend", colLabel, "", 1, ""},
		{"Prompt Speedup (%)", colIgnore, "", 0, ""},
		{"Mean TTFT (us)", colIgnore, "", 0, ""},
		{"Notes", colIgnore, "", 0, ""},
	}
	for _, tt := range tests {
		c := classifyHeader(tt.header)
		if c.kind != tt.kind || c.metric != tt.metric || c.group != tt.group || (tt.kind == colMetric && c.scale != tt.scale) {
			t.Errorf("classifyHeader(%q) = kind %d metric %q scale %v group %q; want %d %q %v %q",
				tt.header, c.kind, c.metric, c.scale, c.group, tt.kind, tt.metric, tt.scale, tt.group)
		}
	}
}

func TestVLLMJSONLoad(t *testing.T) {
	tests := []struct {
		name, rate, conc string
		want             model.Load
		rateText         string
	}{
		{"closed loop", `"inf"`, `4`, model.Closed(4), ""},
		{"open loop", `2.5`, `null`, model.Load{Kind: model.OpenLoop, Rate: 2.5, Burstiness: 1}, "2.5"},
		{"capped open loop", `2.5`, `8`, model.Load{Kind: model.OpenLoop, Rate: 2.5, Burstiness: 1, Concurrency: 8}, "2.5"},
		{"burst", `"inf"`, `null`, model.Load{Kind: model.Burst, Rate: math.Inf(1), Burstiness: 1}, "inf"},
		{"rate as string", `"3"`, `null`, model.Load{Kind: model.OpenLoop, Rate: 3, Burstiness: 1}, "3"},
		{"unknown", `null`, `null`, model.Load{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"request_rate": ` + tt.rate + `, "max_concurrency": ` + tt.conc + `, "completed": 10, "request_throughput": 1.5}`
			recs, err := ParseVLLMJSON("x.json", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			got := recs[0].Workload
			if got.Load.Kind != tt.want.Kind || got.Load.Concurrency != tt.want.Concurrency ||
				got.Load.Burstiness != tt.want.Burstiness || !(got.Load.Rate == tt.want.Rate || math.IsNaN(got.Load.Rate) && math.IsNaN(tt.want.Rate)) {
				t.Errorf("load = %+v, want %+v", got.Load, tt.want)
			}
			if rate := rateText(got.Load); rate != tt.rateText {
				t.Errorf("request_rate text = %q, want %q", rate, tt.rateText)
			}
		})
	}
}

// Python's json writes an infinite rate or burstiness as the bare literal
// Infinity: SGLang's bench_serving by default (a burst), vLLM's
// --burstiness inf (evenly spaced arrivals). SGLang names its E2E
// statistics e2e_latency; a ramp-up run has no one load and is refused.
func TestVLLMJSONPythonInfinityAndSGLang(t *testing.T) {
	recs, err := ParseVLLMJSON("s.jsonl", []byte(`{"backend": "sglang", "request_rate": Infinity, "max_concurrency": null, "completed": 10, "mean_e2e_latency_ms": 2000.5, "p99_e2e_latency_ms": 2100}
{"backend": "vllm", "request_rate": 20, "burstiness": Infinity, "max_concurrency": 32, "completed": 10, "mean_ttft_ms": Infinity, "request_throughput": 1.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if l := recs[0].Workload.Load; l.Kind != model.Burst {
		t.Errorf("SGLang's Infinity rate: load %+v, want a burst", l)
	}
	if m := recs[0].Metrics; m[model.MeanE2EL] != 2000.5 || m[model.P99E2EL] != 2100 {
		t.Errorf("SGLang's E2E: %v", m)
	}
	if l := recs[1].Workload.Load; l.Kind != model.OpenLoop || l.Rate != 20 || l.Burstiness != constantArrivalShape || l.Concurrency != 32 {
		t.Errorf("--burstiness inf: load %+v, want evenly spaced arrivals at 20 req/s", l)
	}
	if _, ok := recs[1].Metrics[model.MeanTTFT]; ok {
		t.Error("an Infinity statistic kept as a value, want it absent")
	}
	_, err = ParseVLLMJSON("r.json", []byte(`{"request_rate": "inf", "ramp_up_strategy": "linear", "ramp_up_start_rps": 1, "ramp_up_end_rps": 20, "completed": 10}`))
	if err == nil || !strings.Contains(err.Error(), `field "ramp_up_strategy": a ramp-up run (vllm bench serve --ramp-up-strategy linear)`) {
		t.Errorf("ramp-up run: %v", err)
	}
}

// A table's rate column may say "inf" (every prompt sent at once), and an
// engine column names the row, so a sidecar can patch each engine's rows.
func TestMarkdownRateInfAndEngineRow(t *testing.T) {
	doc := "### Offline\n\n| RPS | Num Prompts | Engine | Request throughput |\n|---|---|---|---|\n| inf | 5000 | SGLang | 22.03 |\n| 4 | 1200 | vLLM | 3.9 |\n"
	recs, err := ParseMarkdown("t.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	tests := []struct {
		row      string
		kind     model.LoadKind
		rateText string
	}{
		{"SGLang", model.Burst, "inf"},
		{"vLLM", model.OpenLoop, "4"},
	}
	for i, tt := range tests {
		r := recs[i]
		if r.Source.Row != tt.row || r.Workload.Load.Kind != tt.kind || rateText(r.Workload.Load) != tt.rateText {
			t.Errorf("record %d: row %q load %+v rate %q; want row %q kind %q rate %q",
				i, r.Source.Row, r.Workload.Load, rateText(r.Workload.Load), tt.row, tt.kind, tt.rateText)
		}
	}
	if _, err := ParseMarkdown("bad.md", []byte("| RPS | Request throughput |\n|---|---|\n| fast | 1 |\n")); err == nil {
		t.Error("a rate that is neither a number nor inf was accepted")
	}
}

func TestVLLMJSONAbsentNeverZero(t *testing.T) {
	data := `{"completed": 9, "num_prompts": 10, "total_input_tokens": 900, "total_output_tokens": 450,
	 "request_throughput": 1.5, "request_goodput": null, "std_itl_ms": NaN, "p99_itl_ms": -Infinity,
	 "mean_ttft_ms": 12.5, "label": "run \"NaN\" one"}`
	recs, err := ParseVLLMJSON("x.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	for _, k := range []string{"request_goodput", model.StdITL, model.P99ITL, model.MeanTPOT} {
		if v, ok := r.Metric(k); ok {
			t.Errorf("%s = %v, want absent", k, v)
		}
	}
	if v, _ := r.Metric(model.MeanTTFT); v != 12.5 {
		t.Errorf("mean_ttft_ms = %v, want 12.5", v)
	}
	if r.Source.Section != `run "NaN" one` {
		t.Errorf("label = %q: NaN inside a string must survive", r.Source.Section)
	}
	if r.Errors != 1 || r.Completed != 9 {
		t.Errorf("errors %d completed %d, want 1 and 9 (num_prompts - completed)", r.Errors, r.Completed)
	}
	if math.Abs(r.Workload.ISL-100) > 1e-9 || math.Abs(r.Workload.OSL-50) > 1e-9 {
		t.Errorf("ISL/OSL = %v/%v, want 100/50 from the totals over completed", r.Workload.ISL, r.Workload.OSL)
	}
}

func TestAnnotate(t *testing.T) {
	rec := func(c int, thr, e2e, ttft, p99ttft float64) Record {
		return Record{
			ID:       "t:" + string(rune('a'+c)),
			Source:   Source{File: "f", Section: "s"},
			Workload: Workload{Load: model.Closed(c)},
			Metrics: map[string]float64{model.RequestThroughput: thr, model.MeanE2EL: e2e,
				model.MeanTTFT: ttft, model.P99TTFT: p99ttft},
		}
	}
	recs := []Record{
		rec(8, 2.0, 4000, 500, 700),
		rec(1, 0.3, 3300, 400, 1200), // slow first request
		rec(2, 0.55, 3600, 450, 500),
		rec(4, 0.2, 9000, 480, 560), // dip and inversion
		rec(16, 3.0, 5000, 600, 900),
	}
	Annotate(recs)
	want := map[int][]string{0: nil, 1: {AnomalySlowFirst}, 2: nil, 3: {AnomalyThroughputDip, AnomalyLatencyInversion}, 4: nil}
	for i, codes := range want {
		var got []string
		for _, a := range recs[i].Anomalies {
			code, _, _ := strings.Cut(a, ":")
			got = append(got, code)
		}
		if strings.Join(got, ",") != strings.Join(codes, ",") {
			t.Errorf("record %d (concurrency %d): anomalies %q, want codes %v", i, recs[i].Workload.Load.Concurrency, recs[i].Anomalies, codes)
		}
	}
	// Annotating again replaces rather than appends.
	Annotate(recs)
	if len(recs[3].Anomalies) != 2 {
		t.Errorf("re-annotation gave %d anomalies, want 2", len(recs[3].Anomalies))
	}
}

func TestMeta(t *testing.T) {
	data := []byte("| Concurrency | Request Throughput (req/s) |\n|---|---|\n| 4 | 1.5 |\n")
	recs, err := Parse("runs.md", data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMeta("runs.meta.json", []byte(`{"document": "runs.md", "id": "r",
	 "defaults": {"gpu": "H20", "model": "Qwen/Qwen3-32B", "engine": "vllm-0.9.0.1", "topology": "prefill 2xTP2 + decode 1xTP4",
	  "isl": 1000, "osl_max": 200, "load": {"kind": "rate", "request_rate": 3}, "settings": {"block-size": "16"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(recs); err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if r.ID != "r:3" || r.System.GPU != "H20" || r.System.GPUCount != 8 || r.System.Topology.String() != "prefill 2xTP2 + decode 1xTP4" {
		t.Errorf("system after Apply = %s %+v", r.ID, r.System)
	}
	if r.Workload.Load.Kind != model.ClosedLoop || r.Workload.Load.Concurrency != 4 {
		t.Errorf("the row's concurrency must win over the metadata's load, got %+v", r.Workload.Load)
	}
	if r.Workload.ISL != 1000 || r.Workload.OSLMax != 200 || r.System.Settings["block-size"] != "16" {
		t.Errorf("workload/settings not filled: %+v %v", r.Workload, r.System.Settings)
	}

	bad := []struct{ meta, want string }{
		{`{"document": "x", "defaults": {"topology": "4xTQ4"}}`, `field "defaults.topology"`},
		{`{"document": "x", "defaults": {"parallelism": "expert"}}`, `field "defaults.parallelism"`},
		{`{"document": "x", "defaults": {"load": {"kind": "concurrency"}}}`, `max_concurrency must be positive`},
		{`{"document": "x", "defualts": {}}`, `unknown field "defualts"`},
		{`{"document": "x", "sections": [{"match": []}]}`, `needs at least one string`},
	}
	for _, b := range bad {
		_, err := ParseMeta("m.meta.json", []byte(b.meta))
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.HasPrefix(err.Error(), "results: m.meta.json") {
			t.Errorf("ParseMeta(%s) error = %v, want one containing %q", b.meta, err, b.want)
		}
	}
	// Provenance is an optional object of strings; anything else is an error.
	mp, err := ParseMeta("m.meta.json", []byte(`{"document": "runs.md", "provenance": {"repository": "o/r", "commit": "abc"}, "defaults": {}}`))
	if err != nil || mp.Provenance["repository"] != "o/r" || mp.Provenance["commit"] != "abc" {
		t.Errorf("ParseMeta with provenance = %+v, %v", mp, err)
	}
	if _, err := ParseMeta("m.meta.json", []byte(`{"document": "runs.md", "provenance": {"date": 2025}}`)); err == nil {
		t.Errorf("ParseMeta accepted a provenance value that is not a string")
	}
	// A GPU count that contradicts the topology is an error, not a guess.
	m2, _ := ParseMeta("m.meta.json", []byte(`{"document": "runs.md", "defaults": {"gpu_count": 4, "topology": "4xTP4"}}`))
	if err := m2.Apply(recs); err == nil || !strings.Contains(err.Error(), "gpu_count 4 but topology 4xTP4 uses 16") {
		t.Errorf("Apply with a contradicting gpu_count: %v", err)
	}
}

func TestMetaPath(t *testing.T) {
	for in, want := range map[string]string{
		"runs.md":         "runs.meta.json",
		"dir/a.b/run.txt": "dir/a.b/run.meta.json",
		"dir.x/noext":     "dir.x/noext.meta.json",
		"seeds/004_x.md":  "seeds/004_x.meta.json",
	} {
		if got := MetaPath(in); got != want {
			t.Errorf("MetaPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseNumber(t *testing.T) {
	good := map[string]float64{"1": 1, " 2.5 ": 2.5, "1,234.5": 1234.5, "-3e2": -300, "12,345,678": 12345678}
	for in, want := range good {
		if got, err := parseNumber(in); err != nil || got != want {
			t.Errorf("parseNumber(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "1,23", "NaN", "inf", "1.2.3", "12%"} {
		if _, err := parseNumber(in); err == nil {
			t.Errorf("parseNumber(%q) succeeded, want an error", in)
		}
	}
}

func TestByteOrderMark(t *testing.T) {
	recs, err := Parse("bom.json", []byte("\ufeff{\"completed\": 2,\n \"request_throughput\": 1.5}"))
	if err != nil || len(recs) != 1 || recs[0].Source.Line != 1 {
		t.Fatalf("Parse with a BOM: %v, %+v", err, recs)
	}
}

// rateText is the request_rate a load's JSON carries ("" when none).
func rateText(l model.Load) string {
	b, err := json.Marshal(l)
	if err != nil {
		return err.Error()
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err.Error()
	}
	if v, ok := m["request_rate"]; ok {
		return fmt.Sprint(v)
	}
	return ""
}

// sglang.bench_serving prints its offered load and "E2E Latency" inside the
// result block; they must reach the record's load and the e2el metrics.
func TestVLLMTextSGLangBlock(t *testing.T) {
	block := func(rate, maxCon string) string {
		return "============ Serving Benchmark Result ============\n" +
			"Backend:                                 sglang-oai\n" +
			"Traffic request rate:                    " + rate + "\n" +
			"Max request concurrency:                " + maxCon + "\n" +
			"Successful requests:                     960\n" +
			"Request throughput (req/s):              14.84\n" +
			"Mean E2E Latency (ms):                   1417.55\n" +
			"Median E2E Latency (ms):                 1330.63\n" +
			"Mean TTFT (ms):                          87.27\n" +
			"==================================================\n"
	}
	tests := []struct {
		rate, maxCon string
		want         model.Load
		wantErr      bool
	}{
		{"16.0", "not set", model.Open(16, 0), false},
		{"inf", "64", model.Closed(64), false},
		{"8", "32", model.Load{Kind: model.OpenLoop, Rate: 8, Concurrency: 32}, false},
		{"16.0", "many", model.Load{}, true},
		{"fast", "not set", model.Load{}, true},
	}
	for _, tt := range tests {
		recs, err := ParseVLLMText("s.txt", []byte(block(tt.rate, tt.maxCon)))
		if tt.wantErr {
			if err == nil {
				t.Errorf("rate %q max %q: no error", tt.rate, tt.maxCon)
			}
			continue
		}
		if err != nil || len(recs) != 1 {
			t.Fatalf("rate %q max %q: %d records, %v", tt.rate, tt.maxCon, len(recs), err)
		}
		r := recs[0]
		if r.Workload.Load.Kind != tt.want.Kind || r.Workload.Load.Rate != tt.want.Rate || r.Workload.Load.Concurrency != tt.want.Concurrency {
			t.Errorf("rate %q max %q: load %+v, want %+v", tt.rate, tt.maxCon, r.Workload.Load, tt.want)
		}
		if r.Metrics["mean_e2el_ms"] != 1417.55 || r.Metrics["median_e2el_ms"] != 1330.63 {
			t.Errorf("rate %q: e2el metrics %v", tt.rate, r.Metrics)
		}
	}
}

// Lines patches the record that starts on a given line only (one result
// block among many under a heading); a key that is not a line number is
// an error naming it.
func TestMetaLines(t *testing.T) {
	data := []byte("| Concurrency | Request Throughput (req/s) |\n|---|---|\n| 4 | 1.5 |\n| 8 | 2.5 |\n")
	recs, err := Parse("runs.md", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Source.Line != 3 || recs[1].Source.Line != 4 {
		t.Fatalf("records %+v: want two, on lines 3 and 4", recs)
	}
	m, err := ParseMeta("runs.meta.json", []byte(`{"document": "runs.md", "defaults": {"settings": {"a": "1"}},
	  "lines": {"4": {"settings": {"prefix_cache_hit_rate": "0.4", "a": "2"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(recs); err != nil {
		t.Fatal(err)
	}
	if s := recs[0].System.Settings; s["a"] != "1" || s["prefix_cache_hit_rate"] != "" {
		t.Errorf("line 3's settings %v: want only the defaults", s)
	}
	if s := recs[1].System.Settings; s["a"] != "2" || s["prefix_cache_hit_rate"] != "0.4" {
		t.Errorf("line 4's settings %v: want the line's patch over the defaults", s)
	}
	// A key Apply could never match (it compares with the line's decimal
	// text) is an error naming the sidecar and the key, not silently unused.
	for _, bad := range []string{"x", "0", "-3", "007", "+7", "07", " 7", "7 ", "1e1", "0x7"} {
		_, err := ParseMeta("m.meta.json", []byte(`{"document": "x", "lines": {"`+bad+`": {}}}`))
		if err == nil || !strings.Contains(err.Error(), "want a line number") || !strings.Contains(err.Error(), "m.meta.json") ||
			!strings.Contains(err.Error(), "lines."+bad) {
			t.Errorf("lines key %q: err %v, want a line-number error naming m.meta.json and lines.%s", bad, err, bad)
		}
	}
	if _, err := ParseMeta("m.meta.json", []byte(`{"document": "x", "lines": {"7": {"isl": -1}}}`)); err == nil || !strings.Contains(err.Error(), "lines.7.isl") {
		t.Errorf("a bad patch under lines: err %v, want it named lines.7.isl", err)
	}
}

// A CSV of sglang.bench_serving's result fields (dstack's DeepSeek-R1 raw
// data) writes the client's cap as max_concurrency, the measured mean in
// flight as concurrency, and request_rate empty: the cap is the load, the
// measured column is not a second load, and the empty rate is not an error.
// Without max_concurrency beside it, an empty rate cell still fails.
func TestCSVBenchServingFields(t *testing.T) {
	data := []byte("\ufeffGPU,backend,request_rate,max_concurrency,completed,mean_ttft_ms,mean_tpot_ms,concurrency,,\n" +
		"h200,sglang,,64,500,20637.1,80.24,62.58,,\n")
	recs, err := ParseCSV("b.csv", data)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if l := recs[0].Workload.Load; l.Kind != model.ClosedLoop || l.Concurrency != 64 {
		t.Errorf("load %+v, want closed loop 64", l)
	}
	if recs[0].Metrics["mean_ttft_ms"] != 20637.1 {
		t.Errorf("metrics %v", recs[0].Metrics)
	}
	// A stated rate beside max_concurrency is an open loop capped at it,
	// whichever column comes first.
	for _, csv := range []string{
		"backend,request_rate,max_concurrency,mean_ttft_ms,concurrency\nsglang,4,16,20.5,3.9\n",
		"backend,max_concurrency,request_rate,mean_ttft_ms,concurrency\nsglang,16,4,20.5,3.9\n",
	} {
		recs, err := ParseCSV("o.csv", []byte(csv))
		if err != nil || len(recs) != 1 {
			t.Fatalf("%q: %d records, %v", csv, len(recs), err)
		}
		if l := recs[0].Workload.Load; l.Kind != model.OpenLoop || l.Rate != 4 || l.Concurrency != 16 {
			t.Errorf("%q: load %+v, want 4 req/s capped at 16", csv, l)
		}
	}
	if _, err := ParseCSV("r.csv", []byte("backend,request_rate,mean_ttft_ms\nsglang,,20.5\n")); err == nil {
		t.Errorf("empty request_rate without max_concurrency: no error")
	}
	// vllm bench sweep's summary.csv (pandas): rate inf beside
	// max_concurrency is a closed loop, a field it did not measure is
	// empty, and the totals give the mean prompt.
	recs, err = ParseCSV("summary.csv", []byte(",request_rate,max_concurrency,completed,total_input_tokens,request_goodput,mean_ttft_ms\n0,inf,32,256,262144,,54.2\n"))
	if err != nil || len(recs) != 1 {
		t.Fatalf("summary.csv: %d records, %v", len(recs), err)
	}
	if r := recs[0]; r.Workload.Load != model.Closed(32) || r.Workload.ISL != 1024 {
		t.Errorf("summary.csv: load %+v, ISL %v; want c=32 and 1024", r.Workload.Load, r.Workload.ISL)
	}
}

// vLLM 0.6–0.8's benchmark_serving.py wrote its goodput under the key
// "request_goodput:"; it reads as request_goodput.
func TestVLLMJSONGoodputColonKey(t *testing.T) {
	recs, err := ParseVLLMJSON("g.json", []byte(`{"completed": 10, "request_throughput": 2.5, "request_goodput:": 1.7}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := recs[0].Metrics; m["request_goodput"] != 1.7 || len(m) != 2 {
		t.Errorf("metrics %v, want request_goodput 1.7 beside the throughput", m)
	}
}
