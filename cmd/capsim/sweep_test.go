package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capsim/capsim/calibrate"
)

// writeVLLMSweep writes one `vllm bench serve --save-result` file per
// concurrency, named as vLLM names them, each with --metadata stating the
// GPU, tensor parallelism and vLLM version (gpu=... empty: not stated).
func writeVLLMSweep(t *testing.T, gpu string) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, c := range []int{1, 2, 4, 8, 16, 32} {
		ttft := 30 + 4*float64(c)
		tpot := 7 + 0.25*float64(c)
		e2e := ttft + 127*tpot
		rps := float64(c) / (e2e / 1000)
		meta := `"tensor_parallel_size": "1", "vllm_version": "0.10.1", `
		if gpu != "" {
			meta += fmt.Sprintf(`"gpu": %q, `, gpu)
		}
		body := fmt.Sprintf(`{"date": "20260101-12000%d", "endpoint_type": "vllm", "backend": "vllm", "label": null,
"model_id": "Qwen/Qwen3-8B", "tokenizer_id": "Qwen/Qwen3-8B", "num_prompts": %d, %s"request_rate": "inf", "burstiness": 1.0,
"max_concurrency": %d, "duration": %g, "completed": %d, "failed": 0, "total_input_tokens": %d, "total_output_tokens": %d,
"request_throughput": %g, "output_throughput": %g, "total_token_throughput": %g, "mean_ttft_ms": %g, "median_ttft_ms": %g,
"std_ttft_ms": 2.0, "p99_ttft_ms": %g, "mean_tpot_ms": %g, "median_tpot_ms": %g, "std_tpot_ms": 0.2, "p99_tpot_ms": %g,
"mean_itl_ms": %g, "median_itl_ms": %g, "std_itl_ms": 1.0, "p99_itl_ms": %g, "latencies": [%g, %g]}`,
			i, 10*c+100, meta, c, float64(10*c+100)/rps, 10*c+100, 1024*(10*c+100), 128*(10*c+100), rps, 128*rps, 1152*rps,
			ttft, ttft, 1.5*ttft, tpot, tpot, 1.2*tpot, tpot, tpot, 1.5*tpot, e2e/1000, e2e/1000)
		name := filepath.Join(dir, fmt.Sprintf("vllm-infqps-concurrency%d-Qwen3-8B-20260101-12000%d.json", c, i))
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	return files
}

// TestSixFileSweepIsOneSeries: six vLLM --save-result files of one sweep,
// with --metadata and no sidecars, fit as one series of six points.
func TestSixFileSweepIsOneSeries(t *testing.T) {
	t.Parallel()
	files := writeVLLMSweep(t, "H100")
	var out, errb bytes.Buffer
	args := []string{"fit", "--format", "json", "--quick", "--from", strings.Join(files, ",")}
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("fit: %v\n%s", err, errb.String())
	}
	var rep calibrate.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Series) != 1 || rep.Series[0].Points != 6 || rep.Series[0].GPU != "H100-SXM" || rep.Series[0].Engine != "vllm-0.10.1" {
		t.Fatalf("series %+v, want one H100-SXM vllm-0.10.1 series of 6 points", rep.Series)
	}
}

// TestFitAsksForTheGPU: files that name no GPU are not fitted on an
// assumed one; --gpu states it and --assume-gpu allows the search.
func TestFitAsksForTheGPU(t *testing.T) {
	t.Parallel()
	files := writeVLLMSweep(t, "")
	from := strings.Join(files, ",")
	var out, errb bytes.Buffer
	err := run([]string{"fit", "--quick", "--from", from}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "do not name the GPU (--gpu, e.g. --gpu H100)") || !strings.Contains(err.Error(), "--assume-gpu") {
		t.Fatalf("err = %v, want a request for --gpu", err)
	}
	for _, extra := range [][]string{{"--gpu", "H100"}, {"--assume-gpu"}} {
		out.Reset()
		if err := run(append([]string{"fit", "--quick", "--format", "json", "--from", from}, extra...), &out, &errb); err != nil {
			t.Errorf("%v: %v", extra, err)
		}
	}
	if err := run([]string{"fit", "--quick", "--gpu", "H100"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "apply to --from files") {
		t.Errorf("--gpu without --from: err = %v", err)
	}
}
