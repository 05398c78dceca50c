package deploy

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plan"
	"github.com/capsim/capsim/predict"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func topo(t *testing.T, s string) model.Topology {
	t.Helper()
	tp, err := model.ParseTopology(s)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func aggSpec(t *testing.T) Spec {
	return Spec{Model: "meta-llama/Llama-3.1-70B-Instruct", GPU: "H200", Engine: "vllm-0.9.0.1", Topology: topo(t, "5xTP4"),
		Pools:       []predict.EngineSettings{{Role: "replicas", Workers: 5, TP: 4, PP: 1, MaxNumSeqs: 256, MaxNumBatchedTokens: 4096, BlockSize: 16, Searched: true}},
		MaxModelLen: 131072, GPUMemoryUtilization: 0.9, ISL: 1024, OSL: 256, Load: model.Open(30, 1),
		Mode: "steady-state", Confidence: 0.8413,
		Metrics:  map[string]float64{"request_throughput": 30.02, "p99_ttft_ms": 412.5, "p99_tpot_ms": 44.1, "mean_tpot_ms": 38.2},
		Verdicts: []Verdict{{SLO: "ttft_p99", LimitMs: 2000, ValueMs: 412.5, Central: 301.2, Met: true}, {SLO: "tpot_p99", LimitMs: 50, ValueMs: 44.1, Central: 35.9, Met: true}},
		Headroom: "33.1 req/s (1.10×), then tpot_p99", Costs: "replicas 5xTP4: derived from dynamo-0.3.0 on H20 (±35%)"}
}

func disaggSpec(t *testing.T) Spec {
	return Spec{Model: "Qwen/Qwen3-32B", GPU: "H20", Engine: "dynamo-0.3.0", Topology: topo(t, "prefill 6xTP2 + decode 1xTP4"),
		Pools: []predict.EngineSettings{
			{Role: "prefill", Workers: 6, TP: 2, PP: 1, MaxNumSeqs: 256, MaxNumBatchedTokens: 4096, BlockSize: 128, Eager: true},
			{Role: "decode", Workers: 1, TP: 4, PP: 1, MaxNumSeqs: 256, MaxNumBatchedTokens: 4096, BlockSize: 128}},
		MaxModelLen: 4096, ISL: 3000, OSL: 150, Load: model.Closed(32), Mode: "steady-state",
		Metrics: map[string]float64{"request_throughput": 5.4, "mean_ttft_ms": 1337}}
}

// Golden files: go test ./deploy -update rewrites them.
func TestGolden(t *testing.T) {
	for name, spec := range map[string]Spec{"agg": aggSpec(t), "disagg": disaggSpec(t)} {
		files, err := Files(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			golden := filepath.Join("testdata", name, f.Path)
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./deploy -update)", err)
			}
			if !bytes.Equal(want, f.Data) {
				t.Errorf("%s differs from its golden file:\n%s", golden, f.Data)
			}
		}
	}
}

// docs decodes every YAML document of a file with a real YAML parser.
func docs(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("YAML does not parse: %v\n%s", err, data)
		}
		out = append(out, d)
	}
}

func file(t *testing.T, files []File, path string) []byte {
	t.Helper()
	for _, f := range files {
		if f.Path == path {
			return f.Data
		}
	}
	t.Fatalf("no %s among the files", path)
	return nil
}

func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %q: not a mapping: %v", k, v)
			}
			v = m[k]
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				t.Fatalf("at [%d]: not a long enough list: %v", k, v)
			}
			v = s[k]
		}
	}
	return v
}

var flagRE = regexp.MustCompile(`--[a-z][a-z0-9-]*`)

// The aggregated export: its manifests parse, request the GPUs of a
// replica, carry the same engine flags as serve.sh, and every flag exists
// in the vLLM version named.
func TestAggregatedParsesAndMatches(t *testing.T) {
	s := aggSpec(t)
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	k8s := docs(t, file(t, files, "k8s.yaml"))
	var kinds []string
	for _, o := range k8s {
		kinds = append(kinds, o["kind"].(string))
	}
	if strings.Join(kinds, " ") != "Deployment ConfigMap Service Deployment Service" {
		t.Fatalf("k8s.yaml kinds: %v, want the replicas, the gateway (config, headless Service, Deployment) and its Service", kinds)
	}
	if r := dig(t, k8s[0], "spec", "replicas"); r != 5 {
		t.Errorf("replicas %v, want 5", r)
	}
	c := dig(t, k8s[0], "spec", "template", "spec", "containers", 0)
	if g := dig(t, c, "resources", "limits", "nvidia.com/gpu"); g != "4" {
		t.Errorf("GPU limit %v, want \"4\"", g)
	}
	if img := dig(t, c, "image"); img != "vllm/vllm-openai:v0.9.0.1" {
		t.Errorf("image %v", img)
	}
	var args []string
	for _, a := range dig(t, c, "args").([]any) {
		args = append(args, a.(string))
	}
	joined := strings.Join(args, " ")
	for _, want := range []string{"--model meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size 4", "--max-num-seqs 256", "--max-num-batched-tokens 4096", "--max-model-len 131072", "--gpu-memory-utilization 0.9", "--block-size 16"} {
		if !strings.Contains(joined, want) {
			t.Errorf("k8s args %q lack %q", joined, want)
		}
	}
	serve := string(file(t, files, "serve.sh"))
	eng, _ := engine.Serve(s.Engine)
	for _, f := range flagRE.FindAllString(serve, -1) {
		if !eng.HasFlag(f) {
			t.Errorf("serve.sh uses %s, which vLLM %s does not have", f, eng.VLLM)
		}
		if f != "--port" && !strings.Contains(joined, f) {
			t.Errorf("serve.sh has %s but the manifest does not", f)
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--") && a != "--model" && !eng.HasFlag(a) {
			t.Errorf("k8s.yaml uses %s, which vLLM %s does not have", a, eng.VLLM)
		}
	}
	readme := string(file(t, files, "README.md"))
	for _, want := range []string{"capsim validate", "--replicas 5xTP4", "--rate 30", "--engine vllm-0.9.0.1", "tpot_p99", "steady-state"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}
}

// The Dynamo export: its graph configuration parses in the shape of
// Dynamo's examples (seed 004), worker counts and GPUs match the topology,
// and the manifests run the graph and prefill pods from it.
func TestDisaggregatedParsesAndMatches(t *testing.T) {
	files, err := Files(disaggSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := docs(t, file(t, files, "dynamo.yaml"))
	if len(cfg) != 1 {
		t.Fatalf("dynamo.yaml has %d documents", len(cfg))
	}
	d := cfg[0]
	for _, k := range []string{"Common", "Frontend", "Processor", "VllmWorker", "PrefillWorker"} {
		if d[k] == nil {
			t.Errorf("dynamo.yaml lacks %s", k)
		}
	}
	if v := dig(t, d, "VllmWorker", "ServiceArgs", "workers"); v != 1 {
		t.Errorf("decode workers %v", v)
	}
	if v := dig(t, d, "PrefillWorker", "ServiceArgs", "workers"); v != 6 {
		t.Errorf("prefill workers %v", v)
	}
	if v := dig(t, d, "PrefillWorker", "ServiceArgs", "resources", "gpu"); v != "2" {
		t.Errorf("prefill GPUs %v (want the string \"2\", as Dynamo's examples write it)", v)
	}
	if v := dig(t, d, "PrefillWorker", "enforce-eager"); v != true {
		t.Errorf("prefill enforce-eager %v", v)
	}
	if v := dig(t, d, "VllmWorker", "remote-prefill"); v != true {
		t.Errorf("remote-prefill %v", v)
	}
	if v := dig(t, d, "Common", "kv-transfer-config"); v != `{"kv_connector":"DynamoNixlConnector"}` {
		t.Errorf("kv-transfer-config %v", v)
	}
	eng, _ := engine.Serve("dynamo-0.3.0")
	for _, sec := range []string{"Common", "VllmWorker", "PrefillWorker"} {
		for k := range d[sec].(map[string]any) {
			if k == "model" || k == "ServiceArgs" || k == "common-configs" || k == "remote-prefill" || k == "conditional-disagg" {
				continue
			}
			if !eng.HasFlag("--" + k) {
				t.Errorf("dynamo.yaml %s.%s is no flag of vLLM %s", sec, k, eng.VLLM)
			}
		}
	}
	k8s := docs(t, file(t, files, "k8s.yaml"))
	kinds := []string{}
	for _, o := range k8s {
		kinds = append(kinds, o["kind"].(string))
	}
	if strings.Join(kinds, ",") != "ConfigMap,Deployment,Deployment,Service" {
		t.Fatalf("k8s kinds %v", kinds)
	}
	embedded := docs(t, []byte(dig(t, k8s[0], "data", "dynamo.yaml").(string)))
	if dig(t, embedded[0], "PrefillWorker", "ServiceArgs", "workers") != 6 {
		t.Error("the ConfigMap's dynamo.yaml differs from dynamo.yaml")
	}
	if r := dig(t, k8s[2], "spec", "replicas"); r != 6 {
		t.Errorf("prefill Deployment replicas %v, want 6", r)
	}
	if g := dig(t, k8s[1], "spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"); g != "4" {
		t.Errorf("graph pod GPUs %v, want 4", g)
	}
}

func TestWriteSeveral(t *testing.T) {
	dir := t.TempDir()
	paths, err := Write(dir, []Spec{aggSpec(t), disaggSpec(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 5+4+1 {
		t.Errorf("%d files written: %v", len(paths), paths)
	}
	idx, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil || !strings.Contains(string(idx), "1-llama-3-1-70b-instruct-h200-5xtp4") {
		t.Errorf("index README %q, %v", idx, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "1-llama-3-1-70b-instruct-h200-5xtp4", "serve.sh")); err != nil || st.Mode()&0o100 == 0 {
		t.Errorf("serve.sh not executable: %v %v", st, err)
	}
}

// An engine the export cannot serve is engine.Serve's error, the rest deploy's.
func TestErrors(t *testing.T) {
	for name, tt := range map[string]struct {
		mut    func(*Spec)
		prefix string
	}{
		"unknown family":    {func(s *Spec) { s.Engine = "sglang-0.4" }, "engine: "},
		"no flag table":     {func(s *Spec) { s.Engine = "vllm-0.6.3" }, "engine: "},
		"no version":        {func(s *Spec) { s.Engine = "vllm" }, "engine: "},
		"unknown dynamo":    {func(s *Spec) { s.Engine = "dynamo-0.9.0" }, "engine: "},
		"disagg on vllm":    {func(s *Spec) { s.Topology = topo(t, "prefill 1xTP4 + decode 1xTP4") }, "deploy: "},
		"no pools":          {func(s *Spec) { s.Pools = nil }, "deploy: "},
		"no model":          {func(s *Spec) { s.Model = "" }, "deploy: "},
		"missing pool role": {func(s *Spec) { s.Pools[0].Role = "decode" }, "deploy: "},
	} {
		s := aggSpec(t)
		s.Pools = append([]predict.EngineSettings(nil), s.Pools...)
		tt.mut(&s)
		if _, err := Files(s); err == nil || !strings.HasPrefix(err.Error(), tt.prefix) {
			t.Errorf("%s: err %v, want one starting %q", name, err, tt.prefix)
		}
	}
}

// A prediction over several loads lists each in the README and validates them all.
func TestPredictionPoints(t *testing.T) {
	s := disaggSpec(t)
	s.Metrics = nil
	for _, c := range []int{1, 8, 64} {
		s.Points = append(s.Points, Point{Load: model.Closed(c), Metrics: map[string]float64{"request_throughput": float64(c) / 4, "p99_ttft_ms": 900}})
	}
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(file(t, files, "README.md"))
	for _, want := range []string{"| concurrency 1 |", "| concurrency 64 | 16 |", "--concurrency 1,8,64", "--num-prompts 1280", "--prefill 6xTP2", "--decode 1xTP4",
		"it runs about 1.6 hours: the same prompt count serves every load point"} { // 1280 ÷ (0.25, 2, 16) req/s
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q:\n%s", want, readme)
		}
	}
}

// Decode workers beyond one 8-GPU node: serve.sh and k8s.yaml give the
// frontend's node (the graph pod) what it holds and run the rest in pods
// of their own.
func TestDisaggregatedDecodeBeyondOneNode(t *testing.T) {
	s := disaggSpec(t)
	s.Topology = topo(t, "prefill 6xTP2 + decode 3xTP8")
	s.Pools[1].Workers, s.Pools[1].TP = 3, 8
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	script := string(file(t, files, "serve.sh"))
	for _, want := range []string{"graphs.agg:Frontend -f ./dynamo.yaml --VllmWorker.ServiceArgs.workers=1", "K summing to 2", "components.worker:VllmWorker"} {
		if !strings.Contains(script, want) {
			t.Errorf("serve.sh lacks %q:\n%s", want, script)
		}
	}
	k8s := docs(t, file(t, files, "k8s.yaml"))
	var kinds []string
	for _, o := range k8s {
		kinds = append(kinds, o["kind"].(string))
	}
	if strings.Join(kinds, ",") != "ConfigMap,Deployment,Deployment,Deployment,Service" {
		t.Fatalf("k8s kinds %v", kinds)
	}
	if g := dig(t, k8s[1], "spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"); g != "8" {
		t.Errorf("graph pod GPUs %v, want 8 (one TP8 decode worker)", g)
	}
	if r, g := dig(t, k8s[2], "spec", "replicas"), dig(t, k8s[2], "spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"); r != 2 || g != "8" {
		t.Errorf("decode-worker Deployment: %v replicas of %v GPUs, want 2 of 8", r, g)
	}
}

// The replicas' load balancer in k8s.yaml is the one the prediction was
// priced with: an Envoy gateway routing each request round-robin or to the
// least loaded replica (a Kubernetes Service alone spreads connections at
// random), the plain Service for the random router; serve.sh says which.
func TestAggregatedRouterAsSimulated(t *testing.T) {
	for router, want := range map[string]struct{ policy, script string }{
		"":                  {"ROUND_ROBIN", "# The prediction was priced with the round-robin router; k8s.yaml deploys an Envoy gateway routing each request round-robin"},
		"round-robin":       {"ROUND_ROBIN", "# The prediction was priced with the round-robin router; k8s.yaml deploys an Envoy gateway"},
		"least-outstanding": {"FULL_SCAN", "# The prediction was priced with the least-outstanding router; k8s.yaml deploys an Envoy gateway routing each request to the replica with the fewest in flight"},
		"random":            {"", "# The prediction was priced with the random router; k8s.yaml deploys the Kubernetes Service, spreading connections at random"},
	} {
		s := aggSpec(t)
		s.Router = router
		files, err := Files(s)
		if err != nil {
			t.Fatal(err)
		}
		if script := string(file(t, files, "serve.sh")); !strings.Contains(script, want.script) {
			t.Errorf("router %q: serve.sh lacks %q:\n%s", router, want.script, script)
		}
		k8s := docs(t, file(t, files, "k8s.yaml"))
		front := k8s[len(k8s)-1]
		component := dig(t, front, "spec", "selector", "app.kubernetes.io/component")
		if want.policy == "" {
			if len(k8s) != 2 || component != "replicas" {
				t.Errorf("router random: %d objects, the Service selects %v; want the replicas behind a plain Service", len(k8s), component)
			}
			continue
		}
		if component != "gateway" {
			t.Errorf("router %q: the Service selects %v, want the gateway", router, component)
		}
		envoy := docs(t, []byte(dig(t, k8s[1], "data", "envoy.yaml").(string)))[0]
		cl := dig(t, envoy, "static_resources", "clusters", 0).(map[string]any)
		got, _ := cl["lb_policy"].(string)
		if want.policy == "FULL_SCAN" {
			got, _ = dig(t, cl, "load_balancing_policy", "policies", 0, "typed_extension_config", "typed_config", "selection_method").(string)
		}
		if got != want.policy {
			t.Errorf("router %q: Envoy policy %q, want %q", router, got, want.policy)
		}
		backend := dig(t, cl, "load_assignment", "endpoints", 0, "lb_endpoints", 0, "endpoint", "address", "socket_address", "address")
		if backend != dig(t, k8s[2], "metadata", "name") || dig(t, k8s[2], "spec", "clusterIP") != "None" ||
			dig(t, k8s[2], "spec", "selector", "app.kubernetes.io/component") != "replicas" {
			t.Errorf("router %q: Envoy resolves %v, not the replicas' headless Service %v", router, backend, k8s[2])
		}
		if n := dig(t, cl, "circuit_breakers", "thresholds", 0, "max_requests"); n != 1000000 {
			t.Errorf("router %q: max_requests %v: Envoy's default 1,024 would cap the load", router, n)
		}
	}
}

// Dynamo's Processor routes to decode workers as the prediction did; it has
// no least-outstanding router, so such a spec is refused.
func TestDynamoRouterAsSimulated(t *testing.T) {
	s := disaggSpec(t)
	s.Router = "random"
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	if v := dig(t, docs(t, file(t, files, "dynamo.yaml"))[0], "Processor", "router"); v != "random" {
		t.Errorf("Processor router %v, want random", v)
	}
	s.Router = "least-outstanding"
	if _, err := Files(s); err == nil || !strings.Contains(err.Error(), "no least-outstanding router") {
		t.Errorf("least-outstanding on Dynamo: err %v", err)
	}
}

// A prediction that assumed a prefix-cache hit rate exports it: FromPlan
// and FromPrediction carry it, the README states it with the predicted
// metrics and warns that validate's prompts share no prefix.
func TestPrefixHitRate(t *testing.T) {
	fromPlan := FromPlan(&plan.Result{Model: "Qwen/Qwen3-32B", PrefixHitRate: 0.4, Recommendations: []plan.Recommendation{{Rank: 1}}}, "")
	if len(fromPlan) != 1 || fromPlan[0].PrefixHitRate != 0.4 {
		t.Errorf("FromPlan: %+v, want the plan's hit rate 0.4", fromPlan)
	}
	fromPred, err := FromPrediction([]predict.Prediction{{Model: "Qwen/Qwen3-32B", PrefixHitRate: 0.4}}, topo(t, "1xTP4"), "")
	if err != nil || fromPred.PrefixHitRate != 0.4 {
		t.Errorf("FromPrediction: %+v, %v; want the prediction's hit rate 0.4", fromPred, err)
	}
	points := disaggSpec(t)
	points.Metrics = nil
	points.Points = []Point{{Load: model.Closed(1), Metrics: map[string]float64{"mean_ttft_ms": 900}}}
	states := []string{"ISL 3000 / OSL 150 at concurrency", "; 40% of every prompt from the prefix cache. Exported by capsim",
		"## Predicted metrics\n\nAssuming a prefix-cache hit rate of 40%", "random prompts that share no prefix", "a prediction without hits"}
	for _, tc := range []struct {
		name string
		spec Spec
	}{{"one load", disaggSpec(t)}, {"several loads", points}} {
		for _, h := range []float64{0, 0.4} {
			s := tc.spec
			s.PrefixHitRate = h
			files, err := Files(s)
			if err != nil {
				t.Fatal(err)
			}
			readme := string(file(t, files, "README.md"))
			if !strings.Contains(readme, states[0]) {
				t.Fatalf("%s: README lacks %q:\n%s", tc.name, states[0], readme)
			}
			for _, want := range states[1:] {
				if strings.Contains(readme, want) != (h > 0) {
					t.Errorf("%s, hit rate %v: README has %q: %v, want %v:\n%s", tc.name, h, want, !(h > 0), h > 0, readme)
				}
			}
			if strings.Contains(readme, "prefix") != (h > 0) {
				t.Errorf("%s, hit rate %v: README mentions a prefix: %v:\n%s", tc.name, h, !(h > 0), readme)
			}
		}
	}
}

// A prediction with a dataset exports a validate command that sends the
// dataset's lengths (--dataset), so the README compares like with like.
func TestDatasetValidateCommand(t *testing.T) {
	for _, ds := range []string{"", "sharegpt"} {
		s := disaggSpec(t)
		s.Dataset = ds
		files, err := Files(s)
		if err != nil {
			t.Fatal(err)
		}
		readme := string(file(t, files, "README.md"))
		cmd := ValidateCommand(s)
		if strings.Contains(cmd, "--dataset sharegpt") != (ds != "") || strings.Contains(cmd, "--dataset") != (ds != "") {
			t.Errorf("dataset %q: validate command:\n%s", ds, cmd)
		}
		if !strings.Contains(readme, cmd) || !strings.Contains(readme, "compare with this prediction (a benchmark-replay run of the same workload)") {
			t.Errorf("dataset %q: README lacks the command or the like-for-like lead:\n%s", ds, readme)
		}
		const says = "With `--dataset sharegpt`, `capsim validate` gives each request its own prompt and output length, dealt from the sharegpt dataset's spread of lengths scaled to ISL 3000 and OSL 150"
		if strings.Contains(readme, says) != (ds != "") || strings.Contains(readme, "every request at ISL") {
			t.Errorf("dataset %q: README on validate's lengths:\n%s", ds, readme)
		}
	}
}

// A prediction given a frontend latency (--frontend-ms) exports a validate
// command that predicts with it too; a disaggregated deployment, whose
// frontend is inside its fitted costs, does not repeat it.
func TestFrontendValidateCommand(t *testing.T) {
	fe := 2.5
	for _, disagg := range []bool{false, true} {
		s := aggSpec(t)
		if disagg {
			s = disaggSpec(t)
		}
		for _, stated := range []*float64{nil, &fe} {
			s.FrontendMS = stated
			cmd := ValidateCommand(s)
			if got, want := strings.Contains(cmd, "--frontend-ms 2.5"), stated != nil && !disagg; got != want || strings.Contains(cmd, "--frontend-ms") != want {
				t.Errorf("disaggregated %v, stated %v: validate command:\n%s", disagg, stated != nil, cmd)
			}
		}
	}
}

// A prediction given a KV link (--kv-link) exports a validate command
// that predicts with it too, for a disaggregated deployment only.
func TestKVLinkValidateCommand(t *testing.T) {
	for _, disagg := range []bool{false, true} {
		s := aggSpec(t)
		if disagg {
			s = disaggSpec(t)
		}
		s.KVLink = "RDMA200"
		if got := strings.Contains(ValidateCommand(s), "--kv-link RDMA200"); got != disagg {
			t.Errorf("disaggregated %v: validate command:\n%s", disagg, ValidateCommand(s))
		}
	}
}

// A workload whose longest request the calibrated max-model-len cannot
// hold gets a max-model-len that can (vLLM rejects such requests), and a
// Dynamo worker's token budget is at least it (Dynamo 0.3 runs without
// chunked prefill, and vLLM then refuses a smaller budget); both are said.
func TestServedMaxModelLenAndDynamoBudget(t *testing.T) {
	s := disaggSpec(t)
	s.Pools[0].MaxNumBatchedTokens = 2048
	s.ISL, s.OSL = 6000, 200 // 6000 + 240 > 4096
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range files {
		got[f.Path] = string(f.Data)
	}
	for _, want := range []string{"max-model-len: 7168", "max-num-batched-tokens: 7168"} {
		if !strings.Contains(got["dynamo.yaml"], want) {
			t.Errorf("dynamo.yaml lacks %q:\n%s", want, got["dynamo.yaml"])
		}
	}
	if strings.Contains(got["dynamo.yaml"], "max-num-batched-tokens: 2048") {
		t.Error("a prefill budget below max-model-len was kept")
	}
	for _, want := range []string{"max-model-len 7168 (raised from the calibrated 4096", "The prefill workers' max-num-batched-tokens is raised from 2048 to 7168"} {
		if !strings.Contains(got["README.md"], want) {
			t.Errorf("README lacks %q", want)
		}
	}
	// With a dataset, its longest request (ShareGPT's, scaled: 5,710 tokens here).
	ds := disaggSpec(t)
	ds.ISL, ds.OSL, ds.Dataset = 1000, 300, "sharegpt"
	if n, why, err := ds.servedMaxModelLen(); err != nil || why == "" || n < 5710 {
		t.Errorf("sharegpt at 1000:300: max-model-len %d (%q, %v), want at least 5710, raised", n, why, err)
	}
	a := aggSpec(t)
	a.MaxModelLen, a.ISL, a.OSL, a.ExactOutput = 2048, 1900, 148, true // exactly 2048: fits
	args, err := vllmArgs(a, engine.Serving{VLLM: "0.9.0.1"}, a.Pools[0])
	if err != nil || !strings.Contains(strings.Join(args, " "), "--max-model-len 2048") {
		t.Errorf("a workload that fits keeps the calibrated max-model-len: %v %v", args, err)
	}
}

// An AMD GPU gets no Kubernetes manifests (they are NVIDIA's), and the
// README says why; Dynamo's validate command asks for chat completions.
func TestAMDAndDynamoEndpoint(t *testing.T) {
	a := aggSpec(t)
	a.GPU = "MI300X"
	if script := string(file(t, must(Files(a)), "serve.sh")); strings.Contains(script, "k8s.yaml") || !strings.Contains(script, "put the replicas behind a balancer that routes so") {
		t.Errorf("serve.sh on AMD names k8s.yaml or no balancer:\n%s", script)
	}
	files, err := Files(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == "k8s.yaml" {
			t.Error("k8s.yaml written for an AMD GPU")
		}
		if f.Path == "README.md" && !strings.Contains(string(f.Data), "no `k8s.yaml`") {
			t.Error("README does not say why there is no k8s.yaml")
		}
	}
	if !strings.Contains(ValidateCommand(disaggSpec(t)), "--endpoint chat") || strings.Contains(ValidateCommand(aggSpec(t)), "--endpoint") {
		t.Error("only a Dynamo deployment's validate command asks for --endpoint chat")
	}
}

// A prediction over several shapes exports its first; the README names
// the others.
func TestFromPredictionOtherShapes(t *testing.T) {
	s := disaggSpec(t)
	preds := []predict.Prediction{
		{Model: s.Model, GPU: s.GPU, Engine: s.Engine, Settings: s.Pools, MaxModelLen: 4096, ISL: 3000, OSL: 150, Mode: "steady-state",
			Points: []predict.Point{{Load: model.Closed(1), Metrics: map[string]float64{"request_throughput": 0.3}}}},
		{ISL: 1000, OSL: 1000}, {ISL: 500, OSL: 1000},
	}
	spec, err := FromPrediction(preds, s.Topology, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.OtherShapes) != 2 || spec.OtherShapes[1] != "500:1000" {
		t.Fatalf("other shapes %v", spec.OtherShapes)
	}
	files, err := Files(spec)
	if err != nil {
		t.Fatal(err)
	}
	if r := string(file(t, files, "README.md")); !strings.Contains(r, "The prediction also covered ISL:OSL 1000:1000, 500:1000; this export tabulates and validates 3000:150 only") {
		t.Errorf("README:\n%s", r)
	}
}

// A model read from a config.json is served from the checkpoint's
// directory, which vllm serve takes.
func TestServeConfigPathModel(t *testing.T) {
	s := aggSpec(t)
	s.Model = "./models/llama-70b/config.json"
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	if script := string(file(t, files, "serve.sh")); !strings.Contains(script, "vllm serve ./models/llama-70b \\") {
		t.Errorf("serve.sh does not serve the config's directory:\n%s", script)
	}
}

// The README words the margin from the confidence: 0.5 is central, above
// it pessimistic, below it optimistic.
func TestConfidenceWording(t *testing.T) {
	for _, c := range []struct {
		conf          float64
		want, notWant string
	}{
		{0.5, "50% confidence: central costs", "pessimistic"},
		{0.8413, "84% confidence: costs at the pessimistic edge of their band (+1.00σ", "optimistic"},
		{0.2, "20% confidence: costs at the optimistic edge of their band (-0.84σ", "pessimistic"},
	} {
		s := aggSpec(t)
		s.Confidence = c.conf
		files, err := Files(s)
		if err != nil {
			t.Fatal(err)
		}
		r := string(files[len(files)-1].Data)
		if !strings.Contains(r, c.want) || strings.Contains(r, c.notWant) {
			t.Errorf("confidence %v: README says\n%s\nwant %q, not %q", c.conf, r[:min(len(r), 400)], c.want, c.notWant)
		}
	}
}

// The exported max-model-len is at most what one worker's KV cache holds
// (vLLM refuses to start otherwise), at least the workload's longest
// request, and the README says why; a workload whose longest request does
// not fit is refused with the reason.
func TestMaxModelLenFitsKVCache(t *testing.T) {
	s := aggSpec(t) // calibrated 131072
	s.KVFit = 38800
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range files {
		got[f.Path] = string(f.Data)
	}
	if !strings.Contains(got["serve.sh"], "--max-model-len 38800 ") || strings.Contains(got["k8s.yaml"], "131072") || !strings.Contains(got["k8s.yaml"], `"38800"`) {
		t.Errorf("max-model-len not lowered to the KV cache's 38800:\n%s\n%s", got["serve.sh"], got["k8s.yaml"])
	}
	if want := "max-model-len 38800 (lowered from the calibrated 131072 to the longest request one worker's KV cache holds, 38800 tokens"; !strings.Contains(got["README.md"], want) {
		t.Errorf("README lacks %q:\n%s", want, got["README.md"])
	}
	d := disaggSpec(t) // calibrated 4096, requests 3000+180
	d.KVFit = 3500
	files, err = Files(d)
	if err != nil {
		t.Fatal(err)
	}
	if y := string(files[1].Data); !strings.Contains(y, "max-model-len: 3500") {
		t.Errorf("dynamo.yaml:\n%s", y)
	}
	d.KVFit = 3000
	if _, err := Files(d); err == nil || !strings.Contains(err.Error(), "3000 prompt and 180 output tokens, does not fit one worker's KV cache of 3000 tokens") {
		t.Errorf("a request beyond the KV cache: %v", err)
	}
	s.KVFit = 200000 // more than the calibrated: kept, and said
	files, _ = Files(s)
	if r := string(files[len(files)-1].Data); !strings.Contains(r, "max-model-len 131072 (one worker's KV cache holds 200000 tokens)") {
		t.Errorf("README:\n%s", r)
	}
}

// The llm-d export: Helm values of llm-d's modelservice chart (the
// replicas as its decode pool, vLLM at the version priced with serve.sh's
// flags, TP from parallelism) and of the inferencepool chart selecting
// the modelservice's pods; none for a Dynamo deployment.
func TestLLMDExport(t *testing.T) {
	s := aggSpec(t)
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	ms := docs(t, file(t, files, "llm-d-modelservice.yaml"))
	pool := docs(t, file(t, files, "llm-d-inferencepool.yaml"))
	if len(ms) != 1 || len(pool) != 1 {
		t.Fatalf("%d and %d documents, want one values file each", len(ms), len(pool))
	}
	v := ms[0]
	if dig(t, v, "decode", "replicas") != 5 || dig(t, v, "decode", "parallelism", "tensor") != 4 || dig(t, v, "prefill", "create") != false ||
		dig(t, v, "modelArtifacts", "name") != s.Model || dig(t, v, "modelArtifacts", "uri") != "hf://"+s.Model || dig(t, v, "routing", "proxy", "enabled") != false {
		t.Errorf("modelservice values: %v", v)
	}
	c := dig(t, v, "decode", "containers", 0)
	if dig(t, c, "image") != "vllm/vllm-openai:v0.9.0.1" || dig(t, c, "modelCommand") != "vllmServe" {
		t.Errorf("container %v", c)
	}
	var args []string
	for _, a := range dig(t, c, "args").([]any) {
		args = append(args, a.(string))
	}
	if got, want := strings.Join(args, " "), "--max-num-seqs=256 --max-num-batched-tokens=4096 --max-model-len=131072 --gpu-memory-utilization=0.9 --block-size=16"; got != want {
		t.Errorf("args %q, want %q (serve.sh's flags; TP comes from parallelism)", got, want)
	}
	if dig(t, v, "decode", "nodeSelector", "nvidia.com/gpu.product") != "NVIDIA-H200" {
		t.Errorf("nodeSelector %v", dig(t, v, "decode", "nodeSelector"))
	}
	labels := dig(t, v, "modelArtifacts", "labels").(map[string]any)
	sel := dig(t, pool[0], "inferencePool", "modelServers", "matchLabels").(map[string]any)
	if len(labels) == 0 || fmt.Sprint(labels) != fmt.Sprint(sel) {
		t.Errorf("the pool selects %v, the modelservice labels its pods %v", sel, labels)
	}
	if dig(t, pool[0], "inferencePool", "targetPorts", 0, "number") != 8000 || dig(t, pool[0], "inferenceExtension", "image", "name") != "llm-d-inference-scheduler" {
		t.Errorf("inferencepool values %v", pool[0])
	}
	readme := string(file(t, files, "README.md"))
	for _, want := range []string{"## llm-d", "helm install llama-3-1-70b-instruct-h200-5xtp4-ms llm-d-modelservice/llm-d-modelservice --version v0.4.5 -f llm-d-modelservice.yaml",
		"this prediction was priced with the round-robin router"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}
	files, err = Files(disaggSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(f.Path, "llm-d") {
			t.Errorf("a Dynamo deployment exported %s", f.Path)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Prefix caching and the KV-cache type are exported as stated, and left
// to the engine's default when not stated.
func TestStatedFlagsExported(t *testing.T) {
	a := aggSpec(t)
	p := a.Pools[0]
	args, err := vllmArgs(a, engine.Serving{VLLM: "0.9.0.1"}, p)
	if line := strings.Join(args, " "); err != nil || strings.Contains(line, "prefix-caching") || strings.Contains(line, "kv-cache-dtype") {
		t.Errorf("unstated: %s %v", line, err)
	}
	p.PrefixCaching, p.KVCacheDtype = "off", "fp8"
	args, err = vllmArgs(a, engine.Serving{VLLM: "0.9.0.1"}, p)
	if line := strings.Join(args, " "); err != nil || !strings.Contains(line, "--no-enable-prefix-caching --kv-cache-dtype fp8") {
		t.Errorf("stated: %s %v", line, err)
	}
	p.PrefixCaching = "on"
	if args, _ = vllmArgs(a, engine.Serving{VLLM: "0.8.4"}, p); !strings.Contains(strings.Join(args, " "), "--enable-prefix-caching") {
		t.Errorf("stated on, vLLM 0.8.4: %v", args)
	}
}

// Async scheduling is exported as priced, in its on or off form, where
// the vLLM version has the flag, and refused where it has not.
func TestAsyncSchedulingExported(t *testing.T) {
	a := aggSpec(t)
	p := a.Pools[0]
	on, off := true, false
	for _, tt := range []struct {
		vllm  string
		async *bool
		want  string // in the line; "" for neither form
	}{
		{"0.12.0", nil, ""},
		{"0.12.0", &on, "--async-scheduling"},
		{"0.14.0", &off, "--no-async-scheduling"},
	} {
		p.AsyncScheduling = tt.async
		args, err := vllmArgs(a, engine.Serving{VLLM: tt.vllm}, p)
		line := strings.Join(args, " ") + " "
		if err != nil || (tt.want == "" && strings.Contains(line, "async-scheduling")) || (tt.want != "" && !strings.Contains(line, tt.want+" ")) {
			t.Errorf("vLLM %s, async %v: %q %v, want %q", tt.vllm, tt.async, line, err, tt.want)
		}
	}
	p.AsyncScheduling = &on
	if _, err := vllmArgs(a, engine.Serving{VLLM: "0.9.0.1"}, p); err == nil || !strings.Contains(err.Error(), "no --async-scheduling") {
		t.Errorf("vLLM 0.9 with --async-scheduling: %v", err)
	}
}

// A mixture of experts priced with its experts spread over every GPU of
// a worker is exported with --enable-expert-parallel where the vLLM
// release is known to have it; a degree below the worker's TP, which
// vLLM's flag cannot state, is refused, as is a release not checked.
func TestExpertParallelExported(t *testing.T) {
	a := aggSpec(t)
	p := a.Pools[0]
	p.TP, p.ExpertParallel = 8, 8
	if args, err := vllmArgs(a, engine.Serving{VLLM: "0.11.0"}, p); err != nil || !slices.Contains(args, "--enable-expert-parallel") {
		t.Errorf("vLLM 0.11 with experts over 8 GPUs: %v %v", args, err)
	}
	p.ExpertParallel = 0
	if args, err := vllmArgs(a, engine.Serving{VLLM: "0.11.0"}, p); err != nil || slices.Contains(args, "--enable-expert-parallel") {
		t.Errorf("vLLM 0.11 with experts split by TP: %v %v", args, err)
	}
	p.ExpertParallel = 4
	if _, err := vllmArgs(a, engine.Serving{VLLM: "0.11.0"}, p); err == nil || !strings.Contains(err.Error(), "over 4 of their 8 GPUs") {
		t.Errorf("experts over 4 of 8 GPUs: %v, want a refusal", err)
	}
	p.ExpertParallel = 8
	if _, err := vllmArgs(a, engine.Serving{VLLM: "0.9.0.1"}, p); err == nil || !strings.Contains(err.Error(), "no --enable-expert-parallel") {
		t.Errorf("vLLM 0.9 with expert parallelism: %v", err)
	}
}

// A pool priced as the other vLLM engine generation than its release's
// (a calibrated run's VLLM_USE_V1) is exported with that variable set, in
// serve.sh, the replicas' environment and llm-d's vLLM container; the
// release's own sets none.
func TestEngineGenerationExported(t *testing.T) {
	for _, tt := range []struct {
		gen  engine.Generation
		want string
	}{{"", ""}, {engine.GenV0, "0"}, {engine.GenV1, "1"}} {
		s := aggSpec(t)
		s.Pools[0].Generation = tt.gen
		files, err := Files(s)
		if err != nil {
			t.Fatal(err)
		}
		if readme := string(file(t, files, "README.md")); strings.Contains(readme, "VLLM_USE_V1") != (tt.want != "") {
			t.Errorf("generation %q: README.md names VLLM_USE_V1 %v, want %v", tt.gen, !(tt.want != ""), tt.want != "")
		}
		serve := string(file(t, files, "serve.sh"))
		if got := strings.Contains(serve, "VLLM_USE_V1="+tt.want+" vllm serve"); got != (tt.want != "") || (tt.want == "" && strings.Contains(serve, "VLLM_USE_V1")) {
			t.Errorf("generation %q: serve.sh\n%s\nwant VLLM_USE_V1=%q before vllm serve", tt.gen, serve, tt.want)
		}
		c := dig(t, docs(t, file(t, files, "k8s.yaml"))[0], "spec", "template", "spec", "containers", 0)
		got := ""
		for _, e := range dig(t, c, "env").([]any) {
			if m := e.(map[string]any); m["name"] == "VLLM_USE_V1" {
				got = m["value"].(string)
			}
		}
		if got != tt.want {
			t.Errorf("generation %q: the replicas' VLLM_USE_V1 is %q, want %q", tt.gen, got, tt.want)
		}
		ms := docs(t, file(t, files, "llm-d-modelservice.yaml"))[0]
		got = ""
		if env, ok := dig(t, ms, "decode", "containers", 0).(map[string]any)["env"].([]any); ok {
			for _, e := range env {
				if m := e.(map[string]any); m["name"] == "VLLM_USE_V1" {
					got = m["value"].(string)
				}
			}
		}
		if got != tt.want {
			t.Errorf("generation %q: llm-d's vLLM container has VLLM_USE_V1 %q, want %q", tt.gen, got, tt.want)
		}
	}
}
