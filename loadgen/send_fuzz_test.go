package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// bodyTransport answers every request with status 200 and a fixed body.
type bodyTransport []byte

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{},
		Body: io.NopCloser(bytes.NewReader(b)), Request: r}, nil
}

var knownReasons = map[string]bool{"": true, ReasonTimeout: true, ReasonConnectionReset: true,
	ReasonConnection: true, ReasonMalformedStream: true, ReasonStreamError: true,
	ReasonMissingUsage: true, ReasonNoTokens: true}

// FuzzSendStream feeds arbitrary bytes as a response stream: the parser must
// never panic, and must either succeed with consistent timings or fail with
// a known reason.
func FuzzSendStream(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":{\"completion_tokens\":1}}\r\n\r\n"))
	f.Add([]byte(": ping\n\ndata: {\"error\":{\"message\":\"no\"}}\n\n"))
	f.Add([]byte("data: {\"choices\": [\n\n"))
	f.Add([]byte("data:\ndata:\n\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":-1}}\n\n"))
	opts := Options{Model: "m", ISL: 3, OSL: 1}
	f.Fuzz(func(t *testing.T, body []byte) {
		client := &http.Client{Transport: bodyTransport(body)}
		out := send(context.Background(), client, &opts, "http://fuzz.invalid/v1/completions", []byte(`{}`), time.Now())
		if !knownReasons[out.reason] {
			t.Fatalf("unknown reason %q", out.reason)
		}
		if out.reason == "" {
			// E2EL is TTFT plus the gaps, to rounding.
			sum := out.ttft
			for _, g := range out.itl {
				sum += g
			}
			if out.ttft < 0 || math.Abs(sum-out.latency) > 1e-6 || out.outputTokens < 0 {
				t.Fatalf("inconsistent success %+v", out)
			}
		}
	})
}

// BenchmarkSendStream measures the client's cost per streamed token: parse
// and time one 1000-token response from a local server that never sleeps.
func BenchmarkSendStream(b *testing.B) {
	var stream strings.Builder
	for k := range 1000 {
		fmt.Fprintf(&stream, "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\"t%d \",\"finish_reason\":null}],\"usage\":null}\n\n", k)
	}
	stream.WriteString("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1000}}\n\ndata: [DONE]\n\n")
	payload := stream.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, payload)
	}))
	defer srv.Close()
	opts := Options{Model: "m", ISL: 3, OSL: 1000}
	client := NewClient(1)
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	for b.Loop() {
		out := send(context.Background(), client, &opts, srv.URL, []byte(`{}`), time.Now())
		if out.reason != "" || len(out.itl) != 999 {
			b.Fatalf("outcome %s %s, %d gaps", out.reason, out.err, len(out.itl))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/token")
}
