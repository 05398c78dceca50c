package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// planArgs is a small search on the embedded H20 calibration.
var planArgs = []string{"plan", "--model", "Qwen3-32B", "--isl", "3000", "--osl", "150", "--rate", "4",
	"--slo", "ttft_p99=2500ms,tpot_p99=60ms", "--gpu", "H20", "--max-gpus", "32", "--top", "3"}

func TestPlanTable(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if err := run(planArgs, &out, &errb); err != nil {
		t.Fatalf("plan: %v\nstderr: %s", err, errb.String())
	}
	for _, want := range []string{"Qwen3-32B, ISL 3000 / OSL 150 at rate 4 req/s", "rank", "ttft_p99", "tpot_p99",
		"headroom", "bottleneck", "Pareto frontier", "1. "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "candidates") {
		t.Errorf("no progress on stderr: %q", errb.String())
	}
}

func TestPlanJSON(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	args := append(append([]string(nil), planArgs...), "--format", "json")
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("plan: %v\nstderr: %s", err, errb.String())
	}
	var res struct {
		Model string `json:"model"`
		Load  struct {
			RequestRate json.Number `json:"request_rate"`
		} `json:"load"`
		Recommendations []struct {
			Rank      int                `json:"rank"`
			GPU       string             `json:"gpu"`
			Topology  string             `json:"topology"`
			GPUs      int                `json:"gpus"`
			Metrics   map[string]float64 `json:"metrics"`
			SLOValues []struct {
				SLO   string  `json:"slo"`
				Limit float64 `json:"limit_ms"`
				Value float64 `json:"value_ms"`
				Met   bool    `json:"met"`
			} `json:"slo_values"`
			Headroom struct {
				RequestRate float64 `json:"request_rate"`
				Ratio       float64 `json:"ratio"`
			} `json:"headroom"`
			Bottleneck struct {
				Resource string `json:"resource"`
			} `json:"bottleneck"`
			Costs string `json:"costs"`
		} `json:"recommendations"`
		Pareto []struct {
			OutputPerGPU float64 `json:"output_throughput_per_gpu"`
			PerUser      float64 `json:"output_tokens_per_user"`
		} `json:"pareto"`
		Search struct {
			Candidates int `json:"candidates"`
		} `json:"search"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out.String())
	}
	if res.Model != "Qwen/Qwen3-32B" || res.Load.RequestRate != "4" || res.Search.Candidates == 0 {
		t.Errorf("header: model %q rate %q candidates %d", res.Model, res.Load.RequestRate, res.Search.Candidates)
	}
	if len(res.Recommendations) == 0 || len(res.Pareto) == 0 {
		t.Fatalf("%d recommendations, %d frontier points", len(res.Recommendations), len(res.Pareto))
	}
	for _, r := range res.Recommendations {
		if r.GPU != "H20" || r.GPUs > 32 || r.Headroom.Ratio < 1 || r.Bottleneck.Resource == "" || r.Costs == "" {
			t.Errorf("recommendation %+v", r)
		}
		if len(r.SLOValues) != 2 {
			t.Errorf("%s: %d SLO values, want 2", r.Topology, len(r.SLOValues))
		}
		for _, v := range r.SLOValues {
			if !v.Met || v.Value > v.Limit {
				t.Errorf("%s: %s = %v ms over %v ms", r.Topology, v.SLO, v.Value, v.Limit)
			}
		}
		if r.Metrics["p99_ttft_ms"] > 2500 || r.Metrics["p99_tpot_ms"] > 60 {
			t.Errorf("%s: metrics %v miss the SLOs", r.Topology, r.Metrics)
		}
	}
}

func TestPlanPlot(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pareto.png")
	var out, errb bytes.Buffer
	if err := run(append(append([]string(nil), planArgs...), "--plot", path), &out, &errb); err != nil {
		t.Fatalf("plan: %v\nstderr: %s", err, errb.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("%s is not a PNG", path)
	}
}

func TestPlanErrors(t *testing.T) {
	t.Parallel()
	base := map[string]string{"--model": "Qwen3-32B", "--isl": "3000", "--osl": "150", "--rate": "4",
		"--slo": "ttft_p99=2000ms", "--gpu": "H20", "--max-gpus": "16"}
	tests := []struct {
		name string
		set  map[string]string
		want string
	}{
		{"malformed SLO value", map[string]string{"--slo": "ttft_p99=fast"}, `"fast" is not a duration`},
		{"unknown SLO metric", map[string]string{"--slo": "speed_p99=2s"}, `unknown latency metric "speed"`},
		{"unknown SLO statistic", map[string]string{"--slo": "ttft_p42=2s"}, `unknown statistic "p42"`},
		{"SLO without value", map[string]string{"--slo": "ttft_p99"}, "want METRIC_STAT=VALUE"},
		{"unknown GPU", map[string]string{"--gpu": "H20,Z9000"}, `unknown GPU "Z9000"`},
		{"max GPUs too small", map[string]string{"--gpu": "L40S", "--max-gpus": "1"}, "a limit of 1 GPUs is too small for Qwen3-32B: the smallest deployment that fits is 1xTP2 on L40S"},
		{"unknown model", map[string]string{"--model": "GPT-9"}, `unknown model "GPT-9"`},
		{"bad cost", map[string]string{"--gpu-cost": "H20=cheap"}, `--gpu-cost "H20=cheap"`},
		{"cost of unknown GPU", map[string]string{"--gpu-cost": "Z9000=1"}, `unknown GPU "Z9000"`},
		{"no load", map[string]string{"--rate": ""}, "give the target load"},
		{"zero rate", map[string]string{"--rate": "0"}, "not a positive number"},
		{"rate list", map[string]string{"--rate": "2,4"}, "one target load"},
		{"burst", map[string]string{"--rate": "inf"}, "not a load to size for"},
		{"no SLO", map[string]string{"--slo": ""}, "--slo is required"},
		// plan.Options.Validate's typed errors, each field called by its flag.
		{"zero max GPUs", map[string]string{"--max-gpus": "0"}, "plan: --max-gpus must be positive, got 0"},
		{"zero top", map[string]string{"--top": "0"}, "plan: --top must be from 1 to 100, got 0"},
		{"zero TP", map[string]string{"--tp": "0,2"}, "plan: --tp: 0 is not a positive integer"},
		{"zero confidence", map[string]string{"--confidence": "0"}, "plan: --confidence must be between 0 and 1 (exclusive), got 0"},
		{"zero ISL", map[string]string{"--isl": "0"}, "plan: --isl and --osl are required and must be positive"},
		{"cost without price", map[string]string{"--gpu-cost": "H20"}, `plan: --gpu-cost "H20": want GPU=PRICE`},
		{"no load at all", map[string]string{"--rate": ""}, "plan: give the target load: --rate R (req/s) or --concurrency N"},
		{"bad mode", map[string]string{"--mode": "split"}, "--mode must be"},
		{"prefix hit rate 1", map[string]string{"--prefix-hit-rate": "1"}, "plan: --prefix-hit-rate must be a fraction in [0, 1), got 1"},
		{"prefix hit rate not a number", map[string]string{"--prefix-hit-rate": "half"}, `--prefix-hit-rate: "half" is not a number`},
		{"unknown dataset", map[string]string{"--dataset": "sonnet"}, `--dataset: unknown dataset "sonnet" (known: sharegpt)`},
		{"unknown router", map[string]string{"--router": "sticky"}, `--router: unknown router "sticky" (want round-robin, least-outstanding, random or prefix-aware)`},
		{"bad format", map[string]string{"--format": "xml"}, "--format must be table, json or csv"},
		{"negative frontend", map[string]string{"--frontend-ms": "-1"}, "plan: --frontend-ms must be 0 to 60000, got -1"},
		{"frontend not a number", map[string]string{"--frontend-ms": "fast"}, `--frontend-ms: "fast" is not a number`},
		{"frontend on a disaggregated search", map[string]string{"--frontend-ms": "5", "--mode": "disaggregated"},
			"--frontend-ms: plan: a stated frontend latency applies to aggregated deployments, and the search is of disaggregated ones only"},
		{"impossible TTFT", map[string]string{"--slo": "ttft_p99=50ms"}, "no deployment can meet ttft_p99<=50ms: even a lone request takes at least"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"plan"}
			for k, v := range base {
				if nv, ok := tc.set[k]; ok {
					v = nv
				}
				if v != "" {
					args = append(args, k, v)
				}
			}
			for k, v := range tc.set {
				if _, ok := base[k]; !ok {
					args = append(args, k, v)
				}
			}
			var out, errb bytes.Buffer
			err := run(args, &out, &errb)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// --frontend-ms prices aggregated candidates with the stated frontend
// latency: the plan says so, each aggregated recommendation names it, and
// a disaggregated one keeps its fitted costs.
func TestPlanStatedFrontend(t *testing.T) {
	t.Parallel()
	base := []string{"plan", "--model", "Qwen3-32B", "--gpu", "H20", "--isl", "2500", "--osl", "100", "--rate", "2", "--slo", "ttft_p99=3000ms", "--top", "4", "--no-margin", "--frontend-ms", "5"}
	var out, errb bytes.Buffer
	if err := run(append(append([]string{}, base...), "--format", "json"), &out, &errb); err != nil {
		t.Fatal(err)
	}
	var res struct {
		FrontendMS      *float64 `json:"frontend_ms"`
		Recommendations []struct {
			Topology string `json:"topology"`
			Frontend string `json:"frontend"`
		} `json:"recommendations"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.FrontendMS == nil || *res.FrontendMS != 5 {
		t.Errorf("frontend_ms %v, want 5", res.FrontendMS)
	}
	kinds := map[bool]int{}
	for _, r := range res.Recommendations {
		disagg := strings.Contains(r.Topology, "prefill")
		kinds[disagg]++
		if stated := strings.HasPrefix(r.Frontend, "5.0 ms a request, stated"); stated == disagg {
			t.Errorf("%s: frontend %q; want the stated 5 ms on aggregated deployments only", r.Topology, r.Frontend)
		}
	}
	if kinds[false] == 0 || kinds[true] == 0 {
		t.Fatalf("%d aggregated and %d disaggregated recommendations; want both to check: %+v", kinds[false], kinds[true], res.Recommendations)
	}
	out.Reset()
	if err := run(base, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if want := "frontend: 5.0 ms a request outside the engine, stated, for aggregated deployments"; !strings.Contains(out.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, out.String())
	}
}

// An SGLang plan shows each deployment's data-parallel attention in its
// topology and engine line; --no-dp-attention-search keeps the calibrated
// attention only.
func TestPlanDPAttention(t *testing.T) {
	t.Parallel()
	args := []string{"plan", "--model", "DeepSeek-R1", "--gpu", "H200", "--engine", "sglang", "--isl", "3200", "--osl", "800",
		"--concurrency", "128", "--slo", "tpot_p99=200ms", "--mode", "aggregated", "--tp", "8", "--max-gpus", "8", "--num-prompts", "1000", "--quiet"}
	var out, errb bytes.Buffer
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("plan: %v\nstderr: %s", err, errb.String())
	}
	for _, want := range []string{"1xTP8 DP-attention 8", "--enable-dp-attention --dp 8", "searched 2 deployments"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(append(args, "--no-dp-attention-search"), &out, &errb); err != nil {
		t.Fatalf("plan --no-dp-attention-search: %v\nstderr: %s", err, errb.String())
	}
	if !strings.Contains(out.String(), "searched 1 deployments") {
		t.Errorf("--no-dp-attention-search searched other than one deployment:\n%s", out.String())
	}
}

// When --max-gpus cuts off a cheaper GPU type (three or more H20s at 1 an
// hour each meet the SLOs, against one H200 at 10), every format says the limit
// bound the search and what lies past it.
func TestPlanSaysLimitBound(t *testing.T) {
	args := []string{"plan", "--model", "Llama-3.1-8B", "--gpu", "H200,H20", "--gpu-cost", "H200=10,H20=1", "--isl", "512", "--osl", "128",
		"--rate", "20", "--slo", "ttft_p99=5s,tpot_p99=200ms", "--max-gpus", "2", "--tp", "1", "--top", "1", "--mode", "aggregated", "--no-margin", "--quiet"}
	for _, format := range []string{"table", "csv", "json"} {
		var out, errb bytes.Buffer
		if err := run(append(args, "--format", format), &out, &errb); err != nil {
			t.Fatalf("%s: %v\n%s", format, err, errb.String())
		}
		want := "the 2-GPU limit (--max-gpus) bound the search"
		if format == "json" {
			want = `"limits_bound": [`
		}
		if !strings.Contains(out.String(), want) || !regexp.MustCompile(`H20 [3-9]xTP1`).MatchString(out.String()) {
			t.Errorf("%s output does not say the limit bound the search:\n%s", format, out.String())
		}
	}
	// With room for the H20s, nothing past the limit is cheaper.
	var out, errb bytes.Buffer
	if err := run(append(args[:len(args)-1:len(args)-1], "--max-gpus", "64", "--quiet"), &out, &errb); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "bound the search") {
		t.Errorf("--max-gpus 64 still said to bind:\n%s", out.String())
	}
}

// --tp that leaves out a cheaper degree is said to bind the search: at TP 8
// only, Llama-3.1-70B takes 8 H200s where one TP2 replica meets the SLOs.
func TestPlanSaysTPBound(t *testing.T) {
	args := []string{"plan", "--model", "Llama-3.1-70B", "--gpu", "H200", "--isl", "512", "--osl", "128", "--rate", "1",
		"--slo", "ttft_p99=10s,tpot_p99=500ms", "--tp", "8", "--max-gpus", "8", "--top", "1", "--mode", "aggregated", "--no-margin", "--quiet"}
	var out, errb bytes.Buffer
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if want := "limit: --tp bound the search"; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "H200 1xTP2 on 2 GPUs") {
		t.Errorf("the plan does not say %q and what lies past it:\n%s", want, out.String())
	}
}
