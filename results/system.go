package results

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
)

// systemKeys are the keys that state the measured system, in `vllm bench
// serve --metadata KEY=VALUE` and in CSV column headers, mapped to the
// System field they fill.
var systemKeys = map[string]string{
	"gpu": "gpu", "gpu_type": "gpu", "gpu_name": "gpu", "accelerator": "gpu", "hardware": "gpu",
	"gpu_count": "gpu_count", "num_gpus": "gpu_count", "gpus": "gpu_count",
	"model": "model", "model_name": "model",
	"engine": "engine", "engine_version": "engine_version", "vllm_version": "vllm_version", "version": "engine_version",
	"topology":             "topology",
	"tensor_parallel_size": "tp", "tp": "tp", "tp_size": "tp",
	"pipeline_parallel_size": "pp", "pp": "pp", "pp_size": "pp",
	"data_parallel_size": "replicas", "dp": "replicas", "replicas": "replicas", "num_replicas": "replicas",
}

var gpuCountRE = regexp.MustCompile(`^(\d+)\s*[x×]\s*(\D.*)$`)

// normKey lower-cases a key and turns spaces and dashes into underscores:
// "Tensor Parallel Size" and "tensor-parallel-size" → "tensor_parallel_size".
func normKey(k string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(k)))
}

// isSystemKey reports whether a --metadata key or CSV header states the system.
func isSystemKey(k string) bool { _, ok := systemKeys[normKey(k)]; return ok }

// applySystem fills r.System from key/value pairs that state it (GPU, GPU
// count, model, engine and its version, topology or its parallel sizes).
// Values override what the file's own fields said. A value that cannot be
// read is an error naming the key; line is where the pair was found.
func applySystem(name string, line int, r *Record, kv map[string]string) error {
	var tp, pp, replicas int
	var dpKey, dpValue string // the data-parallel size read as replicas
	replicasStated := false   // a replicas key beside it
	engineVersion := ""
	for k, v := range kv {
		v = strings.TrimSpace(v)
		what, ok := systemKeys[normKey(k)]
		if !ok || v == "" {
			continue
		}
		positive := func() (int, error) {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return 0, errorf(name, line, k, "want a positive integer, got %q", v)
			}
			return n, nil
		}
		var err error
		switch what {
		case "gpu":
			// "4xNVIDIA_L40S": a count and a GPU.
			if m := gpuCountRE.FindStringSubmatch(v); m != nil {
				n, _ := strconv.Atoi(m[1])
				if n > 0 && r.System.GPUCount == 0 {
					r.System.GPUCount = n
				}
				v = m[2]
			}
			r.System.GPU = catalogGPU(v)
		case "gpu_count":
			r.System.GPUCount, err = positive()
		case "model":
			r.System.Model = v
		case "engine":
			r.System.Engine = strings.ToLower(v)
		case "engine_version", "vllm_version":
			engineVersion = strings.TrimPrefix(strings.ToLower(v), "v")
			if what == "vllm_version" {
				r.System.Engine = "vllm"
			}
		case "topology":
			t, perr := model.ParseTopology(v)
			if perr != nil {
				return errorf(name, line, k, "%v", perr)
			}
			r.System.Topology = t
		case "tp":
			tp, err = positive()
		case "pp":
			pp, err = positive()
		case "replicas":
			if k := normKey(k); (k == "dp" || k == "data_parallel_size") && dpAttention(r.System.Settings, kv) {
				// SGLang's --dp beside --enable-dp-attention splits each
				// server's attention, not the servers: an engine setting.
				// A flag stated beside it (the same --metadata) is seen
				// here; one a sidecar adds, by Meta.Apply.
				if r.System.Settings == nil {
					r.System.Settings = map[string]string{}
				}
				r.System.Settings[k] = v
				continue
			}
			replicas, err = positive()
			if k := normKey(k); k == "dp" || k == "data_parallel_size" {
				dpKey, dpValue = k, v
			} else {
				replicasStated = true
			}
		}
		if err != nil {
			return err
		}
	}
	if engineVersion != "" {
		fam := r.System.Engine
		if i := strings.IndexByte(fam, '-'); i > 0 && strings.ContainsAny(fam[i:], "0123456789") {
			fam = fam[:i]
		}
		if fam == "" {
			fam = "vllm"
		}
		r.System.Engine = fam + "-" + engineVersion
	}
	t := &r.System.Topology
	if (tp > 0 || pp > 0 || replicas > 0) && t.Replicas.IsZero() && !t.Disaggregated() {
		pool := model.Pool{Count: max(replicas, 1), TP: max(tp, 1), PP: max(pp, 1)}
		*t = model.Aggregated(pool)
		if dpKey != "" {
			r.dpReplicas = [2]string{dpKey, dpValue}
			fam := engine.Family(r.System.Engine)
			if n, _ := strconv.Atoi(dpValue); n > 1 && !replicasStated && (fam == "sglang" || r.System.Engine == "") &&
				r.System.GPUCount > 0 && r.System.GPUCount == pool.TP*pool.PP {
				// The file's own GPU count leaves no room for dp servers
				// ("tp 8, dp 8, gpu_count 8"): its dp splits each server
				// (SGLang's DP attention, turned on here or by a sidecar),
				// an engine setting as above. Another engine's dp is its
				// servers, and the count a contradiction, reported below.
				t.Replicas.Count = 1
				if r.System.Settings == nil {
					r.System.Settings = map[string]string{}
				}
				r.System.Settings[dpKey] = dpValue
				r.dpReplicas = [2]string{}
			}
		}
	}
	if g := t.GPUs(); g > 0 {
		if r.System.GPUCount == 0 {
			r.System.GPUCount = g
		} else if r.System.GPUCount != g {
			return errorf(name, line, "", "gpu_count %d but the topology %s uses %d GPUs", r.System.GPUCount, t, g)
		}
	}
	return nil
}

// dpAttention reports whether any of the pairs turns on data-parallel attention.
func dpAttention(pairs ...map[string]string) bool {
	for _, kv := range pairs {
		if on, _ := DPAttentionSettings(kv, true); on {
			return true
		}
	}
	return false
}

// DPAttentionSettings reads SGLang's data-parallel attention settings from
// engine settings: whether --enable-dp-attention is on, and the --dp size
// (0 where unstated). Keys are matched as roleSwitch matches them, a
// prefill worker's only with withPrefill.
func DPAttentionSettings(settings map[string]string, withPrefill bool) (on bool, dp int) {
	return roleSwitch(settings, withPrefill, []string{"enable_dp_attention"}, []string{"dp", "dp_size", "data_parallel_size"})
}

// ExpertParallelSettings reads a mixture of experts' expert-parallel
// settings from engine settings: whether vLLM's --enable-expert-parallel
// (its -ep alias, a switch) or SGLang 0.4's --enable-ep-moe is on, and
// the degree SGLang's --ep-size (--ep) or TensorRT-LLM's --ep_size state
// (0 where unstated). A prefill worker's are not read: the decoding
// workers' layout prices the steps a run measures most.
func ExpertParallelSettings(settings map[string]string) (on bool, ep int) {
	return roleSwitch(settings, false, []string{"enable_expert_parallel", "enable_ep_moe"}, []string{"ep", "ep_size", "expert_parallel_size"})
}

// roleSwitch reads a switch (any of onKeys) and the size that goes with
// it (sizeKeys; a size key whose value is a switch's, true or false but
// not a number, is read as the switch: vLLM's -ep). Keys are matched as
// spelled in any case with dashes or underscores. A plain key is the
// server's and wins; without one, any role's own
// ("decode.enable-dp-attention") turns the switch on, a prefill worker's
// only with withPrefill, and the role keys' sizes are read in key order,
// the last winning, so the answer never depends on map order.
func roleSwitch(settings map[string]string, withPrefill bool, onKeys, sizeKeys []string) (on bool, size int) {
	var plainOn, plainSize *string
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		v := strings.TrimSpace(settings[k])
		key, plain := normKey(k), true
		if i := strings.IndexByte(key, '.'); i >= 0 {
			if key[:i] == "prefill" && !withPrefill {
				continue
			}
			key, plain = key[i+1:], false
		}
		_, notInt := strconv.Atoi(v)
		_, notBool := strconv.ParseBool(v)
		isSize := slices.Contains(sizeKeys, key)
		switch {
		case slices.Contains(onKeys, key) || (isSize && notInt != nil && notBool == nil):
			if plain {
				plainOn = &v
			} else if b, err := strconv.ParseBool(v); err == nil && b {
				on = true
			}
		case isSize:
			if plain {
				plainSize = &v
			} else if n, err := strconv.Atoi(v); err == nil {
				size = n
			}
		}
	}
	if plainOn != nil {
		b, err := strconv.ParseBool(*plainOn)
		on = err == nil && b
	}
	if plainSize != nil {
		if n, err := strconv.Atoi(*plainSize); err == nil {
			size = n
		}
	}
	return on, size
}

// systemSettings splits the system-stating pairs out of settings (in place)
// and returns them.
func systemSettings(settings map[string]string) map[string]string {
	var kv map[string]string
	for k, v := range settings {
		if isSystemKey(k) {
			if kv == nil {
				kv = map[string]string{}
			}
			kv[k] = v
			delete(settings, k)
		}
	}
	return kv
}
