package results

import (
	"maps"
	"testing"
)

// capsim bench's capsim_dataset names the dataset whose lengths the
// requests took: it is read into the DatasetSetting, which is how a
// record's workload learns its lengths (series.Workloads); null or absent
// means fixed lengths, and --metadata stating another dataset is an error.
func TestVLLMJSONCapsimDataset(t *testing.T) {
	const head = `{"backend": "openai", "model_id": "m", "completed": 4, "request_throughput": 1, "total_input_tokens": 800, "total_output_tokens": 400`
	for _, c := range []struct {
		name, kv string
		want     map[string]string // settings; nil for none
		err      string
	}{
		{"sharegpt", `"capsim_dataset": "sharegpt"`, map[string]string{"dataset": "sharegpt"}, ""},
		{"null", `"capsim_dataset": null`, nil, ""},
		{"absent", `"capsim_isl": 200`, nil, ""},
		{"empty", `"capsim_dataset": ""`, nil, ""},
		{"metadata agrees", `"dataset": "ShareGPT", "capsim_dataset": "sharegpt"`, map[string]string{"dataset": "sharegpt"}, ""},
		{"metadata only", `"dataset": "sharegpt"`, map[string]string{"dataset": "sharegpt"}, ""},
		{"unknown kept", `"capsim_dataset": "sonnet", "block-size": "16"`, map[string]string{"dataset": "sonnet", "block-size": "16"}, ""},
		{"not a string", `"capsim_dataset": 3`, nil, `results: x.json:1: field "capsim_dataset": want a string, got a number`},
		{"metadata disagrees", `"dataset": "random", "capsim_dataset": "sharegpt"`, nil,
			`results: x.json:1: field "capsim_dataset": names dataset "sharegpt", but the setting dataset names "random"`},
		{"metadata names one where bench sent fixed lengths", `"dataset": "sharegpt", "capsim_dataset": null`, nil,
			`results: x.json:1: field "capsim_dataset": is null (capsim bench sent fixed lengths), but the setting dataset names "sharegpt"`},
	} {
		recs, err := ParseVLLMJSON("x.json", []byte(head+", "+c.kv+"}"))
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		r := recs[0]
		if !maps.Equal(r.System.Settings, c.want) {
			t.Errorf("%s: settings %v, want %v", c.name, r.System.Settings, c.want)
		}
		if _, ok := r.Metrics["capsim_dataset"]; ok || r.Workload.ISL != 200 || r.Workload.OSL != 100 {
			t.Errorf("%s: metrics %v, ISL %v OSL %v: want no capsim_dataset metric and the measured means 200 and 100", c.name, r.Metrics, r.Workload.ISL, r.Workload.OSL)
		}
	}
}

// capsim bench at fixed lengths asked every request for max_tokens
// capsim_osl with ignore_eos: that is the record's output cap, which
// vLLM's own files call output_len. Not so with a dataset, whose outputs
// are dealt around capsim_osl, nor where the file states output_len.
func TestVLLMJSONCapsimOSLIsTheCap(t *testing.T) {
	const head = `{"backend": "openai", "model_id": "m", "completed": 4, "request_throughput": 1, "total_input_tokens": 800, "total_output_tokens": 400, "capsim_osl": 100`
	for _, c := range []struct {
		name, kv string
		want     int
	}{
		{"fixed lengths", `"capsim_dataset": null`, 100},
		{"before capsim_dataset", `"capsim_isl": 200`, 100},
		{"a dataset", `"capsim_dataset": "sharegpt"`, 0},
		{"a dataset in the metadata", `"dataset": "sharegpt"`, 0},
		{"a dataset in the metadata, capitalised", `"Dataset": "sharegpt"`, 0},
		{"output_len stated", `"output_len": 120`, 120},
	} {
		recs, err := ParseVLLMJSON("x.json", []byte(head+", "+c.kv+"}"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := recs[0].Workload.OSLMax; got != c.want {
			t.Errorf("%s: output cap %d, want %d", c.name, got, c.want)
		}
	}
}
