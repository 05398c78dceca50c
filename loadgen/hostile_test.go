package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/capsim/capsim/model"
)

// Hostile servers and URLs (issue 15). Every server is httptest's, on
// 127.0.0.1.

func TestRedactURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000"},
		{"http://user:s3cret@127.0.0.1:8000/v1", "http://xxxxx@127.0.0.1:8000/v1"},
		{"https://TOKEN@example.com/", "https://xxxxx@example.com/"},
		{"http://us er:pa%zz@host", "http://xxxxx@host"}, // does not parse
		{"not a url", "not a url"},
	} {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCheckRedactsPassword: the start-up check's error names the URL
// without its password, and so do the per-request errors net/http writes.
func TestCheckRedactsPassword(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusUnauthorized)
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://admin:hunter2@", 1)
	opts := baseOptions(u)
	err := Check(context.Background(), opts)
	want := fmt.Sprintf("loadgen: test request to %s/v1/completions failed (http_401): HTTP 401 Unauthorized: nope",
		strings.Replace(srv.URL, "http://", "http://xxxxx@", 1))
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	// A transport error quotes the URL; the password must not survive.
	srv.Close()
	err = Check(context.Background(), opts)
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "admin") {
		t.Errorf("err = %v, want no user information", err)
	}
	bad := Options{URL: "ftp://admin:hunter2@127.0.0.1/", Model: "m", ISL: 1, OSL: 1, NumPrompts: 1}
	if err := bad.Validate(); err == nil || err.Error() != `loadgen: URL "ftp://xxxxx@127.0.0.1/" must start with http:// or https://` {
		t.Errorf("Validate: %v", err)
	}
}

// TestRedirectToAnotherHostRefused: a redirect to another host (here
// "localhost" for a server on 127.0.0.1) fails the request with a reason
// instead of measuring, and sending the key to, the other server.
func TestRedirectToAnotherHostRefused(t *testing.T) {
	var hits int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer other.Close()
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/v1/completions"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	err := Check(context.Background(), baseOptions(srv.URL))
	want := fmt.Sprintf(`loadgen: test request to %s/v1/completions failed (connection_error): Post "%s": loadgen: refusing a redirect to another host: %s`,
		srv.URL, target, target)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if hits != 0 {
		t.Errorf("the other host got %d requests", hits)
	}
}

// TestHugeEventBounded: one endless SSE line (the audit sent 300 MB, which
// took bench to 1.25 GB) fails the request once it passes maxEventBytes.
func TestHugeEventBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `data: {"choices":[{"text":"`)
		chunk := strings.Repeat("a", 64<<10)
		for range 64 { // 4 MiB without a newline
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	opts := baseOptions(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := send(ctx, srv.Client(), &opts, srv.URL, []byte(`{}`), time.Now())
	if out.reason != ReasonMalformedStream || out.err != "event 1: larger than 1048576 bytes" {
		t.Errorf("outcome %q: %q", out.reason, out.err)
	}
	// Many data lines of one event add up to the same bound.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		line := "data: " + strings.Repeat("b", 1000) + "\n"
		for range 2000 {
			if _, err := io.WriteString(w, line); err != nil {
				return
			}
		}
	}))
	defer srv2.Close()
	out = send(ctx, srv2.Client(), &opts, srv2.URL, []byte(`{}`), time.Now())
	if out.reason != ReasonMalformedStream || out.err != "event 1: larger than 1048576 bytes" {
		t.Errorf("many lines: outcome %q: %q", out.reason, out.err)
	}
}

// TestAbsurdPromptVolumeRefused: a load point whose prompts would not fit in
// memory is refused before any body is built.
func TestAbsurdPromptVolumeRefused(t *testing.T) {
	o := Options{URL: "http://127.0.0.1:1", Model: "m", ISL: 100000, OSL: 1, NumPrompts: 1_000_000, Load: model.Closed(1)}
	const want = "loadgen: 1000000 prompts of 100000 tokens are 1e+11 prompt tokens, more than the 100000000 one load point prepares (request bodies are built before sending, about 6 bytes a token)"
	if err := o.Validate(); err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}
