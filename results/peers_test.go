package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
)

// TestPeerNumbers checks that each reader reports the numbers its file
// states, converted to vLLM's names and units (values copied from the
// testdata files by hand).
func TestPeerNumbers(t *testing.T) {
	tests := []struct {
		file   string
		rec    int
		metric string
		want   float64
	}{
		// GuideLLM: request_latency is in seconds; ITL is vLLM's ITL.
		{"guidellm-sweep.good.json", 0, model.MeanE2EL, 923.7},
		{"guidellm-sweep.good.json", 0, model.MeanTTFT, 22.0},
		{"guidellm-sweep.good.json", 0, model.MeanITL, 7.1},
		{"guidellm-sweep.good.json", 1, model.RequestThroughput, 30.0},
		{"guidellm-sweep.good.json", 1, "p99.9_ttft_ms", 2421.65},
		{"guidellm-concurrent.good.yaml", 2, model.MeanTTFT, 58.0},
		{"guidellm-v03.good.json", 1, model.OutputThroughput, 640.0},
		// AIPerf and genai-perf: inter_token_latency is vLLM's TPOT.
		{"aiperf-concurrency1.good.json", 0, model.MeanTTFT, 30.8},
		{"aiperf-concurrency1.good.json", 0, model.MeanTPOT, 18.2},
		{"aiperf-records-rate10.good.json", 0, model.MeanTPOT, 24.5},
		{"aiperf-export.good.csv", 0, model.P99E2EL, 3909.33},
		{"aiperf-export.good.csv", 0, model.Duration, 255.6},
		{"genai-perf-concurrency100.good.json", 0, model.MeanE2EL, 5767.434807386666},
		{"genai-perf-concurrency100.good.json", 0, model.MeanTPOT, 2.1767344516666665},
		{"genai-perf-export.good.csv", 0, model.MeanE2EL, 5767.43},
		// llm-d: seconds and s/token in one report, ms and ms/token in another.
		{"llmd-disagg.good.yaml", 0, model.MeanTTFT, 180},
		{"llmd-disagg.good.yaml", 0, model.MeanTPOT, 21},
		{"llmd-aggregated.good.yaml", 0, model.MeanTTFT, 95},
		{"llmd-aggregated-json.good.json", 0, model.MeanE2EL, 8000},
		{"sweep.good.csv", 2, model.MeanTTFT, 152.3},
		{"headers.good.csv", 2, model.MeanE2EL, 5110},
	}
	for _, tt := range tests {
		recs, err := ParseFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		got, ok := recs[tt.rec].Metric(tt.metric)
		if !ok || math.Abs(got-tt.want) > 1e-6*math.Max(1, tt.want) {
			t.Errorf("%s record %d %s = %v (present %v), want %v", tt.file, tt.rec, tt.metric, got, ok, tt.want)
		}
	}
	// What a peer does not define stays absent.
	for _, c := range []struct{ file, metric string }{
		{"guidellm-sweep.good.json", model.MeanTPOT},     // GuideLLM's TPOT counts the first token
		{"aiperf-concurrency1.good.json", model.MeanITL}, // AIPerf has no pooled ITL
		{"genai-perf-export.good.csv", model.StdE2EL},    // the CSV has no std column
	} {
		recs, _ := ParseFile(filepath.Join("testdata", c.file))
		if v, ok := recs[0].Metric(c.metric); ok {
			t.Errorf("%s: %s = %v, want absent", c.file, c.metric, v)
		}
	}
}

func TestPeerFormatsAndSystems(t *testing.T) {
	tests := []struct {
		file, format, gpu, engine, topo string
		load                            model.Load
	}{
		{"guidellm-sweep.good.json", FormatGuideLLM, "", "", "", model.Closed(1)},
		{"guidellm-concurrent.good.yaml", FormatGuideLLM, "", "", "", model.Closed(1)},
		{"aiperf-concurrency8.good.json", FormatAIPerf, "H100-SXM", "", "", model.Closed(8)},
		{"genai-perf-concurrency100.good.json", FormatGenAIPerf, "", "", "", model.Closed(100)},
		{"llmd-disagg.good.yaml", FormatLLMD, "H100-SXM", "vllm-0.10.1", "prefill 2xTP4 + decode 1xTP4", model.Open(10, 0)},
		{"llmd-aggregated.good.yaml", FormatLLMD, "L40S", "llm-d-0.3.1", "2xTP2", model.Closed(32)},
		{"sweep.good.csv", FormatCSV, "H100-SXM", "vllm-0.10.1", "1xTP1", model.Closed(1)},
	}
	for _, tt := range tests {
		recs, err := ParseFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		r := recs[0]
		topo := ""
		if !r.System.Topology.Replicas.IsZero() || r.System.Topology.Disaggregated() {
			topo = r.System.Topology.String()
		}
		if r.Source.Format != tt.format || r.System.GPU != tt.gpu || r.System.Engine != tt.engine || topo != tt.topo {
			t.Errorf("%s: format %q gpu %q engine %q topology %q; want %q %q %q %q", tt.file, r.Source.Format, r.System.GPU, r.System.Engine, topo, tt.format, tt.gpu, tt.engine, tt.topo)
		}
		if r.Workload.Load.Kind != tt.load.Kind || r.Workload.Load.Concurrency != tt.load.Concurrency || r.Workload.Load.Rate != tt.load.Rate && tt.load.Kind != model.ClosedLoop {
			t.Errorf("%s: load %+v, want %+v", tt.file, r.Workload.Load, tt.load)
		}
	}
}

// TestGuideLLMStrategies maps every GuideLLM strategy to a load.
func TestGuideLLMStrategies(t *testing.T) {
	recs, err := ParseFile("testdata/guidellm-sweep.good.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Load{model.Closed(1), model.Open(math.Inf(1), 1), model.Open(8.5, constantArrivalShape), model.Open(17, constantArrivalShape)}
	for i, w := range want {
		got := recs[i].Workload.Load
		if got.Kind != w.Kind || got.Concurrency != w.Concurrency || got.Rate != w.Rate || got.Kind == model.OpenLoop && got.Burstiness != w.Burstiness {
			t.Errorf("benchmark %d: load %+v, want %+v", i, got, w)
		}
	}
	y, err := ParseFile("testdata/guidellm-concurrent.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l := y[3].Workload.Load; l.Kind != model.OpenLoop || l.Rate != 6 || l.Burstiness != 1 {
		t.Errorf("poisson strategy: load %+v, want rate 6 with Poisson arrivals", l)
	}
}

// TestProfileCSVLoadFromDirectory takes the load from AIPerf's artifact
// directory name, since the CSV itself does not state it.
func TestProfileCSVLoadFromDirectory(t *testing.T) {
	data, err := os.ReadFile("testdata/aiperf-export.good.csv")
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]model.Load{
		"Qwen_Qwen3-0.6B-openai-chat-concurrency8":    model.Closed(8),
		"Qwen_Qwen3-0.6B-openai-chat-request_rate2.5": model.Open(2.5, 0),
		"plain": {},
	} {
		p := filepath.Join(t.TempDir(), dir, "profile_export_aiperf.csv")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got := recs[0].Workload.Load
		if got.Kind != want.Kind || got.Concurrency != want.Concurrency || got.Rate != want.Rate {
			t.Errorf("%s: load %+v, want %+v", dir, got, want)
		}
	}
}

// TestE2ELFromLatencies fills E2E from vLLM's latencies array when the
// summary lacks it, over successful requests only.
func TestE2ELFromLatencies(t *testing.T) {
	base := `{"completed": 3, "failed": 1, "request_throughput": 1.5, "mean_ttft_ms": 10, "latencies": [1.0, 2.5, 0.0, 4.0]`
	ok := []float64{1000, 2500, 4000}
	for _, tt := range []struct{ name, extra string }{
		{"failed latency is 0", ``},
		{"errors list", `, "errors": ["", "", "timeout", ""]`},
	} {
		recs, err := ParseVLLMJSON("x.json", []byte(base+tt.extra+"}"))
		if err != nil {
			t.Fatal(err)
		}
		m := recs[0].Metrics
		if m[model.MeanE2EL] != stats.Mean(ok) || m[model.MedianE2EL] != 2500 || m[model.P99E2EL] != stats.Percentile(ok, 99) || m[model.StdE2EL] != stats.Std(ok) {
			t.Errorf("%s: e2el mean %v median %v p99 %v std %v", tt.name, m[model.MeanE2EL], m[model.MedianE2EL], m[model.P99E2EL], m[model.StdE2EL])
		}
	}
	recs, err := ParseVLLMJSON("x.json", []byte(`{"completed": 1, "mean_e2el_ms": 7, "latencies": [9.0]}`))
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Metrics[model.MeanE2EL] != 7 {
		t.Errorf("the summary's mean_e2el_ms must win over the latencies")
	}
}

// TestVLLMMetadataSystem: `vllm bench serve --metadata` keys fill the system.
func TestVLLMMetadataSystem(t *testing.T) {
	recs, err := ParseVLLMJSON("x.json", []byte(`{"backend": "vllm", "model_id": "qwen3", "completed": 1, "request_throughput": 1,
		"gpu": "NVIDIA H100 80GB HBM3", "tensor_parallel_size": "2", "data_parallel_size": "3", "model": "Qwen/Qwen3-8B",
		"engine_version": "0.10.1", "max-num-batched-tokens": "8192"}`))
	if err != nil {
		t.Fatal(err)
	}
	s := recs[0].System
	if s.GPU != "H100-SXM" || s.Model != "Qwen/Qwen3-8B" || s.Engine != "vllm-0.10.1" || s.Topology.String() != "3xTP2" || s.GPUCount != 6 {
		t.Errorf("system %+v", s)
	}
	if len(s.Settings) != 1 || s.Settings["max-num-batched-tokens"] != "8192" {
		t.Errorf("settings %v: want only the engine setting", s.Settings)
	}
	// Beside SGLang's --enable-dp-attention, --dp splits each server's
	// attention: an engine setting, not a replica count.
	recs, err = ParseVLLMJSON("x.json", []byte(`{"completed": 1, "request_throughput": 1, "gpu": "H200",
		"tp": "8", "dp": "8", "enable-dp-attention": "true"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := recs[0].System; s.Topology.String() != "1xTP8" || s.Settings["dp"] != "8" || s.Settings["enable-dp-attention"] != "true" {
		t.Errorf("DP attention: topology %s, settings %v; want 1xTP8 with dp 8 kept as a setting", s.Topology, s.Settings)
	}
	// A sidecar that turns DP attention on makes the file's own dp the
	// same engine setting, unless it states the topology itself; a stated
	// replica count stays replicas.
	for _, tt := range []struct {
		name, file, sidecar, topology, dp string
		gpus                              int
	}{
		{"sidecar flag", `"tp": "8", "dp": "8"`, `"settings": {"enable-dp-attention": "true"}`, "1xTP8", "8", 8},
		{"sidecar flag and GPUs", `"tp": "8", "data_parallel_size": "8"`, `"gpu_count": 8, "settings": {"enable_dp_attention": "1"}`, "1xTP8", "8", 8},
		{"no flag", `"tp": "8", "dp": "8"`, `"settings": {"mem-fraction-static": "0.8"}`, "8xTP8", "", 64},
		{"replicas", `"tp": "8", "replicas": "8"`, `"settings": {"enable-dp-attention": "true"}`, "8xTP8", "", 64},
		{"stated topology", `"tp": "8", "dp": "2"`, `"topology": "2xTP8", "settings": {"enable-dp-attention": "true"}`, "2xTP8", "", 16},
	} {
		recs, err := ParseVLLMJSON("x.json", []byte(`{"completed": 1, "request_throughput": 1, "gpu": "H200", `+tt.file+`}`))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseMeta("x.meta.json", []byte(`{"document": "x.json", "defaults": {`+tt.sidecar+`}}`))
		if err != nil {
			t.Fatal(err)
		}
		// Then the command line's metadata, as capsim fit --from and data
		// --file apply it after the sidecar: the layout is decided once.
		for _, m := range []*Meta{m, {Document: "the command line"}} {
			if err := m.Apply(recs); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
		}
		if s := recs[0].System; s.Topology.String() != tt.topology || s.GPUCount != tt.gpus || s.Settings["dp"]+s.Settings["data_parallel_size"] != tt.dp {
			t.Errorf("%s: topology %s, %d GPUs, settings %v; want %s, %d GPUs, dp setting %q", tt.name, s.Topology, s.GPUCount, s.Settings, tt.topology, tt.gpus, tt.dp)
		}
	}
	// A file whose own GPU count leaves no room for dp servers reads its
	// dp as the engine setting, before any sidecar; one with room for them
	// still reads replicas, and one with neither is an error.
	// Another engine's dp is its servers (vLLM's --data-parallel-size), so
	// there the count is a contradiction, as is a replica count stated
	// beside the dp.
	for _, tt := range []struct{ file, topology, dp, err string }{
		{`"tp": "8", "dp": "8", "gpu_count": "8"`, "1xTP8", "8", ""},
		{`"tensor_parallel_size": "4", "data_parallel_size": "2", "num_gpus": "4"`, "1xTP4", "2", ""},
		{`"engine": "sglang", "tp": "8", "dp": "8", "gpu_count": "8"`, "1xTP8", "8", ""},
		{`"tp": "4", "dp": "2", "gpu_count": "8"`, "2xTP4", "", ""},
		{`"tp": "4", "dp": "2", "gpu_count": "6"`, "", "", "gpu_count 6 but the topology 2xTP4 uses 8 GPUs"},
		{`"vllm_version": "0.10.1", "tp": "8", "dp": "8", "gpu_count": "8"`, "", "", "gpu_count 8 but the topology 8xTP8 uses 64 GPUs"},
		{`"tp": "8", "dp": "8", "replicas": "8", "gpu_count": "8"`, "", "", "gpu_count 8 but the topology 8xTP8 uses 64 GPUs"},
	} {
		recs, err := ParseVLLMJSON("x.json", []byte(`{"completed": 1, "request_throughput": 1, "gpu": "H200", `+tt.file+`}`))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.file, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		s := recs[0].System
		if s.Topology.String() != tt.topology || s.Settings["dp"]+s.Settings["data_parallel_size"] != tt.dp {
			t.Errorf("%s: topology %s, settings %v; want %s with dp setting %q", tt.file, s.Topology, s.Settings, tt.topology, tt.dp)
		}
	}
	// DP attention turned on by any role's own key (without the server's
	// plain one) splits the attention, here as in calibrate.
	recs, err = ParseVLLMJSON("x.json", []byte(`{"completed": 1, "request_throughput": 1, "gpu": "H200",
		"tp": "8", "dp": "4", "decode.enable-dp-attention": "true", "prefill.enable-dp-attention": "false"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := recs[0].System; s.Topology.String() != "1xTP8" || s.Settings["dp"] != "4" {
		t.Errorf("a role's DP attention: topology %s, settings %v; want 1xTP8 with dp 4 kept as a setting", s.Topology, s.Settings)
	}
	for _, tt := range []struct {
		settings    map[string]string
		withPrefill bool
		on          bool
		dp          int
	}{
		{map[string]string{"enable-dp-attention": "true", "dp": "8"}, false, true, 8},
		{map[string]string{"Enable_DP_Attention": "1", "dp-size": "4"}, false, true, 4},
		{map[string]string{"decode.enable-dp-attention": "true", "prefill.enable-dp-attention": "false", "decode.dp": "8"}, false, true, 8},
		{map[string]string{"prefill.enable-dp-attention": "true", "prefill.dp": "8"}, false, false, 0},
		{map[string]string{"prefill.enable-dp-attention": "true", "prefill.dp": "8"}, true, true, 8},
		{map[string]string{"enable-dp-attention": "false", "decode.enable-dp-attention": "true", "dp": "2", "decode.dp": "8"}, false, false, 2},
		{map[string]string{"enable-dp-attention": "yes"}, false, false, 0},
	} {
		if on, dp := DPAttentionSettings(tt.settings, tt.withPrefill); on != tt.on || dp != tt.dp {
			t.Errorf("DPAttentionSettings(%v, %v) = %v, %d; want %v, %d", tt.settings, tt.withPrefill, on, dp, tt.on, tt.dp)
		}
	}
	for _, tt := range []struct {
		settings map[string]string
		on       bool
		ep       int
	}{
		{map[string]string{"enable-expert-parallel": "true"}, true, 0},
		{map[string]string{"Enable_Expert_Parallel": "1", "ep_size": "4"}, true, 4},
		{map[string]string{"ep": "8"}, false, 8},
		{map[string]string{"expert-parallel-size": "2"}, false, 2},
		{map[string]string{"decode.ep-size": "8", "prefill.ep-size": "2"}, false, 8},
		{map[string]string{"prefill.enable-expert-parallel": "true"}, false, 0},
		{map[string]string{"enable-expert-parallel": "false", "decode.enable-expert-parallel": "true"}, false, 0},
		{map[string]string{"enable-expert-parallel": "maybe"}, false, 0},
		{map[string]string{"ep": "true"}, true, 0},
		{map[string]string{"enable-ep-moe": "true", "tp": "8"}, true, 0},
		{map[string]string{"decode.ep": "1"}, false, 1},
	} {
		if on, ep := ExpertParallelSettings(tt.settings); on != tt.on || ep != tt.ep {
			t.Errorf("ExpertParallelSettings(%v) = %v, %d; want %v, %d", tt.settings, on, ep, tt.on, tt.ep)
		}
	}
	// A GPU count the sidecar states is checked against the topology, not
	// overwritten.
	recs, err = ParseVLLMJSON("x.json", []byte(`{"completed": 1, "request_throughput": 1, "gpu": "H200", "tp": "8", "dp": "2"}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMeta("x.meta.json", []byte(`{"document": "x.json", "defaults": {"gpu_count": 16, "settings": {"enable-dp-attention": "true"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(recs); err == nil || !strings.Contains(err.Error(), "gpu_count 16 but topology 1xTP8 uses 8 GPUs") {
		t.Errorf("sidecar GPU count against DP attention: %v", err)
	}
	for _, bad := range []struct{ kv, want string }{
		{`"tensor_parallel_size": "two"`, `results: x.json:1: field "tensor_parallel_size": want a positive integer, got "two"`},
		{`"topology": "3 boxes"`, `results: x.json:1: field "topology": model: topology "3 boxes"`},
		{`"topology": "2xTP2", "gpu_count": "3"`, `results: x.json:1: gpu_count 3 but the topology 2xTP2 uses 4 GPUs`},
	} {
		_, err := ParseVLLMJSON("x.json", []byte(`{"completed": 1, "request_throughput": 1, `+bad.kv+`}`))
		if err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want prefix %q", bad.kv, err, bad.want)
		}
	}
}

// TestVLLMSweepSystemWithoutSidecars: six --save-result files of one sweep,
// named as vLLM names them, with --metadata, read into records that share
// one system and one workload shape (what groups them into one series).
func TestVLLMSweepSystemWithoutSidecars(t *testing.T) {
	dir := t.TempDir()
	var first *Record
	for _, c := range []int{1, 2, 4, 8, 16, 32} {
		name := filepath.Join(dir, "vllm-infqps-concurrency"+strconv.Itoa(c)+"-Qwen3-8B-20260101-120000.json")
		body := `{"date": "20260101-120000", "endpoint_type": "vllm", "backend": "vllm", "label": null, "model_id": "Qwen/Qwen3-8B",
			"tokenizer_id": "Qwen/Qwen3-8B", "num_prompts": 200, "gpu": "H100", "tensor_parallel_size": "1", "vllm_version": "0.10.1",
			"input_len": "1024", "output_len": "128",
			"request_rate": "inf", "burstiness": 1.0, "max_concurrency": ` + strconv.Itoa(c) + `, "duration": 10, "completed": 200, "failed": 0,
			"total_input_tokens": 204800, "total_output_tokens": 25600, "request_throughput": 20, "output_throughput": 2560,
			"total_token_throughput": 23040, "mean_ttft_ms": 30, "mean_tpot_ms": 8, "latencies": [1.0, 1.1]}`
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		r := recs[0]
		if r.System.GPU != "H100-SXM" || r.System.Engine != "vllm-0.10.1" || r.System.Topology.String() != "1xTP1" || r.Workload.Load.Concurrency != c {
			t.Fatalf("concurrency %d: system %+v load %+v", c, r.System, r.Workload.Load)
		}
		if first == nil {
			first = &r
			continue
		}
		if r.System.GPU != first.System.GPU || r.System.Model != first.System.Model || r.System.Engine != first.System.Engine ||
			r.System.Topology != first.System.Topology || r.Workload.ISLMax != first.Workload.ISLMax || r.Workload.OSLMax != first.Workload.OSLMax {
			t.Errorf("concurrency %d: system or workload differs from the first file's", c)
		}
	}
}

// AIPerf at the top level writes error_request_count as a metric object
// {unit, avg}, not a bare count: a run with failed requests reads.
func TestAIPerfTopLevelErrorCount(t *testing.T) {
	doc := `{"request_throughput": {"unit": "requests/sec", "avg": 8.5},
"request_count": {"unit": "requests", "avg": 98},
"error_request_count": {"unit": "requests", "avg": 2},
"time_to_first_token": {"unit": "ms", "avg": 43.3, "p99": 60.1},
"input_config": {"endpoint": {"model_names": ["meta-llama/Llama-3.1-8B-Instruct"]}, "loadgen": {"concurrency": 16}}}`
	recs, err := ParseAIPerfJSON("profile_export_aiperf.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[0]; r.Errors != 2 || r.Metrics[model.MeanTTFT] != 43.3 {
		t.Errorf("errors %d, mean TTFT %v; want 2 and 43.3", r.Errors, r.Metrics[model.MeanTTFT])
	}
}

// The llm-d report schema moved a component's kind under standardized,
// counts accelerators per replica (standardized.replicas) and names the
// request throughput request_rate: the same deployment reads the same.
func TestLLMDCurrentSchema(t *testing.T) {
	draft, err := os.ReadFile("testdata/llmd-aggregated.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	old, err := ParseLLMDReport("draft.yaml", draft)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(draft)
	// Two replica components of 2 GPUs become one of 2 replicas.
	first := strings.Index(doc, "  - metadata:\n")
	second := strings.Index(doc[first+1:], "  - metadata:\n") + first + 1
	third := strings.Index(doc[second+1:], "  - metadata:\n") + second + 1
	comp := doc[first:second]
	comp = strings.Replace(comp, "      kind: inference_engine\n", "", 1)
	comp = strings.Replace(comp, "    standardized:\n", "    standardized:\n      kind: inference_engine\n      replicas: 2\n", 1)
	doc = doc[:first] + comp + doc[third:]
	doc = strings.Replace(doc, "        requests_rate:", "        request_rate:", 1)
	cur, err := ParseLLMDReport("current.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	o, c := old[0], cur[0]
	if c.System.Topology.String() != o.System.Topology.String() || c.System.GPUCount != o.System.GPUCount || c.System.GPU != o.System.GPU ||
		c.Metrics[model.RequestThroughput] != o.Metrics[model.RequestThroughput] || c.Metrics[model.RequestThroughput] == 0 {
		t.Errorf("current schema: %s on %d× %s at %v req/s; draft: %s on %d× %s at %v req/s",
			c.System.Topology, c.System.GPUCount, c.System.GPU, c.Metrics[model.RequestThroughput],
			o.System.Topology, o.System.GPUCount, o.System.GPU, o.Metrics[model.RequestThroughput])
	}
}

// genai-perf's current profile_export_genai_perf.json holds its whole
// config: model_names at the top of input_config, the backend under
// endpoint, the load under perf_analyzer.stimulus. It is genai-perf's,
// not AIPerf's, though it has an endpoint object too.
func TestGenAIPerfConfigJSON(t *testing.T) {
	doc := `{"request_throughput": {"unit": "requests/sec", "avg": 11.8},
"time_to_first_token": {"unit": "ms", "avg": 54.2},
"input_config": {"model_names": ["meta-llama/Llama-3.1-8B-Instruct"], "subcommand": "profile",
 "endpoint": {"backend": "vllm", "type": "chat", "service_kind": "openai"},
 "perf_analyzer": {"stimulus": {"concurrency": 32}, "measurement": {"mode": "request_count", "num": 384}},
 "input": {"synthetic_tokens": {"mean": 550, "stddev": 0}, "output_tokens": {"mean": 256}}}}`
	recs, err := Parse("profile_export_genai_perf.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if r.Source.Format != FormatGenAIPerf || r.System.Model != "meta-llama/Llama-3.1-8B-Instruct" || r.System.Engine != "vllm" ||
		r.Workload.Load != model.Closed(32) || r.Workload.ISLMax != 550 || r.Workload.OSLMax != 256 {
		t.Errorf("format %s, model %q, engine %q, load %+v, lengths %d/%d", r.Source.Format, r.System.Model, r.System.Engine, r.Workload.Load, r.Workload.ISLMax, r.Workload.OSLMax)
	}
}

// vllm bench sweep writes one run=0.json per parameter directory, with the
// serve settings it varied as numbers and booleans: the files load
// together, each record named by its directory too, the settings kept as
// settings rather than metrics.
func TestVLLMSweepRunFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, seqs := range []int{64, 256} {
		d := filepath.Join(dir, fmt.Sprintf("SERVE--max_num_seqs=%d-BENCH--max_concurrency=8", seqs))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		doc := fmt.Sprintf(`{"max_concurrency": 8, "request_rate": "inf", "completed": 10, "request_throughput": 2.5, "max_num_seqs": %d, "enable_chunked_prefill": true, "capsim_partial": false}`, seqs)
		p := filepath.Join(d, "run=0.json")
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	recs, err := LoadFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !strings.HasPrefix(recs[0].ID, "SERVE--max_num_seqs=64-BENCH--max_concurrency=8/run=0:") ||
		!strings.HasPrefix(recs[1].ID, "SERVE--max_num_seqs=256-BENCH--max_concurrency=8/run=0:") {
		t.Fatalf("IDs %q, %q: want each named by its directory", recs[0].ID, recs[1].ID)
	}
	for i, want := range []string{"64", "256"} {
		s := recs[i].System.Settings
		if s["max_num_seqs"] != want || s["enable_chunked_prefill"] != "true" {
			t.Errorf("record %d settings %v", i, s)
		}
		if _, ok := recs[i].Metrics["max_num_seqs"]; ok {
			t.Errorf("record %d keeps max_num_seqs as a metric", i)
		}
		if _, ok := s["capsim_partial"]; ok {
			t.Errorf("record %d: a boolean that is no serve setting became one", i)
		}
	}
}

// An llm-d report of a closed-loop run writes rate_qps: .inf (YAML's
// infinity): it reads as the closed loop; a latency of .inf is refused with
// its field named, and .nan is absent, as NaN is in the JSON readers.
func TestLLMDYAMLInfinity(t *testing.T) {
	doc, err := os.ReadFile("testdata/llmd-aggregated.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := ParseLLMDReport("a.yaml", doc); err != nil || recs[0].Metrics["mean_ttft_ms"] != 95 {
		t.Fatalf("the report as it is: %v", err)
	}
	closed := strings.Replace(string(doc), "      concurrency: 32\n", "      concurrency: 32\n      rate_qps: .inf\n", 1)
	recs, err := ParseLLMDReport("closed.yaml", []byte(closed))
	if err != nil {
		t.Fatal(err)
	}
	if l := recs[0].Workload.Load; l != model.Closed(32) {
		t.Errorf("load %+v, want a closed loop of 32", l)
	}
	unlimited := strings.Replace(string(doc), "      concurrency: 32\n", "      concurrency: .inf\n      rate_qps: 4\n", 1)
	if recs, err := ParseLLMDReport("open.yaml", []byte(unlimited)); err != nil || recs[0].Workload.Load != model.Open(4, 0) {
		t.Errorf("concurrency .inf at 4 qps: %v, %v", recs, err)
	}
	nan := strings.Replace(string(doc), "          mean: 95.0\n", "          mean: .nan\n", 1)
	if recs, err := ParseLLMDReport("nan.yaml", []byte(nan)); err != nil {
		t.Errorf(".nan latency: %v", err)
	} else if _, ok := recs[0].Metrics["mean_ttft_ms"]; ok {
		t.Errorf(".nan latency read as %v, want absent", recs[0].Metrics["mean_ttft_ms"])
	}
	inf := strings.Replace(string(doc), "          mean: 95.0\n", "          mean: .inf\n", 1)
	_, err = ParseLLMDReport("inf.yaml", []byte(inf))
	const want = `results: inf.yaml:154: field "results.request_performance.aggregate.latency.time_to_first_token.mean": want a finite number, got .inf`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

// An llm-d report's engine command lines (native.args) state the engine
// settings capsim models, role-prefixed for prefill and decode workers;
// the others (TP, which the topology states) are not copied.
func TestLLMDEngineArgs(t *testing.T) {
	for file, want := range map[string]map[string]string{
		"llmd-aggregated-json.good.json": {"block-size": "16"},
		"llmd-disagg.good.yaml":          {"prefill.block-size": "16", "decode.block-size": "16"},
	} {
		recs, err := ParseFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		s := recs[0].System.Settings
		for k, v := range want {
			if s[k] != v {
				t.Errorf("%s: setting %s = %q, want %q (settings %v)", file, k, s[k], v, s)
			}
		}
		for k := range s {
			if strings.Contains(k, "tensor-parallel-size") {
				t.Errorf("%s: %s copied", file, k)
			}
		}
	}
	r := &Record{}
	llmdEngineArgs(r, &node{kind: kindObject, keys: []string{"--enforce-eager", "--max_num_seqs", "--kv-cache-dtype"},
		vals: []*node{{kind: kindNull}, {kind: kindNumber, str: "128"}, {kind: kindString, str: "fp8"}}}, "decode")
	if s := r.System.Settings; s["decode.enforce-eager"] != "true" || s["decode.max-num-seqs"] != "128" || s["decode.kv-cache-dtype"] != "fp8" {
		t.Errorf("switch, underscores and a role: %v", s)
	}
}
