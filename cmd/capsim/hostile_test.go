package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capsim/capsim/internal/inputfile"
)

// Hostile inputs through the CLI (issue 15): exact one-line errors, exit
// codes, redaction. Servers are httptest's, on 127.0.0.1; each command runs
// under the test's deadline.

// runBounded runs the CLI, failing the test if it has not returned a little
// before the test binary's deadline (or within two minutes).
func runBounded(t *testing.T, args []string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
	}
	defer cancel()
	var o, e bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(args, &o, &e) }()
	select {
	case err = <-done:
		return o.String(), e.String(), err
	case <-ctx.Done():
		t.Fatalf("capsim %s did not finish in time", strings.Join(args, " "))
		return "", "", nil
	}
}

func TestHostileCommands(t *testing.T) {
	dir := t.TempDir()
	prof, err := os.ReadFile("../../fixtures/default-profile.json")
	if err != nil {
		t.Fatal(err)
	}
	// A profile whose Dynamo transfer latency is 1e308 s hung predict.
	var doc map[string]any
	if err := json.Unmarshal(prof, &doc); err != nil {
		t.Fatal(err)
	}
	edited := false
	for _, g := range doc["groups"].([]any) {
		g := g.(map[string]any)
		if strings.HasPrefix(g["engine"].(string), "dynamo") {
			g["transfer"].(map[string]any)["latency_s"] = 1e308
			edited = true
		}
	}
	hung, err := json.Marshal(doc)
	if err != nil || !edited {
		t.Fatalf("editing the default profile: %v, %v", err, edited)
	}
	hungPath := filepath.Join(dir, "hung.json")
	if err := os.WriteFile(hungPath, hung, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"predict absurd rate", []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "1000", "--osl", "100", "--rate", "1e9"},
			"predict: calibrate: rate 1e+09 req/s needs 2e+10 prompts for a steady state (20 × the load), more than the 10000000 requests one simulation may run; give a smaller load or a prompt count (--num-prompts, at most 10000000)"},
		{"predict absurd prompts", []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "1000", "--osl", "100", "--concurrency", "1", "--num-prompts", "20000000"},
			"predict: calibrate: 20000000 prompts per run is more than the 10000000 requests one simulation may run (--num-prompts, at most 10000000)"},
		{"predict infinite burstiness", []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "1000", "--osl", "100", "--rate", "2", "--burstiness", "inf"},
			"--burstiness: burstiness must be a positive finite number, got +Inf"},
		{"predict zero isl", []string{"predict", "--gpu", "H20", "--replicas", "4xTP4", "--isl", "0", "--osl", "100"}, "--isl and --osl must be positive"},
		// predict.Options.Validate's typed errors, each field called by its flag.
		{"predict negative osl", []string{"predict", "--gpu", "H20", "--replicas", "4xTP4", "--isl", "10", "--osl", "-1"}, "--isl and --osl must be positive"},
		{"predict bad mode", []string{"predict", "--gpu", "H20", "--replicas", "4xTP4", "--mode", "fast"}, `--mode must be steady-state or benchmark-replay, got "fast"`},
		{"predict negative prompts", []string{"predict", "--gpu", "H20", "--replicas", "4xTP4", "--num-prompts", "-2"}, "--num-prompts must be positive"},
		{"predict absurd isl", []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "9223372036854775807", "--osl", "100", "--concurrency", "1"},
			"--isl 9223372036854775807 is more than 10000000 tokens, the longest prompt or output capsim models"},
		{"plan absurd osl", []string{"plan", "--model", "Qwen3-32B", "--isl", "3000", "--osl", "20000000", "--rate", "20", "--slo", "ttft_p99=2000ms"},
			"plan: --osl 20000000 is more than 10000000 tokens, the longest prompt or output capsim models"},
		{"bench absurd isl", []string{"bench", "--url", "http://127.0.0.1:1", "--model", "x", "--isl", "10000001", "--osl", "3", "--concurrency", "1"},
			"bench: --isl 10000001 is more than 10000000 tokens, the longest prompt or output capsim models"},
		{"predict tiny rate", []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "100", "--osl", "10", "--rate", "1e-300"},
			"--rate: 1e-300 req/s is below 1e-06, the slowest rate capsim simulates (one request every 11.6 days)"},
		{"predict tiny burstiness", []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "100", "--osl", "10", "--rate", "2", "--burstiness", "1e-5"},
			"--burstiness: burstiness 1e-05 is below 0.01: the gamma gaps underflow to zero and the arrivals become one burst"},
		{"predict absurd replicas", []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "100000xTP1", "--isl", "100", "--osl", "10", "--concurrency", "1"},
			`--replicas: topology "100000xTP1": 100000 workers are more than 65536`},
		{"plan absurd top", []string{"plan", "--model", "Qwen3-32B", "--isl", "3000", "--osl", "150", "--rate", "20", "--slo", "ttft_p99=2000ms", "--top", "1000"},
			"plan: --top must be from 1 to 100, got 1000"},
		{"plan absurd tp", []string{"plan", "--model", "Qwen3-32B", "--isl", "3000", "--osl", "150", "--rate", "20", "--slo", "ttft_p99=2000ms", "--tp", "1024"},
			"plan: TP 1024 needs more GPUs than the 64 a deployment may have (max GPUs)"},
		{"plan unusable tp", []string{"plan", "--model", "Qwen3-32B", "--isl", "3000", "--osl", "150", "--rate", "20", "--slo", "ttft_p99=2000ms", "--tp", "3,5"},
			"plan: model: Qwen3-32B cannot run at TP3: its 64 attention heads do not divide by 3 (valid up to 16: 1, 2, 4, 8, 16)"},
		{"predict isl alone", []string{"predict", "--gpu", "H20", "--replicas", "4xTP4", "--isl", "100"}, "give both --isl and --osl, or neither"},
		{"predict isl not a number", []string{"predict", "--gpu", "H20", "--replicas", "4xTP4", "--isl", "x", "--osl", "3"}, `--isl: "x" is not an integer`},
		{"bench concurrency not integers", []string{"bench", "--url", "http://127.0.0.1:1", "--model", "x", "--concurrency", "1,abc"}, `--concurrency: "1,abc" is not a comma-separated list of integers`},
		{"plan confidence not a number", []string{"plan", "--model", "Qwen3-32B", "--rate", "1", "--confidence", "high"}, `--confidence: "high" is not a number`},
		{"plan infinite burstiness", []string{"plan", "--model", "Qwen3-32B", "--isl", "3000", "--osl", "150", "--rate", "20", "--burstiness", "Inf", "--slo", "ttft_p99=2000ms"},
			"--burstiness: burstiness must be a positive finite number, got +Inf"},
		{"plan absurd max GPUs", []string{"plan", "--model", "Qwen3-32B", "--isl", "3000", "--osl", "150", "--rate", "20", "--slo", "ttft_p99=2000ms", "--max-gpus", "10000"},
			"plan: max GPUs 10000 is more than 512: the candidates grow with its square (512 GPUs over every catalog GPU take a minute or more and 2 to 4 GB) (--max-gpus)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runBounded(t, tc.args)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
	t.Run("predict hostile profile", func(t *testing.T) {
		_, _, err := runBounded(t, []string{"predict", "--profile", hungPath, "--gpu", "H20", "--model", "Qwen3-32B",
			"--prefill", "12xTP1", "--decode", "1xTP4", "--isl", "3000", "--osl", "150", "--concurrency", "1"})
		if err == nil || !strings.HasPrefix(err.Error(), hungPath+": calibrate: profile: group ") ||
			!strings.HasSuffix(err.Error(), "(dynamo-0.3.0): transfer.latency_s is 1e+308; want a number from 0 to 60") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestBenchAllFailedExitsNonZero: a load point where every request failed
// is an error (it printed 0.00 latencies and exited 0); latencies show as
// absent; the temporaries of a killed run are removed first.
func TestBenchAllFailedExitsNonZero(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusInternalServerError)
	}))
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "results.json")
	stale := filepath.Join(dir, ".results.json.tmp4242")
	if err := os.WriteFile(stale, make([]byte, 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runBounded(t, []string{"bench", "--url", srv.URL, "--model", "m", "--isl", "8", "--osl", "3",
		"--concurrency", "2", "--num-prompts", "4", "--out", out, "--skip-check"})
	const want = "bench: every request failed at 1 of 1 load point(s): concurrency 2 (http_500 4)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s\n%s", err, want, stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary is still there: %v", err)
	}
	if !strings.Contains(stderr, "bench: removed 1 temporary file(s) an interrupted run left next to "+out) {
		t.Errorf("stderr does not say the temporary was removed:\n%s", stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if f := strings.Fields(lines[len(lines)-1]); len(lines) != 2 || len(f) != 15 || f[2] != "0" || f[3] != "4" ||
		strings.Join(f[7:14], " ") != "- - - - - - -" {
		t.Errorf("summary shows latencies of a point without completions:\n%s", stdout)
	}
	rs := readResults(t, out)
	if len(rs) != 1 || rs[0]["mean_ttft_ms"] != nil || rs[0]["completed"] != 0.0 {
		t.Errorf("result %v, want null latencies", rs)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("result file mode: %v %v", st.Mode(), err)
	}
}

// TestPasswordNeverPrinted: user information in --url stays out of bench's
// and validate's messages.
func TestPasswordNeverPrinted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://admin:hunter2@", 1)
	red := strings.Replace(srv.URL, "http://", "http://xxxxx@", 1)
	for _, args := range [][]string{
		{"bench", "--url", u, "--model", "m", "--isl", "8", "--osl", "3", "--concurrency", "1", "--num-prompts", "2"},
		{"validate", "--url", u, "--model", "Qwen3-32B", "--gpu", "H20", "--replicas", "1xTP4", "--isl", "100", "--osl", "10", "--concurrency", "1", "--num-prompts", "2"},
	} {
		stdout, stderr, err := runBounded(t, args)
		want := args[0] + ": loadgen: test request to " + red + "/v1/completions failed (http_403): HTTP 403 Forbidden: no"
		if err == nil || err.Error() != want {
			t.Errorf("%s: err = %v\nwant %s", args[0], err, want)
		}
		if strings.Contains(stdout+stderr, "hunter2") {
			t.Errorf("%s printed the password:\n%s%s", args[0], stdout, stderr)
		}
	}
}

// TestPartialPointsFlagged: data flags a capsim_partial point; fit skips it
// with a note.
func TestPartialPointsFlagged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "runs.json")
	doc := `{"backend": "vllm", "model_id": "Qwen/Qwen3-32B", "num_prompts": 8, "request_rate": "inf", "max_concurrency": 4, "completed": 3, "failed": 0, "duration": 1.0, "request_throughput": 3.0, "mean_ttft_ms": 20, "mean_tpot_ms": 10, "mean_e2el_ms": 100, "total_input_tokens": 300, "total_output_tokens": 30, "capsim_partial": true}` + "\n"
	if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := `{"document": "runs.json", "defaults": {"gpu": "H20", "topology": "1xTP4", "engine": "vllm-0.9.0.1"}}`
	if err := os.WriteFile(filepath.Join(dir, "runs.meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runBounded(t, []string{"data", "--file", f})
	if err != nil || !strings.Contains(stdout, "partial") {
		t.Errorf("data: %v\n%s", err, stdout)
	}
	_, _, err = runBounded(t, []string{"fit", "--from", f, "--quick"})
	const want = "calibrate: none of the 1 records can be fitted: record runs:1: skipped: an interrupted load point (capsim_partial); its metrics cover only the requests that finished"
	if err == nil || err.Error() != want {
		t.Errorf("fit: err = %v\nwant %s", err, want)
	}
}

// TestHostileInputFiles (issue 37): a FIFO, a device, a directory and a
// file over inputfile.MaxSize are refused in one line naming the file,
// wherever a user file is read, before anything is read from them; a
// sidecar of 100,000 nested [ is refused quickly.
func TestHostileInputFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	doc := `{"backend": "vllm", "model_id": "Qwen/Qwen3-32B", "request_rate": "inf", "max_concurrency": 4, "completed": 3, "duration": 1.0, "request_throughput": 3.0, "mean_ttft_ms": 20, "total_input_tokens": 300, "total_output_tokens": 30}`
	res := write("runs.json", doc)
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if f, err := os.Create(big); err != nil || f.Truncate(inputfile.MaxSize+1) != nil || f.Close() != nil {
		t.Fatalf("sparse file: %v", err)
	}
	side := filepath.Join(dir, "side.json")
	write("side.json", doc)
	if err := syscall.Mkfifo(filepath.Join(dir, "side.meta.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	deep := write("deep.json", doc)
	write("deep.meta.json", strings.Repeat("[", 100000))
	deepProfile := write("deep-profile.json", strings.Repeat("[", 100000))
	pred := []string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "100", "--osl", "10", "--concurrency", "1", "--profile"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"data", "--file", fifo}, "results: " + fifo + ": not a regular file (a named pipe); name a file"},
		{[]string{"data", "--file", "/dev/zero"}, "results: /dev/zero: not a regular file (a device); name a file"},
		{[]string{"data", "--file", dir}, "results: " + dir + ": not a regular file (a directory); name a file"},
		{[]string{"data", "--file", big}, "results: " + big + ": larger than 256 MiB, the most capsim reads from one file"},
		{[]string{"data", "--file", side}, "results: " + filepath.Join(dir, "side.meta.json") + ": not a regular file (a named pipe); name a file"},
		{[]string{"data", "--file", deep}, "results: " + filepath.Join(dir, "deep.meta.json") + ":1: metadata: invalid JSON: invalid character '[' exceeded max depth"},
		{append(pred, fifo), "calibrate: " + fifo + ": not a regular file (a named pipe); name a file"},
		{append(pred, "/dev/zero"), "calibrate: /dev/zero: not a regular file (a device); name a file"},
		{append(pred, big), "calibrate: " + big + ": larger than 256 MiB, the most capsim reads from one file"},
		{append(pred, deepProfile), deepProfile + ": calibrate: profile: line 1: invalid JSON: invalid character '[' exceeded max depth"},
	} {
		_, _, err := runBounded(t, tc.args)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v\nwant %s", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	if _, _, err := runBounded(t, []string{"data", "--file", res}); err != nil {
		t.Errorf("a regular file: %v", err)
	}
}

// TestFitRefusesWhatPredictRefuses (issue 37): records without an engine
// fitted with rc 0 into a profile predict then refused ("group 0: engine is
// required"), and a mean prompt of 1e300 tokens ran the fit for minutes and
// wrote "isl": 5e297; both are refused by fit, naming what is missing.
func TestFitRefusesWhatPredictRefuses(t *testing.T) {
	dir := t.TempDir()
	res := func(name, tin string) string {
		p := filepath.Join(dir, name+".json")
		doc := `{"model_id": "Qwen/Qwen3-32B", "request_rate": "inf", "max_concurrency": 4, "completed": 200, "duration": 100, "request_throughput": 2, "mean_ttft_ms": 200, "mean_tpot_ms": 30, "mean_e2el_ms": 3200, "total_input_tokens": ` + tin + `, "total_output_tokens": 20000}`
		meta := `{"document": "` + name + `.json", "defaults": {"gpu": "H20", "topology": "1xTP4"}}`
		if os.WriteFile(p, []byte(doc), 0o644) != nil || os.WriteFile(filepath.Join(dir, name+".meta.json"), []byte(meta), 0o644) != nil {
			t.Fatal("writing the records")
		}
		return p
	}
	out := filepath.Join(dir, "profile.json")
	_, _, err := runBounded(t, []string{"fit", "--from", res("noengine", "200000"), "--quick", "--out", out})
	const want = `calibrate: no group of the 1 records can be fitted: group H20 / Qwen3-32B / unknown engine: 1 records skipped: the records do not name the engine (give it with --engine, e.g. vllm-0.10.1, or a sidecar's "engine")`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a profile was written: %v", err)
	}
	// Given the engine, the same records fit into a profile predict reads.
	if _, _, err := runBounded(t, []string{"fit", "--from", res("noengine", "200000"), "--engine", "vllm-0.10.1", "--quick", "--out", out}); err != nil {
		t.Fatalf("fit --engine: %v", err)
	}
	if _, _, err := runBounded(t, []string{"predict", "--profile", out, "--gpu", "H20", "--model", "Qwen3-32B", "--replicas", "1xTP4", "--isl", "1000", "--osl", "100", "--concurrency", "1"}); err != nil {
		t.Errorf("predict on the fitted profile: %v", err)
	}
	huge := res("huge", "2e302")
	_, _, err = runBounded(t, []string{"fit", "--from", huge, "--engine", "vllm-0.10.1", "--quick", "--out", out})
	wantHuge := "results: " + huge + `:1: field "total_input_tokens": 2e+302 tokens over 200 completed requests is a mean prompt of 1e+300 tokens, more than 10000000`
	if err == nil || err.Error() != wantHuge {
		t.Errorf("err = %v\nwant %s", err, wantHuge)
	}
}

// TestServerEchoRedacted (issue 37): a server echoing the Authorization
// header leaves neither the --api-key-env key nor the URL's password, nor
// their base64 (Basic auth), in the result file, stdout or stderr.
func TestServerEchoRedacted(t *testing.T) {
	const key, pass = "sk-cli-secret-42", "pa55word-cli"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		http.Error(w, "denied: "+r.Header.Get("Authorization")+" basic "+base64.StdEncoding.EncodeToString([]byte(u+":"+p))+" "+p, http.StatusForbidden)
	}))
	defer srv.Close()
	t.Setenv("CAPSIM_TEST_KEY", key)
	out := filepath.Join(t.TempDir(), "r.json")
	u := strings.Replace(srv.URL, "http://", "http://admin:"+pass+"@", 1) + "/v1"
	for _, args := range [][]string{
		{"bench", "--url", u, "--model", "m", "--isl", "8", "--osl", "3", "--concurrency", "1", "--num-prompts", "2", "--api-key-env", "CAPSIM_TEST_KEY"},
		{"bench", "--url", u, "--model", "m", "--isl", "8", "--osl", "3", "--concurrency", "1", "--num-prompts", "2", "--out", out, "--skip-check"},
	} {
		stdout, stderr, err := runBounded(t, args)
		if err == nil || !strings.Contains(err.Error(), "http_403") {
			t.Fatalf("err = %v", err)
		}
		file, _ := os.ReadFile(out)
		all := stdout + stderr + err.Error() + string(file)
		for _, s := range []string{key, pass, base64.StdEncoding.EncodeToString([]byte("admin:" + pass))} {
			if strings.Contains(all, s) {
				t.Errorf("%q kept:\n%s", s, all)
			}
		}
	}
	if b, _ := os.ReadFile(out); !bytes.Contains(b, []byte("denied: ")) {
		t.Errorf("the server's text is not in errors[]:\n%s", b)
	}
}
