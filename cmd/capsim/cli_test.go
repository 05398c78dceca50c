package main

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/capsim/capsim/internal/catalogtest"
	"github.com/capsim/capsim/model"
)

// TestHelpEveryCommand: one help style — usage line, description,
// examples, flags — for every command, from `capsim help CMD` and --help.
func TestHelpEveryCommand(t *testing.T) {
	t.Parallel()
	for _, name := range commandNames() {
		var out, errb bytes.Buffer
		if err := run([]string{"help", name}, &out, &errb); err != nil {
			t.Fatalf("help %s: %v", name, err)
		}
		h := out.String()
		if !strings.HasPrefix(h, "usage: capsim "+name) || !strings.Contains(h, "\nexamples:\n  ") {
			t.Errorf("help %s lacks the usage line or examples:\n%s", name, h)
		}
		c := commands()[name]
		if c.run != nil && !strings.Contains(h, "\nflags:\n") {
			t.Errorf("help %s lists no flags", name)
		}
		if c.run == nil {
			continue
		}
		var out2, errb2 bytes.Buffer // help asked for is output: stdout, and no error
		if err := run([]string{name, "--help"}, &out2, &errb2); err != nil || out2.String() != h || errb2.Len() != 0 {
			t.Errorf("%s --help differs from capsim help %s (err %v, stderr %q)", name, name, err, errb2.String())
		}
	}
	var out, errb bytes.Buffer
	if err := run([]string{"help"}, &out, &errb); err != nil || !strings.Contains(out.String(), "commands:") {
		t.Errorf("capsim help: %v\n%s", err, out.String())
	}
}

func TestVersionAndSuggestions(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errb bytes.Buffer
		if err := run(args, &out, &errb); err != nil || !strings.HasPrefix(out.String(), "capsim ") {
			t.Errorf("%v: %v %q", args, err, out.String())
		}
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"predcit"}, `unknown command "predcit"; did you mean "predict"?`},
		{[]string{"deploy"}, `unknown command "deploy" (capsim help lists the commands)`},
		{[]string{"fit", "--frm", "x.json"}, "unknown flag: --frm; did you mean --from?"},
		{[]string{"data", "--fiel", "x.json"}, "unknown flag: --fiel; did you mean --file?"},
		{[]string{"help", "pln"}, `unknown command "pln"; did you mean "plan"?`},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		err := run(tt.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.want)
		}
	}
}

// TestFormatCSV: --format csv writes the table's rows as CSV records.
func TestFormatCSV(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if err := run([]string{"data", "--source", "004", "--format", "csv"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v", err)
	}
	if len(rows) < 2 || rows[0][0] != "ID" || rows[1][1] != "H20" || len(rows[1]) != len(rows[0]) {
		t.Errorf("rows %v", rows[:min(3, len(rows))])
	}
	out.Reset()
	if err := run([]string{"predict", "--gpu", "H20", "--model", "Qwen/Qwen3-32B", "--replicas", "1xTP4", "--isl", "1000", "--osl", "200",
		"--concurrency", "1,8", "--format", "csv"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	// predict's CSV is tidy: one header, one row a point, numbers (six significant digits), not the table's text.
	rows, err = csv.NewReader(&out).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][7] != "load" || rows[1][7] != "c=1" || rows[1][8] != "1" || rows[0][13] != model.RequestThroughput {
		t.Fatalf("predict csv: %v %v", err, rows)
	}
	if v, err := strconv.ParseFloat(rows[2][16], 64); err != nil || rows[0][16] != model.MeanTTFT || !(v > 0) {
		t.Errorf("predict csv mean TTFT %q: %v", rows[2][16], err)
	}
	// plan's is one row a recommendation, each SLO's value beside its limit.
	out.Reset()
	if err := run([]string{"plan", "--model", "Qwen3-32B", "--isl", "1000", "--osl", "200", "--rate", "1", "--slo", "ttft_p99=2000ms",
		"--gpu", "H20", "--max-gpus", "8", "--top", "2", "--format", "csv", "--quiet"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	rows, err = csv.NewReader(&out).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][8] != "ttft_p99_ms" || rows[0][9] != "ttft_p99_limit_ms" || rows[1][0] != "1" || rows[1][9] != "2000" {
		t.Errorf("plan csv: %v %v", err, rows)
	}
}

// TestQuiet silences progress and keeps the result.
func TestQuiet(t *testing.T) {
	t.Parallel()
	files := writeVLLMSweep(t, "H100")
	var out, errb bytes.Buffer
	if err := run([]string{"fit", "--quick", "--from", strings.Join(files, ",")}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "fit: H100-SXM / Qwen3-8B / vllm-0.10.1: linear: 1/1 (100%)") {
		t.Errorf("no progress line:\n%s", errb.String())
	}
	out.Reset()
	errb.Reset()
	if err := run([]string{"fit", "--quick", "--quiet", "--from", strings.Join(files, ",")}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if errb.Len() != 0 || !strings.Contains(out.String(), "In-sample") {
		t.Errorf("--quiet: stderr %q, stdout %q", errb.String(), out.String())
	}
}

// TestDataStatesTheSystem: with --file, --gpu, --model, --engine and
// --topology state (or override) what the files measured.
func TestDataStatesTheSystem(t *testing.T) {
	t.Parallel()
	files := writeVLLMSweep(t, "L40S")
	var out, errb bytes.Buffer
	if err := run([]string{"data", "--format", "csv", "--file", files[0], "--gpu", "H100", "--engine", "vllm-0.11.0", "--topology", "2xTP2"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %v", err, rows)
	}
	// ID GPU GPUS MODEL ENGINE TOPOLOGY …
	if got := strings.Join(rows[1][1:6], " "); got != "H100-SXM 4 Qwen3-8B vllm-0.11.0 2xTP2" {
		t.Errorf("system %q, want H100-SXM 4 Qwen3-8B vllm-0.11.0 2xTP2", got)
	}
	err = run([]string{"data", "--file", files[0], "--topology", "2xTP"}, &out, &errb)
	if err == nil || !strings.HasPrefix(err.Error(), "data: --topology: ") {
		t.Errorf("bad --topology: %v", err)
	}
}

// --router replaces the router the calibration chose: seed 004's vLLM
// 4xTP4 group chose random routing, which a round-robin balancer evens out.
func TestPredictRouter(t *testing.T) {
	t.Parallel()
	args := []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "4xTP4", "--engine", "vllm-0.9.0.1",
		"--isl", "1000", "--osl", "200", "--concurrency", "64", "--no-band", "--num-prompts", "2000", "--format", "json"}
	p99 := map[string]float64{}
	for _, router := range []string{"", "round-robin"} {
		var out bytes.Buffer
		a := args
		if router != "" {
			a = append(append([]string{}, args...), "--router", router)
		}
		if err := run(a, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var p struct {
			Router     string `json:"router"`
			RouterFrom string `json:"router_from"`
			Points     []struct {
				Metrics map[string]float64 `json:"metrics"`
			} `json:"points"`
		}
		if err := json.Unmarshal(out.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"": "random", "round-robin": "round-robin"}[router]
		if p.Router != want || (router != "") != strings.HasPrefix(p.RouterFrom, "asked for") {
			t.Errorf("--router %q: router %q from %q, want %q", router, p.Router, p.RouterFrom, want)
		}
		p99[p.Router] = p.Points[0].Metrics["p99_tpot_ms"]
	}
	// One replica: nothing to balance, and the output says so.
	var errb bytes.Buffer
	one := []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "1000", "--osl", "200",
		"--concurrency", "4", "--no-band", "--num-prompts", "200", "--router", "random"}
	if err := run(one, io.Discard, &errb); err != nil || !strings.Contains(errb.String(), "one worker behind its router: it changes nothing") {
		t.Errorf("--router on one replica: err %v, stderr %q", err, errb.String())
	}
	if !(p99["round-robin"] < p99["random"]) {
		t.Errorf("p99 TPOT %.1f ms round-robin, %.1f ms random: a balanced router should have the shorter tail", p99["round-robin"], p99["random"])
	}
}

// A deployment without a calibration of its own is priced with its
// engine's frontend prior, never another deployment's host, and says so on
// its frontend line and in its JSON; a calibrated deployment's own does not.
func TestPredictSaysFrontendPrior(t *testing.T) {
	t.Parallel()
	base := []string{"predict", "--model", "Llama-3.1-8B-Instruct", "--replicas", "1xTP1", "--isl", "1024", "--osl", "256", "--concurrency", "1", "--no-band"}
	for _, tt := range []struct {
		args []string
		want string // in the frontend line; "" for none
	}{
		{[]string{"--gpu", "H100-SXM", "--engine", "sglang-0.5.5"}, "the sglang-0.5.5 engine's frontend prior"},
		{[]string{"--gpu", "L40S", "--engine", "vllm-0.9.0"}, ""},
	} {
		var out, errb bytes.Buffer
		if err := run(append(append([]string{}, base...), tt.args...), &out, &errb); err != nil {
			t.Fatal(err)
		}
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "frontend:") {
				line = l
			}
		}
		if (tt.want == "") != (line == "") || !strings.Contains(line, tt.want) {
			t.Errorf("%v: frontend line %q, want one containing %q", tt.args, line, tt.want)
		}
		out.Reset()
		if err := run(append(append(append([]string{}, base...), tt.args...), "--format", "json"), &out, &errb); err != nil {
			t.Fatal(err)
		}
		var pred struct {
			Frontend string `json:"frontend"`
		}
		if err := json.Unmarshal(out.Bytes(), &pred); err != nil || (pred.Frontend == "") != (tt.want == "") || !strings.Contains(pred.Frontend, tt.want) {
			t.Errorf("%v: JSON frontend %q (%v), want one containing %q", tt.args, pred.Frontend, err, tt.want)
		}
	}
}

// --frontend-ms replaces the engine's frontend prior: the frontend line
// and the JSON say it was stated, the band leaves it out, and a smaller
// one lowers the light-load TTFT by the difference. A disaggregated
// deployment or a latency out of range is refused with one line.
func TestPredictStatedFrontend(t *testing.T) {
	t.Parallel()
	base := []string{"predict", "--gpu", "H100-SXM", "--model", "Llama-3.1-8B-Instruct", "--replicas", "1xTP1", "--isl", "1024", "--osl", "256", "--concurrency", "1"}
	ttft := map[string]float64{}
	for _, fe := range []string{"", "2", "12", "0", "3.97"} {
		args := append([]string{}, base...)
		if fe != "" {
			args = append(args, "--frontend-ms", fe)
		}
		var out, errb bytes.Buffer
		if err := run(append(args, "--format", "json"), &out, &errb); err != nil {
			t.Fatal(err)
		}
		var p struct {
			Frontend       string   `json:"frontend"`
			FrontendStated *float64 `json:"frontend_stated_ms"`
			Points         []struct {
				Metrics map[string]float64 `json:"metrics"`
			} `json:"points"`
		}
		if err := json.Unmarshal(out.Bytes(), &p); err != nil || len(p.Points) != 1 {
			t.Fatalf("--frontend-ms %q: %v, %d points", fe, err, len(p.Points))
		}
		if (p.FrontendStated != nil) != (fe != "") || (fe != "") != strings.Contains(p.Frontend, "stated (no band)") ||
			(p.FrontendStated != nil && fmt.Sprint(*p.FrontendStated) != fe) {
			t.Errorf("--frontend-ms %q: frontend %q, stated %v", fe, p.Frontend, p.FrontendStated)
		}
		ttft[fe] = p.Points[0].Metrics[model.MeanTTFT]
		if fe == "2" {
			out.Reset()
			if err := run(args, &out, &errb); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "frontend:    2.0 ms a request, stated (no band)") || !strings.Contains(out.String(), "(costs ±1σ)") {
				t.Errorf("table: want the stated frontend line and a band of the costs alone:\n%s", out.String())
			}
		}
	}
	if d := ttft["2"] - ttft["0"]; math.Abs(d-2) > 0.5 {
		t.Errorf("mean TTFT at one client %.2f ms with 2 ms stated, %.2f ms with 0: want 2 ms apart", ttft["2"], ttft["0"])
	}
	if d := ttft["12"] - ttft["2"]; math.Abs(d-10) > 0.5 {
		t.Errorf("mean TTFT at one client %.2f ms with 12 ms stated, %.2f ms with 2 ms: want 10 ms apart", ttft["12"], ttft["2"])
	}
	if !(ttft["2"] < ttft[""]) {
		t.Errorf("mean TTFT %.1f ms with 2 ms stated, %.1f ms with the engine's prior: the prior is tens of ms", ttft["2"], ttft[""])
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--frontend-ms", "-3"}, "--frontend-ms must be 0 to 60000, got -3"},
		{[]string{"--frontend-ms", "NaN"}, "--frontend-ms must be 0 to 60000, got NaN"},
		{[]string{"--frontend-ms", "3", "--replicas", "", "--prefill", "1xTP1", "--decode", "1xTP1"},
			"--frontend-ms: calibrate: a stated frontend latency applies to aggregated deployments: a disaggregated deployment's frontend is priced with its KV transfer (its own fitted costs, or the engine's prior)"},
	} {
		err := run(append(append([]string{}, base...), tt.args...), io.Discard, io.Discard)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
}

// --dp-attention prices SGLang's data-parallel attention, says so in the
// engine settings, and is refused for another engine or a degree that
// does not divide the TP.
func TestPredictDPAttention(t *testing.T) {
	t.Parallel()
	base := []string{"predict", "--gpu", "H200", "--model", "DeepSeek-R1", "--replicas", "1xTP8", "--isl", "3200", "--osl", "800", "--concurrency", "128", "--no-band", "--format", "json"}
	var out, errb bytes.Buffer
	if err := run(append(append([]string{}, base...), "--engine", "sglang-0.5.5", "--dp-attention", "8"), &out, &errb); err != nil {
		t.Fatal(err)
	}
	var pred struct {
		Settings []struct {
			DPAttention int `json:"dp_attention"`
		} `json:"engine_settings"`
	}
	if err := json.Unmarshal(out.Bytes(), &pred); err != nil || len(pred.Settings) != 1 || pred.Settings[0].DPAttention != 8 {
		t.Errorf("engine settings %+v (%v), want dp_attention 8", pred.Settings, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "vllm-0.9", "--dp-attention", "8"}, "--dp-attention: calibrate: data-parallel attention is SGLang's (--enable-dp-attention); the engine is vllm-0.9.0.1"},
		{[]string{"--engine", "sglang-0.5.5", "--dp-attention", "3"}, "--dp-attention: calibrate: data-parallel attention over 3 groups does not divide a TP8 worker"},
		{[]string{"--engine", "sglang-0.5.5", "--dp-attention", "-1"}, "--dp-attention must be 1 or more, got -1"},
	} {
		err := run(append(append([]string{}, base...), tt.args...), &out, &errb)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
}

// A burst is replayed, and its row says how many requests it sent: its
// latencies grow with that number.
func TestPredictBurstLabel(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run([]string{"predict", "--gpu", "H20", "--replicas", "4xTP4", "--isl", "1000", "--osl", "100", "--rate", "inf", "--num-prompts", "50", "--no-band"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"benchmark replay (ramp-up and drain included), as every burst is", "burst of 50 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A multi-GPU prediction says what its collectives and its kernels' latency
// cost and where each comes from, in the table and in the JSON; an eager
// worker says its launches are in the engine's overhead.
func TestPredictSaysCollectivesAndKernels(t *testing.T) {
	t.Parallel()
	base := []string{"predict", "--gpu", "H100", "--model", "Qwen3-32B", "--replicas", "1xTP8", "--isl", "1024", "--osl", "256", "--concurrency", "1", "--no-band"}
	var out, errb bytes.Buffer
	if err := run(base, &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"collectives: aggregated 1xTP8: a small all-reduce over NVLink4 at TP8",
		"kernels:     aggregated 1xTP8: 2.42 ms a step: 321 GEMM and attention kernels × 4.5 µs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("predict output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(append(base, "--format", "json"), &out, &errb); err != nil {
		t.Fatal(err)
	}
	var pred struct {
		Derived []struct {
			Collectives string `json:"collectives"`
			Kernels     string `json:"kernels"`
		} `json:"derived"`
	}
	if err := json.Unmarshal(out.Bytes(), &pred); err != nil || len(pred.Derived) != 1 {
		t.Fatalf("JSON derived %+v (%v)", pred.Derived, err)
	}
	if d := pred.Derived[0]; !strings.Contains(d.Kernels, "measured on an H200") || !strings.Contains(d.Collectives, "interconnect catalog") {
		t.Errorf("JSON derivation %+v does not say where its kernel and collective prices come from", d)
	}
}

// --kv-link prices a disaggregated deployment's KV transfer on the link
// stated: a slower one lengthens a lone request's TTFT by what the path
// prices more, the transfer line names it, and a link the GPU does not
// have, an unknown one or an aggregated deployment is refused in one line.
func TestPredictKVLink(t *testing.T) {
	t.Parallel()
	base := []string{"predict", "--gpu", "H100-SXM", "--model", "Qwen3-32B", "--engine", "vllm-0.15.0", "--prefill", "1xTP2", "--decode", "1xTP2",
		"--isl", "4096", "--osl", "64", "--concurrency", "1", "--no-band"}
	ttft := map[string]float64{}
	for _, link := range []string{"", "NVLink4", "rdma400", "Ethernet"} {
		args := append([]string{}, base...)
		if link != "" {
			args = append(args, "--kv-link", link)
		}
		var out bytes.Buffer
		if err := run(append(args, "--format", "json"), &out, io.Discard); err != nil {
			t.Fatalf("--kv-link %q: %v", link, err)
		}
		var p struct {
			Transfer string `json:"transfer"`
			Points   []struct {
				Metrics map[string]float64 `json:"metrics"`
			} `json:"points"`
		}
		if err := json.Unmarshal(out.Bytes(), &p); err != nil || len(p.Points) != 1 {
			t.Fatalf("--kv-link %q: %v", link, err)
		}
		if want := cmp.Or(strings.ToUpper(link), "NVLINK4"); !strings.Contains(strings.ToUpper(p.Transfer), want) {
			t.Errorf("--kv-link %q: transfer %q, want it named", link, p.Transfer)
		}
		ttft[link] = p.Points[0].Metrics[model.MeanTTFT]
	}
	g := catalogtest.GPU(t, "H100-SXM")
	m := catalogtest.LLM(t, "Qwen3-32B")
	for _, link := range []string{"rdma400", "Ethernet"} {
		slow, _ := g.KVTransferPathOver(link)
		fast, _ := g.KVTransferPathOver("NVLink4")
		want := 4096 * 1000 * (slow.PerTokenS(m, 2) - fast.PerTokenS(m, 2))
		if d := ttft[link] - ttft["NVLink4"]; math.Abs(d-want) > 0.02*want+0.5 {
			t.Errorf("--kv-link %s: TTFT %.1f ms against %.1f over NVLink4: %.1f apart, the paths %.1f", link, ttft[link], ttft["NVLink4"], d, want)
		}
	}
	if ttft[""] != ttft["NVLink4"] {
		t.Errorf("4 GPUs fit one server: TTFT %.2f ms by default, %.2f over NVLink4", ttft[""], ttft["NVLink4"])
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--kv-link", "NVLink3"}, "--kv-link: NVLink3 is not H100-SXM's link (NVLink4 within a server; RDMA400, RDMA200 or Ethernet between servers)"},
		{[]string{"--kv-link", "ib"}, `--kv-link: unknown KV link "ib" (want NVLink4, RDMA400, RDMA200 or Ethernet)`},
		{[]string{"--kv-link", "RDMA400", "--prefill", "", "--decode", "", "--replicas", "1xTP2"}, "--kv-link: it applies to a disaggregated deployment: an aggregated one moves no KV"},
		{[]string{"--kv-link", "NVLink4", "--prefill", "5xTP2"}, "--kv-link: NVLink4 is within one server, and prefill 5xTP2 + decode 1xTP2 takes 12 GPUs (a server holds 8)"},
	} {
		err := run(append(append([]string{}, base...), tt.args...), io.Discard, io.Discard)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
}

// --enable-expert-parallel prices a mixture of experts' experts dealt
// whole to the worker's GPUs: the experts: line says so, the engine: line
// states the flag, a lone request's TPOT rises over the split experts',
// and a dense model refuses the flag in one line.
func TestPredictExpertParallel(t *testing.T) {
	t.Parallel()
	base := []string{"predict", "--gpu", "H100", "--model", "Qwen3-235B-A22B", "--engine", "vllm-0.11.0", "--replicas", "1xTP8",
		"--isl", "1024", "--osl", "64", "--concurrency", "1", "--no-band"}
	tpot := map[string]float64{}
	for _, flag := range []string{"--enable-expert-parallel", "--no-enable-expert-parallel"} {
		var out bytes.Buffer
		if err := run(append(append([]string{}, base...), flag), &out, io.Discard); err != nil {
			t.Fatalf("%s: %v", flag, err)
		}
		for _, want := range []string{"engine:      ", flag, "experts:     aggregated 1xTP8: 128 experts (8 a token)"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: output lacks %q:\n%s", flag, want, out.String())
			}
		}
		out.Reset()
		if err := run(append(append([]string{}, base...), flag, "--format", "csv"), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("%s: csv %v (%v)", flag, rows, err)
		}
		for i, h := range rows[0] {
			if h == "mean_tpot_ms" {
				tpot[flag], _ = strconv.ParseFloat(rows[1][i], 64)
			}
		}
	}
	if on, off := tpot["--enable-expert-parallel"], tpot["--no-enable-expert-parallel"]; !(on > 1.05*off) {
		t.Errorf("c=1 TPOT %.2f ms with expert parallelism, %.2f ms split: want the former over 5%% higher", on, off)
	}
	var errb bytes.Buffer
	err := run([]string{"predict", "--gpu", "H100", "--model", "Qwen3-32B", "--replicas", "1xTP8", "--isl", "1024", "--osl", "64", "--concurrency", "1", "--enable-expert-parallel"}, io.Discard, &errb)
	if err == nil || strings.Count(err.Error(), "\n") > 0 || !strings.Contains(err.Error(), "--enable-expert-parallel applies to a mixture of experts") {
		t.Errorf("a dense model with --enable-expert-parallel: %v", err)
	}
}
