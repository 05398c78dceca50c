package deploy

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"github.com/capsim/capsim/plan"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/workload"
)

// Verdict is one SLO against its predicted value.
type Verdict struct {
	SLO     string  // e.g. "ttft_p99"
	LimitMs float64 // the SLO's limit
	ValueMs float64 // predicted at the verdict's confidence
	Central float64 // predicted with central costs (0: not given)
	Met     bool
}

// Spec is one deployment to export and what was predicted for it.
type Spec struct {
	// Name names the deployment's directory and Kubernetes objects
	// (lower-case letters, digits and dashes); "" derives one.
	Name string
	// Rank is the plan's rank; Write numbers directories by it (0: by position).
	Rank     int
	Model    string // Hugging Face id, e.g. "meta-llama/Llama-3.1-70B-Instruct"
	GPU      string // catalog GPU name
	Engine   string // engine label, e.g. "vllm-0.9.0.1"
	Topology model.Topology
	// Pools are the engine settings per pool (predict.SettingsOf).
	Pools                []predict.EngineSettings
	MaxModelLen          int
	GPUMemoryUtilization float64 // 0: vLLM's default (0.9)
	// KVFit is the longest request, in tokens, one worker's KV cache holds
	// (predict.KVFit; 0: unknown): the exported --max-model-len is at most it.
	KVFit int
	// Router is how the prediction spread requests over replicas or decode
	// workers ("" and "round-robin": round-robin; "random": a
	// connection-level balancer; "least-outstanding": fewest in flight,
	// which Dynamo 0.3's Processor cannot run).
	Router string
	// FrontendMS is the per-request frontend latency the prediction was
	// given (--frontend-ms, calibrate.Target.Frontend), nil when it used
	// the calibrated or carried one; the validate command repeats it.
	FrontendMS *float64
	// KVLink is the KV link the prediction was given (--kv-link,
	// calibrate.Target.KVLink), "" when priced by the deployment's size;
	// the validate command repeats it.
	KVLink string

	// The workload the prediction is for.
	ISL, OSL int
	// OtherShapes are the further ISL:OSL shapes a prediction covered
	// (FromPrediction): the export tabulates the first shape only, and
	// its README says which others there were.
	OtherShapes []string
	Load        model.Load
	// PrefixHitRate is the share of every prompt the prediction assumed the
	// engine's prefix cache serves (predict.Options.Workload).
	PrefixHitRate float64
	// Dataset is the dataset the prediction drew request lengths from
	// (predict.Options.Workload), "" for every request at ISL and OSL.
	Dataset string
	// ExactOutput: the prediction ran every output to exactly OSL tokens
	// (predict.Options.Workload), not spread ±20%.
	ExactOutput bool
	// Mode is the simulation mode ("steady-state"); Metrics vLLM's result
	// fields as predicted; Verdicts the SLOs; Headroom a one-line summary.
	Mode       string
	Confidence float64 // of the verdicts (0: not a plan)
	Metrics    map[string]float64
	Verdicts   []Verdict
	Headroom   string
	Costs      string // where each pool's costs came from
	// Profile is the calibration file behind the prediction ("" the embedded one).
	Profile string
	// Points, for a prediction over several loads (capsim predict), are
	// the predicted metrics per load; Load and Metrics are then unused and
	// validate gets every load.
	Points []Point
}

// Point is one predicted load.
type Point struct {
	Load    model.Load
	Metrics map[string]float64
}

var nameRE = regexp.MustCompile(`[^a-z0-9]+`)

// name is a Kubernetes-safe name for the deployment.
func (s Spec) name() string {
	n := s.Name
	if n == "" {
		n = model.ShortName(s.Model) + "-" + s.GPU + "-" + s.Topology.Notation()
	}
	n = strings.Trim(nameRE.ReplaceAllString(strings.ToLower(n), "-"), "-")
	if len(n) > 50 {
		n = strings.TrimRight(n[:50], "-")
	}
	return n
}

// File is one exported file.
type File struct {
	Path string // relative to the export directory
	Data []byte
}

// Files builds the files of one deployment: serve.sh (the command line of
// every worker), k8s.yaml (Kubernetes manifests), dynamo.yaml for a Dynamo
// deployment, Helm values of llm-d's charts for vLLM replicas on NVIDIA
// GPUs, and README.md.
func Files(s Spec) ([]File, error) {
	eng, err := engine.Serve(s.Engine)
	if err != nil {
		return nil, err
	}
	if err := s.Topology.Validate(); err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	if s.Model == "" || s.GPU == "" {
		return nil, errors.New("deploy: the spec names no model or GPU")
	}
	if len(s.Pools) == 0 {
		return nil, errors.New("deploy: the spec has no engine settings")
	}
	if s.Topology.Disaggregated() && eng.Dynamo == "" {
		return nil, fmt.Errorf("deploy: %s is disaggregated but %s is not a Dynamo engine", s.Topology, s.Engine)
	}
	if eng.Dynamo != "" && s.Router == "least-outstanding" {
		return nil, fmt.Errorf("deploy: Dynamo %s's Processor has no least-outstanding router (round-robin, random or kv); predict or plan with --router round-robin or random to export", eng.Dynamo)
	}
	var out []File
	serve, err := serveScript(s, eng)
	if err != nil {
		return nil, err
	}
	out = append(out, File{"serve.sh", serve})
	if eng.Dynamo != "" {
		cfg, err := dynamoConfig(s, eng)
		if err != nil {
			return nil, err
		}
		out = append(out, File{"dynamo.yaml", cfg})
	}
	if !amdGPU(s.GPU) {
		k8s, err := manifests(s, eng)
		if err != nil {
			return nil, err
		}
		out = append(out, File{"k8s.yaml", k8s})
	}
	if llmdExportable(s, eng) {
		ms, err := llmdModelService(s, eng)
		if err != nil {
			return nil, err
		}
		pool, err := llmdInferencePool(s)
		if err != nil {
			return nil, err
		}
		out = append(out, File{"llm-d-modelservice.yaml", ms}, File{"llm-d-inferencepool.yaml", pool})
	}
	out = append(out, File{"README.md", readme(s, eng)})
	return out, nil
}

// amdGPU reports an AMD Instinct GPU, which the manifests (NVIDIA's device
// plugin, node labels and CUDA images) cannot schedule.
func amdGPU(gpu string) bool {
	g, err := model.LookupGPU(gpu)
	return err == nil && g.Class() == "AMD"
}

// Write exports every spec into dir: one subdirectory per spec (named by
// its rank when there are several) and, for several, an index README.
// It returns the paths written.
func Write(dir string, specs []Spec) ([]string, error) {
	if len(specs) == 0 {
		return nil, errors.New("deploy: nothing to export")
	}
	var written []string
	var index bytes.Buffer
	if len(specs) > 1 {
		index.WriteString("# Exported deployments\n\n| rank | directory | deployment |\n|---|---|---|\n")
	}
	for i, s := range specs {
		files, err := Files(s)
		if err != nil {
			return written, err
		}
		sub := dir
		if len(specs) > 1 {
			rank := s.Rank
			if rank == 0 {
				rank = i + 1
			}
			d := fmt.Sprintf("%d-%s", rank, s.name())
			sub = filepath.Join(dir, d)
			fmt.Fprintf(&index, "| %d | [%s](%s/README.md) | %s on %d× %s, %s |\n", rank, d, d, s.Topology.Notation(), s.Topology.GPUs(), s.GPU, s.Engine)
		}
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return written, fmt.Errorf("deploy: %w", err)
		}
		for _, f := range files {
			p := filepath.Join(sub, f.Path)
			mode := os.FileMode(0o644)
			if strings.HasSuffix(f.Path, ".sh") {
				mode = 0o755
			}
			if err := os.WriteFile(p, f.Data, mode); err != nil {
				return written, fmt.Errorf("deploy: %w", err)
			}
			written = append(written, p)
		}
	}
	if len(specs) > 1 {
		p := filepath.Join(dir, "README.md")
		if err := os.WriteFile(p, index.Bytes(), 0o644); err != nil {
			return written, fmt.Errorf("deploy: %w", err)
		}
		written = append(written, p)
	}
	return written, nil
}

// pool returns the settings of a role ("replicas", "prefill", "decode").
func (s Spec) pool(role string) (predict.EngineSettings, error) {
	for _, p := range s.Pools {
		if p.Role == role {
			return p, nil
		}
	}
	return predict.EngineSettings{}, fmt.Errorf("deploy: no engine settings for the %s pool", role)
}

// poolArgs is a role's settings and its workers' vLLM flags.
func (s Spec) poolArgs(e engine.Serving, role string) (predict.EngineSettings, []string, error) {
	p, err := s.pool(role)
	if err != nil {
		return p, nil, err
	}
	args, err := vllmArgs(s, e, p)
	return p, args, err
}

// longest is the workload's longest prompt and output as the prediction
// simulated them: a dataset's longest, or the top of OSL's ±20% spread.
func (s Spec) longest() (prompt, output int) {
	return workload.Workload{ISL: s.ISL, OSL: s.OSL, ExactOutput: s.ExactOutput, Dataset: s.Dataset}.Longest()
}

// servedMaxModelLen is the --max-model-len the deployment must run with:
// the calibrated one, raised (to a whole 1,024 tokens) when the workload's
// longest request would not fit in it, as vLLM rejects such requests, and
// lowered to KVFit when one worker's KV cache cannot hold it, as vLLM then
// refuses to start; 0 keeps vLLM's default, the model's own context. why
// says what changed it ("" nothing); a workload whose longest request does
// not fit the KV cache is an error.
func (s Spec) servedMaxModelLen() (n int, why string, err error) {
	in, out := s.longest()
	span := in + out
	n = s.MaxModelLen
	if n > 0 && span > n {
		n = (span + 1023) / 1024 * 1024
		why = fmt.Sprintf("raised from the calibrated %d: the workload's longest request, %d prompt and %d output tokens, would not fit, and vLLM rejects such a request; the prediction was priced at the calibrated engine's settings", s.MaxModelLen, in, out)
	}
	if s.KVFit <= 0 {
		return n, why, nil
	}
	if span > s.KVFit {
		return 0, "", fmt.Errorf("deploy: the workload's longest request, %d prompt and %d output tokens, does not fit one worker's KV cache of %d tokens: vLLM could not serve it (a larger TP or shorter requests would)", in, out, s.KVFit)
	}
	if n == 0 || n > s.KVFit {
		from := "the model's context"
		if s.MaxModelLen > 0 {
			from = fmt.Sprintf("the calibrated %d", s.MaxModelLen)
		}
		n = s.KVFit
		why = fmt.Sprintf("lowered from %s to the longest request one worker's KV cache holds, %d tokens, as vLLM refuses to start with a max-model-len its KV cache cannot hold; the workload's longest request, %d prompt and %d output tokens, fits", from, s.KVFit, in, out)
	}
	return n, why, nil
}

// vllmArgs are the engine flags of one pool's workers, in a fixed order,
// each checked against the engine's vLLM version.
func vllmArgs(s Spec, e engine.Serving, p predict.EngineSettings) ([]string, error) {
	var args []string
	mml, _, err := s.servedMaxModelLen()
	if err != nil {
		return nil, err
	}
	if p.ExpertParallel > 1 && p.ExpertParallel != p.TP {
		// vLLM's flag deals the experts over every GPU of a worker.
		return nil, fmt.Errorf("deploy: the %s workers were priced with experts over %d of their %d GPUs; vLLM's --%s spreads them over all %d", p.Role, p.ExpertParallel, p.TP, engine.FlagExpertParallel, p.TP)
	}
	add := func(flag string, value string) error {
		if !e.HasFlag(flag) {
			return fmt.Errorf("deploy: vLLM %s has no %s", e.VLLM, flag)
		}
		args = append(args, flag)
		if value != "" {
			args = append(args, value)
		}
		return nil
	}
	steps := []struct {
		flag, value string
		on          bool
	}{
		{engine.FlagTensorParallelSize, strconv.Itoa(p.TP), true},
		{engine.FlagPipelineParallelSize, strconv.Itoa(p.PP), p.PP > 1},
		{engine.FlagMaxNumSeqs, strconv.Itoa(p.MaxNumSeqs), p.MaxNumSeqs > 0},
		{engine.FlagMaxNumBatchedTokens, strconv.Itoa(p.MaxNumBatchedTokens), p.MaxNumBatchedTokens > 0},
		{engine.FlagMaxModelLen, strconv.Itoa(mml), mml > 0},
		{engine.FlagGPUMemoryUtilization, strconv.FormatFloat(s.GPUMemoryUtilization, 'g', -1, 64), s.GPUMemoryUtilization > 0},
		{engine.FlagBlockSize, strconv.Itoa(p.BlockSize), p.BlockSize > 0},
		{engine.FlagEnforceEager, "", p.Eager},
		// Exported as stated (predict.EngineSettings): unstated, the engine's own default holds.
		{engine.FlagPrefixCaching, "", p.PrefixCaching == "on"},
		{"no-" + engine.FlagPrefixCaching, "", p.PrefixCaching == "off"},
		{engine.FlagKVCacheDtype, p.KVCacheDtype, p.KVCacheDtype != ""},
		{engine.FlagAsyncScheduling, "", p.AsyncScheduling != nil && *p.AsyncScheduling},
		{"no-" + engine.FlagAsyncScheduling, "", p.AsyncScheduling != nil && !*p.AsyncScheduling},
		{engine.FlagExpertParallel, "", p.ExpertParallel > 1},
	}
	for _, st := range steps {
		if st.on {
			if err := add("--"+st.flag, st.value); err != nil {
				return nil, err
			}
		}
	}
	return args, nil
}

func serveScript(s Spec, e engine.Serving) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "#!/usr/bin/env bash\n# %s on %d× %s, %s — exported by capsim.\n", s.Topology.Notation(), s.Topology.GPUs(), s.GPU, s.Engine)
	if e.Dynamo != "" {
		d, _ := s.pool("decode")
		p, _ := s.pool("prefill")
		dg, pg := d.Workers*d.TP*max(d.PP, 1), p.TP*max(p.PP, 1)
		fmt.Fprintf(&b, "# Dynamo %s (vLLM %s inside): run from the repository's examples/llm directory at tag v%s,\n", e.Dynamo, e.VLLM, e.Dynamo)
		fmt.Fprintf(&b, "# with NATS_SERVER and ETCD_ENDPOINTS set on every node.\n")
		if dg+p.Workers*pg <= 8 {
			fmt.Fprintf(&b, "# Everything fits one 8-GPU node (%d GPUs):\ndynamo serve graphs.disagg:Frontend -f ./dynamo.yaml\n", dg+p.Workers*pg)
			fmt.Fprintf(&b, "# Or across nodes, as below.\n")
		}
		if dg <= 8 {
			fmt.Fprintf(&b, "# Node with the frontend, processor and %d decode worker(s) of TP%d (%d GPUs):\n", d.Workers, d.TP, dg)
			fmt.Fprintf(&b, "dynamo serve graphs.agg:Frontend -f ./dynamo.yaml\n")
		} else {
			// More decode GPUs than one 8-GPU node holds: the frontend's node
			// runs as many decode workers as fit, the others the rest.
			k := max(8/(d.TP*max(d.PP, 1)), 1)
			fmt.Fprintf(&b, "# Decode: %d worker(s) of TP%d (%d GPUs), more than one 8-GPU node holds. On the frontend's node\n", d.Workers, d.TP, dg)
			fmt.Fprintf(&b, "# (%d decode worker(s)):\n", k)
			fmt.Fprintf(&b, "dynamo serve graphs.agg:Frontend -f ./dynamo.yaml --VllmWorker.ServiceArgs.workers=%d\n", k)
			fmt.Fprintf(&b, "# On the other decode nodes, K worker(s) each (K = GPUs on the node / %d), K summing to %d:\n", d.TP*max(d.PP, 1), d.Workers-k)
			fmt.Fprintf(&b, "dynamo serve components.worker:VllmWorker -f ./dynamo.yaml --VllmWorker.ServiceArgs.workers=K\n")
		}
		fmt.Fprintf(&b, "# Prefill: %d worker(s) of TP%d in all; on each prefill node start as many as its GPUs hold\n", p.Workers, p.TP)
		fmt.Fprintf(&b, "# (K = GPUs on the node / %d), K summing to %d over the nodes:\n", pg, p.Workers)
		fmt.Fprintf(&b, "dynamo serve components.prefill_worker:PrefillWorker -f ./dynamo.yaml --PrefillWorker.ServiceArgs.workers=K\n")
		return b.Bytes(), nil
	}
	p, args, err := s.poolArgs(e, "replicas")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, "# Run one per replica: %d replica(s), each on %d GPU(s). vLLM %s.\n", p.Workers, p.TP*max(p.PP, 1), e.VLLM)
	if r := s.RouterLine(); r != "" {
		fmt.Fprintf(&b, "# %s\n", r)
	}
	fmt.Fprintf(&b, "%svllm serve %s \\\n  %s \\\n  --port 8000\n", useV1Prefix(p), model.ServedName(s.Model), joinArgs(args, " \\\n  "))
	return b.Bytes(), nil
}

// useV1Prefix sets VLLM_USE_V1 before a command where the pool was priced
// as its release's other engine generation (predict.EngineSettings.Generation).
func useV1Prefix(p predict.EngineSettings) string {
	if v, ok := p.Generation.UseV1(); ok {
		return "VLLM_USE_V1=" + v + " "
	}
	return ""
}

// useV1Env is the same as a container's environment entries.
func useV1Env(p predict.EngineSettings) []any {
	if v, ok := p.Generation.UseV1(); ok {
		return []any{[]kv{{"name", "VLLM_USE_V1"}, {"value", v}}}
	}
	return nil
}

// joinArgs pairs each flag with its value on one line.
func joinArgs(args []string, sep string) string {
	var lines []string
	for i := 0; i < len(args); i++ {
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			lines = append(lines, args[i]+" "+args[i+1])
			i++
			continue
		}
		lines = append(lines, args[i])
	}
	return strings.Join(lines, sep)
}

// ---- YAML built from ordered nodes ----

type kv struct {
	k string
	v any // string, int, float64, bool, []any, []kv, *yaml.Node
}

func node(v any) *yaml.Node {
	switch x := v.(type) {
	case *yaml.Node:
		return x
	case []kv:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, e := range x {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: e.k}, node(e.v))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range x {
			n.Content = append(n.Content, node(e))
		}
		return n
	case flow:
		n := node([]any(x))
		n.Style = yaml.FlowStyle
		return n
	case string:
		// Quote strings YAML would read as another type ("4", "true", "1e3").
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x}
		var probe any
		if yaml.Unmarshal([]byte(x), &probe) != nil || fmt.Sprint(probe) != x || strings.ContainsAny(x, "{}[]:#,") {
			n.Style = yaml.SingleQuotedStyle
		}
		return n
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x)}
	case float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(x, 'g', -1, 64)}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
	}
	panic(fmt.Sprintf("deploy: no YAML node for %T", v))
}

// flow is a sequence written inline: [a, b].
type flow []any

func marshal(docs ...[]kv) ([]byte, error) {
	var b bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(node(d)); err != nil {
			return nil, fmt.Errorf("deploy: %w", err)
		}
		enc.Close()
	}
	return b.Bytes(), nil
}

// dynamoConfig is Dynamo 0.3's graph configuration (Common, Frontend,
// Processor, VllmWorker, PrefillWorker, as its examples/llm/configs and
// seed 004 write it): the graph node reads VllmWorker, prefill nodes
// PrefillWorker. Every engine key is a flag of the vLLM inside.
func dynamoConfig(s Spec, e engine.Serving) ([]byte, error) {
	p, err := s.pool("prefill")
	if err != nil {
		return nil, err
	}
	d, err := s.pool("decode")
	if err != nil {
		return nil, err
	}
	for _, ps := range []predict.EngineSettings{p, d} {
		if _, err := vllmArgs(s, e, ps); err != nil {
			return nil, err
		}
	}
	common := []kv{{"model", s.Model}, {"block-size", d.BlockSize}}
	commonKeys := flow{"model", "block-size"}
	mml, _, err := s.servedMaxModelLen()
	if err != nil {
		return nil, err
	}
	if mml > 0 {
		common = append(common, kv{"max-model-len", mml})
		commonKeys = append(commonKeys, "max-model-len")
	}
	if s.GPUMemoryUtilization > 0 {
		common = append(common, kv{"gpu-memory-utilization", s.GPUMemoryUtilization})
		commonKeys = append(commonKeys, "gpu-memory-utilization")
	}
	common = append(common, kv{"kv-transfer-config", `{"kv_connector":"DynamoNixlConnector"}`})
	commonKeys = append(commonKeys, "kv-transfer-config")
	worker := func(ps predict.EngineSettings, extra []kv) []kv {
		w := append([]kv{}, extra...)
		w = append(w, kv{"tensor-parallel-size", ps.TP})
		if ps.PP > 1 {
			w = append(w, kv{"pipeline-parallel-size", ps.PP})
		}
		w = append(w, kv{"max-num-seqs", ps.MaxNumSeqs}, kv{"max-num-batched-tokens", s.budget(ps, mml)})
		if ps.Eager {
			w = append(w, kv{"enforce-eager", true})
		}
		w = append(w, kv{"ServiceArgs", []kv{{"workers", ps.Workers}, {"resources", []kv{{"gpu", strconv.Itoa(ps.TP * max(ps.PP, 1))}}}}},
			kv{"common-configs", commonKeys})
		return w
	}
	return marshal([]kv{
		{"Common", common},
		{"Frontend", []kv{{"served_model_name", s.Model}, {"endpoint", "dynamo.Processor.chat/completions"}, {"port", 8000}}},
		{"Processor", []kv{{"router", cmp.Or(s.Router, "round-robin")}, {"common-configs", flow{"model", "block-size"}}}},
		{"VllmWorker", worker(d, []kv{{"remote-prefill", true}, {"conditional-disagg", false}})},
		{"PrefillWorker", worker(p, nil)},
	})
}

// budget is a pool's exported --max-num-batched-tokens: for an engine
// whose disaggregated workers run without chunked prefill
// (engine.ID.PrefillBudgetCoversContext) at least max-model-len, which vLLM
// requires then (the README says when it was raised).
func (s Spec) budget(ps predict.EngineSettings, maxModelLen int) int {
	if engine.Parse(s.Engine).PrefillBudgetCoversContext() {
		return max(ps.MaxNumBatchedTokens, maxModelLen)
	}
	return ps.MaxNumBatchedTokens
}

// dynamoWorkDir is where the Dynamo image keeps the vLLM example whose
// graphs and components the pods serve.
const dynamoWorkDir = "/workspace/examples/llm"

// hfTokenEnv gives every container the Hugging Face token of the Secret
// hfTokenSecret (key "token"), for gated models such as Meta's Llama;
// optional, so an open model needs no Secret.
var hfTokenEnv = []kv{{"name", "HF_TOKEN"}, {"valueFrom", []kv{{"secretKeyRef", []kv{{"name", hfTokenSecret}, {"key", "token"}, {"optional", true}}}}}}

const hfTokenSecret = "hf-token"

// manifests are Kubernetes objects in the vLLM production-stack / llm-d
// style: one Deployment per pool (replicas = workers, nvidia.com/gpu =
// GPUs per worker, the same engine arguments) and a Service in front.
func manifests(s Spec, e engine.Serving) ([]byte, error) {
	name := s.name()
	labels := func(role string) []kv {
		return []kv{{"app.kubernetes.io/name", name}, {"app.kubernetes.io/component", role}, {"app.kubernetes.io/managed-by", "capsim"}}
	}
	gpuSelector := []kv{{"nvidia.com/gpu.product", gpuProduct(s.GPU)}}
	deployment := func(role string, replicas, gpus int, command []any, args []any, cfg bool) []kv {
		container := []kv{{"name", role}, {"image", e.Image()}}
		if command != nil {
			container = append(container, kv{"command", command})
		}
		if e.Dynamo != "" {
			container = append(container, kv{"workingDir", dynamoWorkDir}) // graphs.* and components.* import from there
		}
		container = append(container, kv{"args", args},
			kv{"ports", []any{[]kv{{"name", "http"}, {"containerPort", 8000}}}},
			kv{"resources", []kv{{"limits", []kv{{"nvidia.com/gpu", strconv.Itoa(gpus)}}}, {"requests", []kv{{"nvidia.com/gpu", strconv.Itoa(gpus)}}}}})
		mounts := []any{[]kv{{"name", "shm"}, {"mountPath", "/dev/shm"}}}
		volumes := []any{[]kv{{"name", "shm"}, {"emptyDir", []kv{{"medium", "Memory"}, {"sizeLimit", "16Gi"}}}}}
		if cfg {
			mounts = append(mounts, []kv{{"name", "config"}, {"mountPath", "/config"}})
			volumes = append(volumes, []kv{{"name", "config"}, {"configMap", []kv{{"name", name + "-dynamo"}}}})
		}
		if e.Dynamo == "" {
			container = append(container, kv{"readinessProbe", []kv{{"httpGet", []kv{{"path", "/health"}, {"port", 8000}}}, {"initialDelaySeconds", 60}, {"periodSeconds", 10}}})
		}
		container = append(container, kv{"volumeMounts", mounts})
		return []kv{
			{"apiVersion", "apps/v1"}, {"kind", "Deployment"},
			{"metadata", []kv{{"name", name + "-" + role}, {"labels", labels(role)}}},
			{"spec", []kv{
				{"replicas", replicas},
				{"selector", []kv{{"matchLabels", labels(role)}}},
				{"template", []kv{
					{"metadata", []kv{{"labels", labels(role)}}},
					{"spec", []kv{{"nodeSelector", gpuSelector}, {"containers", []any{container}}, {"volumes", volumes}}},
				}},
			}},
		}
	}
	service := func(role string) []kv {
		return []kv{
			{"apiVersion", "v1"}, {"kind", "Service"},
			{"metadata", []kv{{"name", name}, {"labels", labels(role)}}},
			{"spec", []kv{{"selector", labels(role)}, {"ports", []any{[]kv{{"name", "http"}, {"port", 8000}, {"targetPort", 8000}}}}}},
		}
	}
	if e.Dynamo == "" {
		p, args, err := s.poolArgs(e, "replicas")
		if err != nil {
			return nil, err
		}
		all := []any{"--model", s.Model}
		for _, a := range args {
			all = append(all, a)
		}
		all = append(all, "--port", "8000")
		rep := deployment("replicas", p.Workers, p.TP*max(p.PP, 1), nil, all, false)
		setEnv(rep, append([]any{hfTokenEnv}, useV1Env(p)...))
		policy := s.gatewayPolicy()
		if policy == "" {
			return marshal(rep, service("replicas"))
		}
		gw, err := gatewayObjects(name, policy, labels)
		if err != nil {
			return nil, err
		}
		return marshal(append(append([][]kv{rep}, gw...), service("gateway"))...)
	}
	p, _ := s.pool("prefill")
	d, _ := s.pool("decode")
	cfg, err := dynamoConfig(s, e)
	if err != nil {
		return nil, err
	}
	cm := []kv{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", []kv{{"name", name + "-dynamo"}, {"labels", labels("config")}}},
		{"data", []kv{{"dynamo.yaml", literal(cfg)}}}}
	// The graph pod runs the frontend, processor and decode workers (the
	// aggregated graph: its VllmWorker sends prompts to remote prefill);
	// each prefill pod runs one prefill worker. NATS and etcd are the
	// cluster's (NATS_SERVER, ETCD_ENDPOINTS: see the README).
	env := []any{[]kv{{"name", "NATS_SERVER"}, {"value", "nats://nats:4222"}}, []kv{{"name", "ETCD_ENDPOINTS"}, {"value", "http://etcd:2379"}}, hfTokenEnv}
	// A pod lives on one node: decode workers beyond what an 8-GPU node
	// holds run in their own pods (components.worker:VllmWorker).
	decodeGPUs, graphWorkers := d.TP*max(d.PP, 1), d.Workers
	graphArgs := []any{"-f", "/config/dynamo.yaml"}
	if d.Workers*decodeGPUs > 8 {
		graphWorkers = max(8/decodeGPUs, 1)
		graphArgs = append(graphArgs, fmt.Sprintf("--VllmWorker.ServiceArgs.workers=%d", graphWorkers))
	}
	graph := deployment("decode", 1, graphWorkers*decodeGPUs, []any{"dynamo", "serve", "graphs.agg:Frontend"}, graphArgs, true)
	pre := deployment("prefill", p.Workers, p.TP*max(p.PP, 1),
		[]any{"dynamo", "serve", "components.prefill_worker:PrefillWorker"},
		[]any{"-f", "/config/dynamo.yaml", "--PrefillWorker.ServiceArgs.workers=1"}, true)
	objs := [][]kv{cm, graph}
	if rest := d.Workers - graphWorkers; rest > 0 {
		objs = append(objs, deployment("decode-worker", rest, decodeGPUs, []any{"dynamo", "serve", "components.worker:VllmWorker"},
			[]any{"-f", "/config/dynamo.yaml", "--VllmWorker.ServiceArgs.workers=1"}, true))
	}
	objs = append(objs, pre)
	for _, dep := range objs[1:] {
		setEnv(dep, env)
	}
	return marshal(append(objs, service("decode"))...)
}

// setEnv adds env to the first container of a Deployment built by manifests.
func setEnv(dep []kv, env []any) {
	for _, top := range dep {
		if top.k != "spec" {
			continue
		}
		for _, sp := range top.v.([]kv) {
			if sp.k != "template" {
				continue
			}
			for _, tp := range sp.v.([]kv) {
				if tp.k != "spec" {
					continue
				}
				for _, ps := range tp.v.([]kv) {
					if ps.k == "containers" {
						c := ps.v.([]any)[0].([]kv)
						ps.v.([]any)[0] = append(c[:2:2], append([]kv{{"env", env}}, c[2:]...)...)
					}
				}
			}
		}
	}
}

// literal is a block scalar (|) holding a YAML file.
func literal(b []byte) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.LiteralStyle, Value: string(b)}
}

// gpuProduct is the GPU feature discovery label value of a catalog GPU.
func gpuProduct(gpu string) string {
	switch gpu {
	case "H100-SXM":
		return "NVIDIA-H100-80GB-HBM3"
	case "H100-PCIe":
		return "NVIDIA-H100-PCIe"
	case "H200":
		return "NVIDIA-H200"
	case "H20":
		return "NVIDIA-H20"
	case "A100-80GB":
		return "NVIDIA-A100-SXM4-80GB"
	case "A100-40GB":
		return "NVIDIA-A100-SXM4-40GB"
	case "A100-80GB-PCIe":
		return "NVIDIA-A100-80GB-PCIe"
	case "H800":
		return "NVIDIA-H800"
	case "V100-PCIe-16GB":
		return "Tesla-V100-PCIE-16GB"
	case "L40S":
		return "NVIDIA-L40S"
	case "L4":
		return "NVIDIA-L4"
	case "B200":
		return "NVIDIA-B200"
	}
	return gpu
}

// ---- README ----

func readme(s Spec, e engine.Serving) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s on %d× %s (%s)\n\n", s.Topology.Notation(), s.Topology.GPUs(), s.GPU, s.Engine)
	at := s.Load.String()
	if len(s.Points) > 0 {
		var ls []string
		for _, p := range s.Points {
			ls = append(ls, p.Load.String())
		}
		at = strings.Join(ls, ", ")
	}
	fmt.Fprintf(&b, "Model `%s`, ISL %d / OSL %d at %s%s. Exported by capsim; every number below is a prediction", s.Model, s.ISL, s.OSL, at, predict.WorkloadClause(s.PrefixHitRate, s.Dataset)+predict.ExactOutputClause(s.ExactOutput))
	if s.Mode != "" {
		fmt.Fprintf(&b, " (%s simulation", s.Mode)
		if s.Confidence > 0 {
			fmt.Fprintf(&b, ", verdicts at %.0f%% confidence: %s", 100*s.Confidence, marginClause(s.Confidence))
		}
		b.WriteString(")")
	}
	b.WriteString(".\n\n## Files\n\n")
	b.WriteString("- `serve.sh`: the command line of every worker")
	if e.Dynamo != "" {
		fmt.Fprintf(&b, " (Dynamo %s `dynamo serve`)\n- `dynamo.yaml`: Dynamo's graph configuration (the graph node reads VllmWorker, prefill nodes PrefillWorker)\n", e.Dynamo)
	} else {
		fmt.Fprintf(&b, " (`vllm serve`, vLLM %s flags)\n", e.VLLM)
	}
	if amdGPU(s.GPU) {
		fmt.Fprintf(&b, "- no `k8s.yaml`: capsim writes manifests for NVIDIA's device plugin, node labels and CUDA images only; on %s run a ROCm build of vLLM %s and request `amd.com/gpu`\n\n", s.GPU, e.VLLM)
	} else {
		fmt.Fprintf(&b, "- `k8s.yaml`: Kubernetes manifests (image `%s`; GPUs requested as `nvidia.com/gpu`, nodes picked by `nvidia.com/gpu.product`)\n", e.Image())
		fmt.Fprintf(&b, "  A gated model (Meta's Llama, for one) needs a Hugging Face token: `kubectl create secret generic %s --from-literal=token=hf_…` (every container reads it as HF_TOKEN)\n", hfTokenSecret)
		if e.Dynamo != "" {
			fmt.Fprintf(&b, "  Before applying it: build `%s` from the Dynamo repository at tag v%s (its container build script, vLLM framework) and push it where the cluster pulls from (edit `image:`), and run NATS and etcd reachable as `nats://nats:4222` and `http://etcd:2379` (the pods' NATS_SERVER and ETCD_ENDPOINTS)\n", e.Image(), e.Dynamo)
		}
		if llmdExportable(s, e) {
			b.WriteString("- `llm-d-modelservice.yaml`, `llm-d-inferencepool.yaml`: Helm values of llm-d's charts (see llm-d below)\n")
		}
		b.WriteString("\n")
	}
	if r := s.RouterLine(); r != "" {
		b.WriteString("## Routing\n\n" + r + "\n\n")
	}
	b.WriteString("## Engine settings\n\n| pool | workers | TP | PP | max-num-seqs | max-num-batched-tokens | block-size | enforce-eager | chosen by search |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range s.Pools {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %v | %v |\n", p.Role, p.Workers, p.TP, max(p.PP, 1), p.MaxNumSeqs, p.MaxNumBatchedTokens, p.BlockSize, p.Eager, p.Searched)
	}
	for _, p := range s.Pools {
		if note := p.Generation.Note(); note != "" {
			fmt.Fprintf(&b, "\nThe %s workers run %s, as the calibrated run did and as they were priced: serve.sh, k8s.yaml and llm-d-modelservice.yaml set it.\n", p.Role, note)
		}
	}
	if mml, why, _ := s.servedMaxModelLen(); mml > 0 {
		fmt.Fprintf(&b, "\nmax-model-len %d", mml)
		if why != "" {
			fmt.Fprintf(&b, " (%s)", why)
		} else if s.KVFit > 0 {
			fmt.Fprintf(&b, " (one worker's KV cache holds %d tokens)", s.KVFit)
		}
		if s.GPUMemoryUtilization > 0 {
			fmt.Fprintf(&b, ", gpu-memory-utilization %g", s.GPUMemoryUtilization)
		}
		b.WriteString(".\n")
		if engine.Parse(s.Engine).PrefillBudgetCoversContext() {
			for _, p := range s.Pools {
				if s.budget(p, mml) != p.MaxNumBatchedTokens {
					fmt.Fprintf(&b, "The %s workers' max-num-batched-tokens is raised from %d to %d in dynamo.yaml: Dynamo %s runs them without chunked prefill, and vLLM refuses a token budget below max-model-len.\n", p.Role, p.MaxNumBatchedTokens, mml, e.Dynamo)
				}
			}
		}
	}
	if len(s.Metrics) > 0 {
		b.WriteString("\n## Predicted metrics\n\n")
		b.WriteString(hitLine(s))
		b.WriteString("| metric | value |\n|---|---|\n")
		keys := make([]string, 0, len(s.Metrics))
		for k := range s.Metrics {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "duration" || k == "completed" || strings.HasPrefix(k, "total_") || strings.HasPrefix(k, "std_") {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s |\n", k, num(s.Metrics[k]))
		}
	}
	if len(s.Points) > 0 {
		b.WriteString("\n## Predicted metrics\n\n")
		b.WriteString(hitLine(s))
		b.WriteString("| load | req/s | output tok/s | TTFT mean | TTFT p99 | TPOT mean | TPOT p99 | E2E mean | E2E p99 |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, p := range s.Points {
			m := p.Metrics
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.Load, num(m["request_throughput"]), num(m["output_throughput"]),
				num(m["mean_ttft_ms"]), num(m["p99_ttft_ms"]), num(m["mean_tpot_ms"]), num(m["p99_tpot_ms"]), num(m["mean_e2el_ms"]), num(m["p99_e2el_ms"]))
		}
		b.WriteString("\n(latencies in ms)\n")
	}
	if len(s.Verdicts) > 0 {
		b.WriteString("\n## SLO verdicts\n\n| SLO | limit ms | predicted ms | with central costs | met |\n|---|---|---|---|---|\n")
		for _, v := range s.Verdicts {
			c := "-"
			if v.Central > 0 {
				c = num(v.Central)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %v |\n", v.SLO, num(v.LimitMs), num(v.ValueMs), c, v.Met)
		}
	}
	if s.Headroom != "" {
		fmt.Fprintf(&b, "\nHeadroom: %s.\n", s.Headroom)
	}
	if s.Costs != "" {
		fmt.Fprintf(&b, "\nCosts: %s.\n", s.Costs)
	}
	if llmdExportable(s, e) {
		b.WriteString(llmdReadme(s))
	}
	lead := "compare with this prediction (a benchmark-replay run of the same workload)"
	if s.PrefixHitRate > 0 {
		lead = "compare with a prediction of what `capsim validate` sends (a benchmark-replay run; how it differs from the workload above is said below)"
	}
	if len(s.OtherShapes) > 0 {
		fmt.Fprintf(&b, "\nThe prediction also covered ISL:OSL %s; this export tabulates and validates %d:%d only (`capsim predict` with `--isl` and `--osl` exports another).\n", strings.Join(s.OtherShapes, ", "), s.ISL, s.OSL)
	}
	b.WriteString("\n## Check it once it runs\n\nBenchmark the running deployment and " + lead + ":\n\n```\n")
	b.WriteString(ValidateCommand(s))
	b.WriteString("\n```\n")
	if d := validateDuration(s); d > 0 {
		fmt.Fprintf(&b, "\nAt the predicted throughputs it runs about %s", roughDuration(d))
		if d > 3600 {
			b.WriteString(": the same prompt count serves every load point, so the lightest loads take longest; to shorten it, run them apart with a smaller `--num-prompts`")
		}
		b.WriteString(".\n")
	}
	if s.PrefixHitRate > 0 {
		fmt.Fprintf(&b, "\n`capsim validate` sends random prompts that share no prefix, so the engine's prefix cache will not hit them, "+
			"and it compares the run with a prediction without hits: neither shows the %.3g%% of every prompt served from the cache "+
			"that the metrics above assume (expect a higher TTFT than above).\n", 100*s.PrefixHitRate)
	}
	if s.Dataset != "" {
		fmt.Fprintf(&b, "\nWith `--dataset %s`, `capsim validate` gives each request its own prompt and output length, dealt from the %s dataset's spread of lengths "+
			"scaled to ISL %d and OSL %d as the metrics above assume, and predicts the run with the same lengths.\n", s.Dataset, s.Dataset, s.ISL, s.OSL)
	} else if !s.ExactOutput {
		b.WriteString("\n`capsim validate` asks every request for exactly OSL output tokens (`ignore_eos`) and predicts the run so: " +
			"a closed loop of equal requests then runs in lock-step, each wave of prompts prefilled together, " +
			"so its predicted TTFTs differ from the metrics above, which spread outputs ±" + workload.OutputSpreadText + " as real traffic does.\n")
	}
	return b.Bytes()
}

// marginClause words where a confidence puts the costs in their band:
// Φ⁻¹(0.5) = 0 is the band's centre, above it the pessimistic side (slower
// steps), below it the optimistic one.
func marginClause(confidence float64) string {
	z := plan.Options{Confidence: confidence}.Band()
	switch {
	case math.Abs(z) < 0.005:
		return "central costs, no margin"
	case z > 0:
		return fmt.Sprintf("costs at the pessimistic edge of their band (+%.2fσ, slower than central)", z)
	default:
		return fmt.Sprintf("costs at the optimistic edge of their band (%.2fσ, faster than central)", z)
	}
}

// hitLine states, above the predicted metrics, the prefix-cache hit rate
// they assume; "" for none.
func hitLine(s Spec) string {
	if !(s.PrefixHitRate > 0) {
		return ""
	}
	return fmt.Sprintf("Assuming a prefix-cache hit rate of %.3g%%: that share of every prompt's tokens is served from the engine's prefix cache, not prefilled.\n\n", 100*s.PrefixHitRate)
}

func num(x float64) string {
	switch {
	case x == math.Trunc(x) && math.Abs(x) < 1e9:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case math.Abs(x) >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
}

// validatePrompts is the prompt count of ValidateCommand (enough for a
// steady state at every load point: 20 × the concurrency, five minutes of
// the rate, at least 1,000) and the loads it benchmarks.
func validatePrompts(s Spec) (int, []model.Load) {
	loads := []model.Load{s.Load}
	if len(s.Points) > 0 {
		loads = loads[:0]
		for _, p := range s.Points {
			loads = append(loads, p.Load)
		}
	}
	n := 1000
	for _, l := range loads {
		switch l.Kind {
		case model.ClosedLoop:
			n = max(n, 20*l.Concurrency)
		case model.OpenLoop, model.Burst:
			if !math.IsInf(l.Rate, 0) {
				n = max(n, int(math.Ceil(300*l.Rate)))
			}
		}
	}
	return n, loads
}

// validateDuration is how long, in seconds, ValidateCommand's benchmark
// runs at the predicted request throughputs: its prompt count at each load
// point over that point's throughput (0 when a point has none).
func validateDuration(s Spec) float64 {
	n, _ := validatePrompts(s)
	points := s.Points
	if len(points) == 0 {
		points = []Point{{Load: s.Load, Metrics: s.Metrics}}
	}
	total := 0.0
	for _, p := range points {
		rps := p.Metrics[model.RequestThroughput]
		if !(rps > 0) {
			return 0
		}
		total += float64(n) / rps
	}
	return total
}

// roughDuration is seconds as "12 minutes" or "6.3 hours".
func roughDuration(sec float64) string {
	if m := math.Max(1, math.Round(sec/60)); sec < 5400 {
		if m == 1 {
			return "1 minute"
		}
		return fmt.Sprintf("%.0f minutes", m)
	}
	return fmt.Sprintf("%.1f hours", sec/3600)
}

// ValidateCommand is the `capsim validate` command that benchmarks the
// deployment at its workload (its dataset's lengths included) and compares
// with the prediction: the
// endpoint is the Service's (replace HOST), the prompts enough for five
// minutes at the target rate (at least 1,000).
func ValidateCommand(s Spec) string {
	parts := []string{"capsim validate", "--url http://HOST:8000", "--model " + s.Model, "--gpu " + s.GPU, "--engine " + s.Engine}
	if s.Topology.Disaggregated() {
		parts = append(parts, "--prefill "+s.Topology.Prefill.String(), "--decode "+s.Topology.Decode.String())
	} else {
		parts = append(parts, "--replicas "+s.Topology.Replicas.String())
	}
	parts = append(parts, fmt.Sprintf("--isl %d", s.ISL), fmt.Sprintf("--osl %d", s.OSL))
	if engine.Family(s.Engine) == "dynamo" {
		parts = append(parts, "--endpoint chat") // Dynamo 0.3's Frontend serves chat completions only
	}
	if s.Dataset != "" {
		parts = append(parts, "--dataset "+s.Dataset)
	}
	if s.FrontendMS != nil && !s.Topology.Disaggregated() {
		parts = append(parts, "--frontend-ms "+strconv.FormatFloat(*s.FrontendMS, 'g', -1, 64))
	}
	if s.KVLink != "" && s.Topology.Disaggregated() {
		parts = append(parts, "--kv-link "+s.KVLink)
	}
	n, loads := validatePrompts(s)
	var conc, rates []string
	burst := 0.0
	for _, l := range loads {
		switch l.Kind {
		case model.ClosedLoop:
			conc = append(conc, strconv.Itoa(l.Concurrency))
		case model.OpenLoop, model.Burst:
			rates = append(rates, l.RateString())
			if l.Burstiness != 0 && l.Burstiness != 1 {
				burst = l.Burstiness
			}
		}
	}
	if len(conc) > 0 {
		parts = append(parts, "--concurrency "+strings.Join(conc, ","))
	}
	if len(rates) > 0 {
		parts = append(parts, "--rate "+strings.Join(rates, ","))
	}
	if burst != 0 {
		parts = append(parts, "--burstiness "+strconv.FormatFloat(burst, 'g', -1, 64))
	}
	parts = append(parts, fmt.Sprintf("--num-prompts %d", n))
	if s.Profile != "" {
		parts = append(parts, "--profile "+s.Profile)
	}
	parts = append(parts, "--out validate-results.json")
	return strings.Join(parts, " \\\n    ")
}
