package deploy

import (
	"strconv"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
)

// The llm-d releases the export's Helm values are written for: the charts
// and scheduler image llm-d's inference-scheduling guide installs
// (guides/inference-scheduling/helmfile.yaml.gotmpl in llm-d/llm-d).
const (
	LLMDModelServiceChart   = "llm-d-modelservice/llm-d-modelservice"
	LLMDModelServiceVersion = "v0.4.5"
	LLMDModelServiceRepo    = "https://llm-d-incubation.github.io/llm-d-modelservice/"
	LLMDInferencePoolChart  = "oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool"
	LLMDInferencePoolVer    = "v1.3.0"
	llmdSchedulerHub        = "ghcr.io/llm-d"
	llmdSchedulerName       = "llm-d-inference-scheduler"
	llmdSchedulerTag        = "v0.5.0"
	// llmdTokenSecret is the Secret of the Hugging Face token, read by
	// the chart under the key HF_TOKEN (as llm-d's guides create it).
	llmdTokenSecret = "llm-d-hf-token"
)

// llmdExportable reports whether the spec has an llm-d export: vLLM
// replicas on NVIDIA GPUs (a Dynamo deployment's disaggregation is not
// llm-d's, and the values request nvidia.com/gpu).
func llmdExportable(s Spec, e engine.Serving) bool {
	return e.Dynamo == "" && !s.Topology.Disaggregated() && !amdGPU(s.GPU)
}

// llmdModelService is the values of llm-d's modelservice chart: the
// replicas as its decode pool (prefill off, no routing sidecar), vLLM at
// the version priced running the same flags as serve.sh (the chart adds
// `vllm serve MODEL`, --port and --tensor-parallel-size from parallelism).
func llmdModelService(s Spec, e engine.Serving) ([]byte, error) {
	p, args, err := s.poolArgs(e, "replicas")
	if err != nil {
		return nil, err
	}
	var flags []any
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			a += "=" + args[i+1]
			i++
		}
		if !strings.HasPrefix(a, "--tensor-parallel-size") {
			flags = append(flags, a)
		}
	}
	container := []kv{{"name", "vllm"}, {"image", e.Image()}, {"modelCommand", "vllmServe"}, {"args", flags},
		{"ports", []any{[]kv{{"containerPort", 8000}, {"name", "vllm"}, {"protocol", "TCP"}}}},
		{"mountModelVolume", true},
		{"volumeMounts", []any{[]kv{{"name", "shm"}, {"mountPath", "/dev/shm"}}}},
		{"readinessProbe", []kv{{"httpGet", []kv{{"path", "/health"}, {"port", "vllm"}}}, {"initialDelaySeconds", 60}, {"periodSeconds", 10}}},
	}
	if env := useV1Env(p); env != nil {
		container = append(container, kv{"env", env})
	}
	return marshal([]kv{
		{"multinode", false},
		{"modelArtifacts", []kv{{"uri", "hf://" + s.Model}, {"name", s.Model}, {"size", llmdModelSize(s.Model)}, {"authSecretName", llmdTokenSecret},
			{"labels", llmdLabels(s)}}},
		{"routing", []kv{{"servicePort", 8000}, {"proxy", []kv{{"enabled", false}, {"targetPort", 8000}}}}},
		{"accelerator", []kv{{"type", "nvidia"}}},
		{"decode", []kv{{"create", true}, {"replicas", p.Workers},
			{"nodeSelector", []kv{{"nvidia.com/gpu.product", gpuProduct(s.GPU)}}},
			{"parallelism", []kv{{"tensor", p.TP}, {"data", 1}}},
			{"containers", []any{container}},
			{"volumes", []any{[]kv{{"name", "shm"}, {"emptyDir", []kv{{"medium", "Memory"}, {"sizeLimit", "16Gi"}}}}}},
		}},
		{"prefill", []kv{{"create", false}}},
	})
}

// llmdInferencePool is the values of the Gateway API inference
// extension's inferencepool chart: llm-d's inference scheduler (its
// default plugins) picking among the modelservice's pods by their labels.
func llmdInferencePool(s Spec) ([]byte, error) {
	return marshal([]kv{
		{"inferenceExtension", []kv{{"replicas", 1},
			{"image", []kv{{"name", llmdSchedulerName}, {"hub", llmdSchedulerHub}, {"tag", llmdSchedulerTag}}},
			{"extProcPort", 9002}, {"pluginsConfigFile", "default-plugins.yaml"}}},
		{"inferencePool", []kv{{"targetPorts", []any{[]kv{{"number", 8000}}}}, {"modelServerType", "vllm"},
			{"modelServers", []kv{{"matchLabels", llmdLabels(s)}}}}},
	})
}

// llmdLabels are the labels the modelservice puts on its pods and the
// inference pool selects them by.
func llmdLabels(s Spec) []kv {
	return []kv{{"llm-d.ai/inference-serving", "true"}, {"llm-d.ai/model", s.name()}}
}

// llmdModelSize is the model volume to create: the weights with a fifth
// to spare, in whole GiB (at least 10).
func llmdModelSize(name string) string {
	gib := 10
	if m, err := model.LookupLLM(name); err == nil {
		gib = max(gib, int(1.2*m.StoredWeightBytes()/(1<<30))+1)
	}
	return strconv.Itoa(gib) + "Gi"
}

// llmdReadme is the README's section on the llm-d export: how to install
// it, and which router the prediction was priced with against what llm-d's
// scheduler does.
func llmdReadme(s Spec) string {
	var b strings.Builder
	b.WriteString("\n## llm-d\n\n")
	b.WriteString("`llm-d-modelservice.yaml` and `llm-d-inferencepool.yaml` are Helm values of llm-d's charts (the versions of llm-d's inference-scheduling guide): " +
		"the replicas as the modelservice's decode pool, with the engine flags of `serve.sh` and vLLM's image at the version priced, " +
		"and llm-d's inference scheduler in front. Given a Gateway (llm-d's `llm-d-infra` chart or your provider's) and an HTTPRoute to the InferencePool:\n\n```\n")
	b.WriteString("kubectl create secret generic " + llmdTokenSecret + " --from-literal=HF_TOKEN=hf_…\n")
	b.WriteString("helm repo add llm-d-modelservice " + LLMDModelServiceRepo + "\n")
	b.WriteString("helm install " + s.name() + "-pool " + LLMDInferencePoolChart + " --version " + LLMDInferencePoolVer + " -f llm-d-inferencepool.yaml\n")
	b.WriteString("helm install " + s.name() + "-ms " + LLMDModelServiceChart + " --version " + LLMDModelServiceVersion + " -f llm-d-modelservice.yaml\n```\n\n")
	b.WriteString("llm-d's scheduler picks each request's replica by the replicas' queues, KV-cache use and prefix-cache hits, a load-aware choice capsim does not simulate; " +
		"this prediction was priced with the " + routerName(s.Router) + " router. capsim's nearest router to it is least-outstanding (`--router least-outstanding` prices that).\n")
	return b.String()
}
