package results

import (
	"maps"
	"slices"
	"strings"

	"github.com/capsim/capsim/model"
)

// Source says where a record came from, precisely enough to find the row again.
type Source struct {
	File    string `json:"file"`              // path or embedded fixture name
	Section string `json:"section,omitempty"` // heading, table or block the row sits in
	Line    int    `json:"line"`              // 1-based line of the row or object
	Format  string `json:"format"`            // "vllm-json", "vllm-text", "markdown", "html"
	// Row is the row label of a table row that has one (e.g. a GPU preset name).
	Row string `json:"row,omitempty"`
	// Column is the column group when one table row holds several measured
	// points (e.g. "Pipeline" and "Tensor" values side by side).
	Column string `json:"column,omitempty"`
}

// System is the deployment that was measured.
type System struct {
	GPU      string         `json:"gpu"`       // catalog name, e.g. "H20", "L40S"; "" when the source does not say
	GPUCount int            `json:"gpu_count"` // GPUs in the whole deployment
	Model    string         `json:"model"`     // Hugging Face id, e.g. "Qwen/Qwen3-32B"
	Engine   string         `json:"engine"`    // engine label with version, e.g. "vllm-0.9.0.1", "dynamo-0.3.0"
	Topology model.Topology `json:"topology"`
	// Settings are engine settings the source states (max-num-batched-tokens, block-size, …).
	Settings map[string]string `json:"settings,omitempty"`
}

// DatasetSetting is the System.Settings key that names the dataset a run's
// prompts came from (vLLM's --dataset-name, as --metadata dataset=sharegpt
// states it; capsim bench's capsim_dataset is read into it).
const DatasetSetting = "dataset"

// StatedDataset returns the settings' DatasetSetting, however spelled
// (case and spaces; the first spelling in key order when several), and
// its trimmed value; "" and "" when they state none.
func StatedDataset(settings map[string]string) (key, value string) {
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		if strings.EqualFold(strings.TrimSpace(k), DatasetSetting) {
			return k, strings.TrimSpace(settings[k])
		}
	}
	return "", ""
}

// Workload is what was offered to the deployment.
type Workload struct {
	ISL        float64    `json:"isl"`               // mean prompt tokens per request
	OSL        float64    `json:"osl"`               // mean generated tokens per completed request
	ISLMax     int        `json:"isl_max,omitempty"` // requested prompt length, when the source states it
	OSLMax     int        `json:"osl_max,omitempty"` // requested maximum output (max_tokens)
	NumPrompts int        `json:"num_prompts,omitempty"`
	Load       model.Load `json:"load"` // its request_rate as vLLM writes it: a number or "inf"
	// Sharing is how the run's prompts shared prefixes, when the source
	// states it (inference-perf's shared_prefix data).
	Sharing model.Sharing `json:"sharing,omitzero"`
}

// Record is one measured load point, normalized. A metric the source does
// not give is absent from Metrics, never zero.
type Record struct {
	ID        string             `json:"id"`
	Source    Source             `json:"source"`
	System    System             `json:"system"`
	Workload  Workload           `json:"workload"`
	Metrics   map[string]float64 `json:"metrics"`
	Completed int                `json:"completed,omitempty"`
	Errors    int                `json:"errors"`
	// Partial marks a load point interrupted before every request finished
	// (capsim bench's capsim_partial): its metrics cover the finished ones.
	Partial   bool     `json:"partial,omitempty"`
	Anomalies []string `json:"anomalies,omitempty"`

	// dpReplicas is the file's own data-parallel size (its key and value)
	// when it was read as replicas: a sidecar that turns on SGLang's DP
	// attention makes it an engine setting instead (Meta.Apply).
	dpReplicas [2]string
}

// Metric returns a metric and whether the source gave it.
func (r *Record) Metric(name string) (float64, bool) {
	v, ok := r.Metrics[name]
	return v, ok
}
