package loadgen

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
		{"http://h/v1?api_key=X&v=1", "http://h/v1?api_key=xxxxx&v=xxxxx"},
		{"http://h:x/?api_key=X", "http://h:x/?xxxxx"}, // does not parse
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

// TestServerTextRedacted (issue 37): a server that echoes the request's
// Authorization header, in an error body and in a stream's error object,
// leaves no API key, URL password, or base64 of them (Basic auth) in the
// result's errors or the start-up check's error.
func TestServerTextRedacted(t *testing.T) {
	const key, user, pass = "sk-secret-key-123", "admin", "hunter2pass"
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		echo := fmt.Sprintf("auth=%q basic=%s key64=%s url=%s", r.Header.Get("Authorization"),
			base64.StdEncoding.EncodeToString([]byte(user+":"+pass)), base64.StdEncoding.EncodeToString([]byte(key)), r.URL)
		if calls.Add(1)%2 == 1 {
			http.Error(w, echo, http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, "data: {\"error\": %q}\n\n", echo)
	}))
	defer srv.Close()
	opts := baseOptions(strings.Replace(srv.URL, "http://", "http://"+user+":"+pass+"@", 1) + "/v1?api_key=" + key + "-q")
	opts.APIKey = key
	var kept []string
	if err := Check(context.Background(), opts); err != nil {
		kept = append(kept, err.Error())
	}
	r, err := Run(context.Background(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	kept = append(kept, string(b))
	if len(kept) != 2 || !strings.Contains(kept[1], "auth=") || !strings.Contains(kept[1], `\"error\"`) && !strings.Contains(kept[1], "event 1") {
		t.Fatalf("the server's text was not kept: %v", kept)
	}
	for _, secret := range []string{key, pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)), base64.StdEncoding.EncodeToString([]byte(key))} {
		for _, k := range kept {
			if strings.Contains(k, secret) {
				t.Errorf("%q kept in %s", secret, k)
			}
		}
	}
}

// TestBaseURLForms (issue 37): the base URL with or without the OpenAI
// SDK's /v1, with a query string or a fragment, posts to the endpoint's
// path with the query kept.
func TestBaseURLForms(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.RequestURI())
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		base     string
		endpoint Endpoint
		want     string
	}{
		{"", "", "/v1/completions"},
		{"/", Chat, "/v1/chat/completions"},
		{"/v1", "", "/v1/completions"},
		{"/v1/", Chat, "/v1/chat/completions"},
		{"/v1/completions", "", "/v1/completions"},
		{"/gateway/v1", "", "/gateway/v1/completions"},
		{"/?api-version=2024-10-21", "", "/v1/completions?api-version=2024-10-21"},
		{"/v1?api_key=X", Chat, "/v1/chat/completions?api_key=X"},
		{"/v1#frag", "", "/v1/completions"},
	} {
		opts := baseOptions(srv.URL + tc.base)
		opts.Endpoint = tc.endpoint
		got.Store("")
		if err := opts.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.base, err)
		}
		err := Check(context.Background(), opts)
		if p := got.Load().(string); p != tc.want || err == nil || strings.Contains(err.Error(), "api_key=X") {
			t.Errorf("%q %s: posted to %q, want %q (%v)", tc.base, tc.endpoint, p, tc.want, err)
		}
	}
	bad := Options{URL: "http://", Model: "m", ISL: 1, OSL: 1, NumPrompts: 1}
	if err := bad.Validate(); err == nil || err.Error() != `loadgen: URL "http://" is not a server address like http://127.0.0.1:8000 or http://127.0.0.1:8000/v1` {
		t.Errorf("Validate: %v", err)
	}
}
