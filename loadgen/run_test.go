package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capsim/capsim/model"
)

// fault is how the mock server misbehaves on one request.
type fault int

const (
	faultNone fault = iota
	faultHTTP500
	faultReset        // connection dropped mid-stream
	faultStall        // stops sending mid-stream, past the client's timeout
	faultMalformed    // an event that is not JSON
	faultNoUsage      // no usage chunk before [DONE]
	faultNoTokens     // usage and [DONE] but no text
	faultStreamError  // an error object inside the stream
	faultPromptLength // reports one prompt token more than sent
	faultBaseLengths  // streams and reports baseOptions' lengths (32+5), whatever the request asked
	faultNoPromptUsage
)

// mockServer is an OpenAI-compatible streaming server whose timing and
// faults the test controls.
type mockServer struct {
	*httptest.Server
	ttft, itl   time.Duration
	faultFor    func(i int) fault // by arrival order; nil means no faults
	count       atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	mu          sync.Mutex
	bodies      []map[string]any
	headers     []http.Header
}

func newMockServer(t *testing.T, ttft, itl time.Duration, faultFor func(int) fault) *mockServer {
	m := &mockServer{ttft: ttft, itl: itl, faultFor: faultFor}
	m.Server = httptest.NewServer(http.HandlerFunc(m.handle))
	t.Cleanup(m.Close)
	return m
}

func (m *mockServer) handle(w http.ResponseWriter, r *http.Request) {
	i := int(m.count.Add(1) - 1)
	cur := m.inFlight.Add(1)
	// A request leaves the server's count just before its last event: once
	// the client reads [DONE] it may send the next one while this handler
	// is still returning.
	released := false
	release := func() {
		if !released {
			released = true
			m.inFlight.Add(-1)
		}
	}
	defer release()
	for {
		old := m.maxInFlight.Load()
		if cur <= old || m.maxInFlight.CompareAndSwap(old, cur) {
			break
		}
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	m.headers = append(m.headers, r.Header.Clone())
	m.mu.Unlock()
	f := faultNone
	if m.faultFor != nil {
		f = m.faultFor(i)
	}
	if f == faultHTTP500 {
		http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
		return
	}
	promptTokens := 0
	if p, ok := body["prompt"].([]any); ok {
		promptTokens = len(p)
	} else if msgs, ok := body["messages"].([]any); ok {
		content := msgs[0].(map[string]any)["content"].(string)
		promptTokens = len(strings.Fields(content))
	}
	if f == faultPromptLength {
		promptTokens++
	}
	osl := int(body["max_tokens"].(float64))
	if f == faultBaseLengths {
		promptTokens, osl = 32, 5
	}
	chat := strings.HasSuffix(r.URL.Path, "/chat/completions")

	w.Header().Set("Content-Type", "text/event-stream")
	flusher := w.(http.Flusher)
	event := func(s string) {
		fmt.Fprintf(w, "data: %s\n\n", s)
		flusher.Flush()
	}
	token := func(k int) string {
		if chat {
			return fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"t%d "}}]}`, k)
		}
		return fmt.Sprintf(`{"choices":[{"index":0,"text":"t%d "}]}`, k)
	}
	if chat { // role announcement, as vLLM and llm-d-inference-sim send; carries no text
		event(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
	}
	w.Write([]byte(": keep-alive comment\n\n"))
	time.Sleep(m.ttft)
	switch f {
	case faultMalformed:
		event(`{"choices": [`)
		return
	case faultStreamError:
		event(`{"error":{"message":"engine died","code":500}}`)
		return
	case faultNoTokens:
		event(fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":0}}`, promptTokens))
		event("[DONE]")
		return
	}
	for k := range osl {
		if k > 0 {
			time.Sleep(m.itl)
		}
		event(token(k))
		if k == 1 {
			switch f {
			case faultReset:
				panic(http.ErrAbortHandler) // net/http drops the connection
			case faultStall:
				<-r.Context().Done()
				return
			}
		}
	}
	event(`{"choices":[{"index":0,"text":"","finish_reason":"length"}]}`)
	if f == faultNoPromptUsage { // usage without prompt_tokens
		event(fmt.Sprintf(`{"choices":[],"usage":{"completion_tokens":%d}}`, osl))
	} else if f != faultNoUsage {
		event(fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
			promptTokens, osl, promptTokens+osl))
	}
	release()
	event("[DONE]")
}

func baseOptions(url string) Options {
	return Options{URL: url, Model: "mock", ISL: 32, OSL: 5, NumPrompts: 8, Load: model.Closed(2), Seed: 1}
}

func TestRunMeasuresTimingLikeVLLM(t *testing.T) {
	const ttft, itl = 40 * time.Millisecond, 8 * time.Millisecond
	m := newMockServer(t, ttft, itl, nil)
	opts := baseOptions(m.URL)
	opts.Load = model.Closed(1)
	opts.NumPrompts = 4
	var calls int
	r, err := Run(context.Background(), opts, func(p Progress) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 4 || r.Failed != 0 || calls != 4 {
		t.Fatalf("completed %d failed %d progress calls %d, want 4 0 4 (errors %v)", r.Completed, r.Failed, calls, r.Errors)
	}
	// The server sleeps at least the configured times, so the lower bounds
	// are tight; scheduling noise on a loaded 2-core machine (the race
	// detector, parallel builds) only adds, so the upper bounds are loose.
	for i, v := range r.TTFTs {
		if v < ttft.Seconds() {
			t.Errorf("request %d: TTFT %.2f ms below the server's %v", i, v*1000, ttft)
		}
	}
	if r.TTFT.Median < 40 || r.TTFT.Median > 200 {
		t.Errorf("median TTFT %.2f ms, want about 40", r.TTFT.Median)
	}
	if r.TPOT.Median < 8 || r.TPOT.Median > 40 {
		t.Errorf("median TPOT %.2f ms, want about 8", r.TPOT.Median)
	}
	// 5 tokens → 4 gaps per request; the finish-only chunk adds none.
	for i, gaps := range r.ITLs {
		if len(gaps) != 4 {
			t.Errorf("request %d: %d ITL gaps, want 4", i, len(gaps))
		}
	}
	wantE2E := r.TTFT.Mean + 4*r.TPOT.Mean
	if !near(r.E2EL.Mean, wantE2E, 1e-6) {
		t.Errorf("mean E2EL %.3f, want TTFT + 4·TPOT = %.3f", r.E2EL.Mean, wantE2E)
	}
	if r.TotalInputTokens != 4*32 || r.TotalOutputTokens != 4*5 || r.PromptTokenMismatches != 0 {
		t.Errorf("tokens in %d out %d mismatches %d", r.TotalInputTokens, r.TotalOutputTokens, r.PromptTokenMismatches)
	}
	if !near(r.RequestThroughput, 4/r.Duration, 1e-9) || !near(r.OutputThroughput, 20/r.Duration, 1e-9) ||
		!near(r.TotalTokenThroughput, (128+20)/r.Duration, 1e-9) {
		t.Errorf("throughputs %v %v %v over %v s", r.RequestThroughput, r.OutputThroughput, r.TotalTokenThroughput, r.Duration)
	}
	if r.Duration < 4*0.072 {
		t.Errorf("duration %.3f s shorter than 4 sequential requests of 72 ms", r.Duration)
	}
	if r.ScheduleDelay != nil {
		t.Error("closed loop should have no schedule delay")
	}
	// The request bodies ask for exact lengths the way vLLM's random dataset does.
	b := m.bodies[0]
	if b["ignore_eos"] != true || b["stream"] != true || b["max_tokens"].(float64) != 5 ||
		b["stream_options"].(map[string]any)["include_usage"] != true || len(b["prompt"].([]any)) != 32 {
		t.Errorf("request body %v", b)
	}
	for _, id := range b["prompt"].([]any) {
		if v := id.(float64); v < tokenLow || v >= tokenHigh {
			t.Errorf("token id %v outside [%d, %d)", v, tokenLow, tokenHigh)
		}
	}
}

func TestRunChatEndpoint(t *testing.T) {
	m := newMockServer(t, 20*time.Millisecond, 5*time.Millisecond, nil)
	opts := baseOptions(m.URL)
	opts.Endpoint = Chat
	opts.APIKey = "sekrit"
	r, err := Run(context.Background(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != opts.NumPrompts || r.Backend != "openai-chat" || r.InputLengthsExact {
		t.Fatalf("completed %d backend %q exact %v; errors %v", r.Completed, r.Backend, r.InputLengthsExact, r.Errors)
	}
	// The role-only first chunk must not count as the first token.
	if r.TTFT.Mean < 20 {
		t.Errorf("mean TTFT %.2f ms, want ≥ 20 (role chunk counted as a token?)", r.TTFT.Mean)
	}
	if got := m.headers[0].Get("Authorization"); got != "Bearer sekrit" {
		t.Errorf("Authorization %q", got)
	}
	if r.InputLens[0] != 32 { // the mock counts words, and the prompt has ISL words
		t.Errorf("input len %d, want 32", r.InputLens[0])
	}
}

func TestRunCountsFailuresByReasonAndGoesOn(t *testing.T) {
	tests := []struct {
		fault  fault
		reason string
	}{
		{faultHTTP500, "http_500"},
		{faultReset, ReasonConnectionReset},
		{faultStall, ReasonTimeout},
		{faultMalformed, ReasonMalformedStream},
		{faultNoUsage, ReasonMissingUsage},
		{faultNoTokens, ReasonNoTokens},
		{faultStreamError, ReasonStreamError},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			// Every third request misbehaves; the others must complete normally.
			m := newMockServer(t, 2*time.Millisecond, time.Millisecond, func(i int) fault {
				if i%3 == 1 {
					return tt.fault
				}
				return faultNone
			})
			opts := baseOptions(m.URL)
			opts.NumPrompts = 9
			// Long enough that a healthy request never hits it on a loaded
			// machine under the race detector, short enough to keep the
			// stalled ones quick.
			opts.Timeout = time.Second
			r, err := Run(context.Background(), opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Completed != 6 || r.Failed != 3 || r.Failures[tt.reason] != 3 || len(r.Failures) != 1 {
				t.Fatalf("completed %d failed %d failures %v, want 6 3 {%s:3}; errors %q",
					r.Completed, r.Failed, r.Failures, tt.reason, r.Errors)
			}
			// Failed requests are excluded from latency statistics and token totals.
			if r.TotalOutputTokens != 6*5 || len(r.TTFTs) != 9 {
				t.Errorf("output tokens %d, per-request entries %d", r.TotalOutputTokens, len(r.TTFTs))
			}
			var okLatencies, okTTFTs []float64
			for i, e := range r.Errors {
				if e == "" {
					okLatencies = append(okLatencies, r.Latencies[i])
					okTTFTs = append(okTTFTs, r.TTFTs[i])
				}
			}
			if e2el, ttft := Summarize(okLatencies), Summarize(okTTFTs); e2el != r.E2EL || ttft != r.TTFT {
				t.Errorf("latency statistics include failed requests: E2EL %+v, want %+v", r.E2EL, e2el)
			}
			nonEmpty := 0
			for _, e := range r.Errors {
				if e != "" {
					nonEmpty++
				}
			}
			if nonEmpty != 3 {
				t.Errorf("%d error messages, want 3: %q", nonEmpty, r.Errors)
			}
		})
	}
}

func TestRunRecordsPromptLengthMismatch(t *testing.T) {
	m := newMockServer(t, 0, 0, func(i int) fault {
		if i == 0 {
			return faultPromptLength
		}
		return faultNone
	})
	r, err := Run(context.Background(), baseOptions(m.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.PromptTokenMismatches != 1 || r.Completed != 8 || r.TotalInputTokens != 8*32+1 {
		t.Errorf("mismatches %d completed %d input tokens %d", r.PromptTokenMismatches, r.Completed, r.TotalInputTokens)
	}
}

func TestRunConcurrencyLimits(t *testing.T) {
	tests := []struct {
		name string
		load model.Load
		want int64
	}{
		{"closed loop keeps exactly N in flight", model.Closed(3), 3},
		{"burst sends all at once", model.Open(math.Inf(1), 1), 8},
		{"burst with a cap", model.Load{Kind: model.Burst, Rate: math.Inf(1), Burstiness: 1, Concurrency: 2}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A long first-token wait so every request of a wave is in flight
			// together even when a loaded machine starts them late.
			m := newMockServer(t, 150*time.Millisecond, time.Millisecond, nil)
			opts := baseOptions(m.URL)
			opts.Load = tt.load
			r, err := Run(context.Background(), opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Completed != 8 {
				t.Fatalf("completed %d", r.Completed)
			}
			if got := m.maxInFlight.Load(); got != tt.want {
				t.Errorf("max requests in flight at the server %d, want %d", got, tt.want)
			}
			if tt.load.Kind == model.Burst && r.ScheduleDelay == nil {
				t.Error("burst should record schedule delay")
			}
		})
	}
}

func TestRunOpenLoopFollowsSchedule(t *testing.T) {
	m := newMockServer(t, 5*time.Millisecond, time.Millisecond, nil)
	opts := baseOptions(m.URL)
	opts.NumPrompts = 20
	opts.Load = model.Open(40, 1)
	r, err := Run(context.Background(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The last request is due at 20/40 = 0.5 s and takes ~10 ms. No request
	// may go out early; how late they go depends on how busy the machine is,
	// so only the median lag is bounded, loosely.
	if r.Duration < 0.5 || r.Duration > 2 {
		t.Errorf("duration %.3f s, want just over 0.5", r.Duration)
	}
	due := Schedule(opts.Load, opts.NumPrompts, opts.Seed)
	lags := make([]float64, len(r.StartTimes))
	for i, start := range r.StartTimes {
		lags[i] = start - due[i].Seconds()
		if lags[i] < 0 {
			t.Errorf("request %d sent %.1f ms before its due time", i, -lags[i]*1000)
		}
	}
	if med := Percentile(lags, 50); med > 0.1 {
		t.Errorf("median send lag %.1f ms", med*1000)
	}
	// The summary in the result is exactly these lags.
	s := Summarize(lags)
	if d := r.ScheduleDelay; d == nil || !near(d.Mean, s.Mean, 1e-9) || !near(d.P99, s.P99, 1e-9) || !near(d.P50, s.Median, 1e-9) {
		t.Errorf("schedule delay %+v, want mean %.3f median %.3f p99 %.3f", r.ScheduleDelay, s.Mean, s.Median, s.P99)
	}
}

func TestRunInterruptedIsPartial(t *testing.T) {
	m := newMockServer(t, 20*time.Millisecond, 5*time.Millisecond, nil)
	opts := baseOptions(m.URL)
	opts.NumPrompts = 100
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Run(ctx, opts, func(p Progress) {
		if p.Done == 4 {
			cancel()
		}
	})
	if err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if !r.Partial || r.Completed < 4 || r.Completed > 10 || r.Failed != 0 {
		t.Errorf("partial %v completed %d failed %d canceled %d", r.Partial, r.Completed, r.Failed, r.Canceled)
	}
	if int(m.count.Load()) > 12 {
		t.Errorf("server saw %d requests after the interruption", m.count.Load())
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	good := baseOptions("http://127.0.0.1:1")
	for name, mutate := range map[string]func(*Options){
		"no URL":        func(o *Options) { o.URL = "" },
		"not http":      func(o *Options) { o.URL = "127.0.0.1:8000" },
		"no model":      func(o *Options) { o.Model = "" },
		"zero ISL":      func(o *Options) { o.ISL = 0 },
		"zero OSL":      func(o *Options) { o.OSL = 0 },
		"no prompts":    func(o *Options) { o.NumPrompts = 0 },
		"bad endpoint":  func(o *Options) { o.Endpoint = "embeddings" },
		"bad load":      func(o *Options) { o.Load = model.Closed(0) },
		"neg timeout":   func(o *Options) { o.Timeout = -time.Second },
		"bad open rate": func(o *Options) { o.Load = model.Load{Kind: model.OpenLoop, Burstiness: 1} },
	} {
		o := good
		mutate(&o)
		if _, err := Run(context.Background(), o, nil); err == nil || !strings.HasPrefix(err.Error(), "loadgen: ") {
			t.Errorf("%s: err %v, want a loadgen error", name, err)
		}
	}
}

func TestRunConnectionRefusedIsCountedNotFatal(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	opts := baseOptions(url)
	opts.NumPrompts = 3
	r, err := Run(context.Background(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed != 3 || r.Failures[ReasonConnection] != 3 {
		t.Errorf("failures %v", r.Failures)
	}
	if err := Check(context.Background(), opts); err == nil || !strings.Contains(err.Error(), ReasonConnection) {
		t.Errorf("Check: %v", err)
	}
}

func TestCheck(t *testing.T) {
	m := newMockServer(t, 0, 0, func(i int) fault { return fault(i) }) // first request fine, second HTTP 500
	opts := baseOptions(m.URL)
	if err := Check(context.Background(), opts); err != nil {
		t.Errorf("healthy server: %v", err)
	}
	if err := Check(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "http_500") {
		t.Errorf("failing server: %v", err)
	}
}

func TestSendParsesMultiLineAndUnterminatedEvents(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		bw := bufio.NewWriter(w)
		// data split over two lines, CRLF line ends, an event: field, and a
		// final event without its blank line.
		bw.WriteString("event: message\r\ndata: {\"choices\":[{\"text\":\"a\"}]\r\ndata: }\r\n\r\n")
		bw.WriteString("data: {\"choices\":[{\"text\":\"b\"}]}\n\n")
		bw.WriteString(`data: {"choices":[],"usage":{"prompt_tokens":32,"completion_tokens":2}}`)
		bw.Flush()
	}))
	defer srv.Close()
	opts := baseOptions(srv.URL)
	opts.OSL = 2
	out := send(context.Background(), srv.Client(), &opts, srv.URL, []byte(`{}`), time.Now())
	if out.reason != "" || out.outputTokens != 2 || len(out.itl) != 1 || out.promptTokens != 32 {
		t.Errorf("outcome %+v", out)
	}
}

func TestRequestURL(t *testing.T) {
	for _, tt := range []struct {
		url      string
		endpoint Endpoint
		want     string
	}{
		{"http://h:1", "", "http://h:1/v1/completions"},
		{"http://h:1/", Chat, "http://h:1/v1/chat/completions"},
		{"http://h:1/v1/completions", Completions, "http://h:1/v1/completions"},
		{"http://h:1/v1/chat/completions", Chat, "http://h:1/v1/chat/completions"},
	} {
		o := Options{URL: tt.url, Endpoint: tt.endpoint}
		if got := o.requestURL(); got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.url, tt.endpoint, got, tt.want)
		}
	}
}

func TestRunReusesConnections(t *testing.T) {
	var conns atomic.Int64
	m := &mockServer{ttft: 2 * time.Millisecond, itl: time.Millisecond}
	m.Server = httptest.NewUnstartedServer(http.HandlerFunc(m.handle))
	m.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	m.Start()
	defer m.Close()
	opts := baseOptions(m.URL)
	opts.NumPrompts, opts.Load = 20, model.Closed(3)
	r, err := Run(context.Background(), opts, nil)
	if err != nil || r.Completed != 20 {
		t.Fatalf("err %v completed %d", err, r.Completed)
	}
	// One connection per client: a stream closed before its end would force a new one per request.
	if got := conns.Load(); got != 3 {
		t.Errorf("%d connections for 20 requests from 3 clients, want 3", got)
	}
}
