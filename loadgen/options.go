package loadgen

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/capsim/capsim/model"
)

// Endpoint is the OpenAI API a benchmark drives.
type Endpoint string

const (
	// Completions is /v1/completions with token-id prompts: input lengths are exact.
	Completions Endpoint = "completions"
	// Chat is /v1/chat/completions with text prompts: input lengths are approximate.
	Chat Endpoint = "chat"
)

// DefaultTimeout is the per-request limit when Options.Timeout is zero; it is
// vLLM bench serve's aiohttp total timeout.
const DefaultTimeout = 6 * time.Hour

// Options describe one load point. The zero value of each optional field is
// the documented default.
type Options struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:8000; the endpoint's
	// path (/v1/completions or /v1/chat/completions) is appended unless URL
	// already ends with it.
	URL string
	// Model is the model name sent with every request.
	Model string
	// Endpoint is Completions ("" means Completions) or Chat.
	Endpoint Endpoint
	// ISL is the prompt length in tokens; OSL the output length (max_tokens
	// with ignore_eos).
	ISL, OSL int
	// NumPrompts is the number of requests in the load point.
	NumPrompts int
	// Load is the offered load: model.Closed(n), model.Open(rate, burstiness)
	// (optionally with Concurrency as a cap) or a burst (rate +Inf).
	Load model.Load
	// Seed fixes the prompts and the arrival schedule.
	Seed uint64
	// Timeout bounds each request from send to the end of its stream; 0 means DefaultTimeout.
	Timeout time.Duration
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// Client sends the requests; nil means NewClient sized for the load.
	Client *http.Client
}

// Validate reports options that cannot be run.
func (o *Options) Validate() error {
	if o.URL == "" {
		return fmt.Errorf("loadgen: URL is required")
	}
	if !strings.HasPrefix(o.URL, "http://") && !strings.HasPrefix(o.URL, "https://") {
		return fmt.Errorf("loadgen: URL %q must start with http:// or https://", o.URL)
	}
	if o.Model == "" {
		return fmt.Errorf("loadgen: model is required")
	}
	switch o.Endpoint {
	case "", Completions, Chat:
	default:
		return fmt.Errorf("loadgen: endpoint must be %q or %q, got %q", Completions, Chat, o.Endpoint)
	}
	if o.ISL <= 0 {
		return fmt.Errorf("loadgen: input length must be positive, got %d", o.ISL)
	}
	if o.OSL <= 0 {
		return fmt.Errorf("loadgen: output length must be positive, got %d", o.OSL)
	}
	if o.NumPrompts <= 0 {
		return fmt.Errorf("loadgen: number of prompts must be positive, got %d", o.NumPrompts)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("loadgen: timeout must not be negative, got %v", o.Timeout)
	}
	if err := o.Load.Validate(); err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	return nil
}

func (o *Options) endpoint() Endpoint {
	if o.Endpoint == "" {
		return Completions
	}
	return o.Endpoint
}

// requestURL is the full URL requests are posted to.
func (o *Options) requestURL() string {
	path := "/v1/completions"
	if o.endpoint() == Chat {
		path = "/v1/chat/completions"
	}
	base := strings.TrimRight(o.URL, "/")
	if strings.HasSuffix(base, path) {
		return base
	}
	if o.endpoint() == Completions && strings.HasSuffix(base, "/v1/chat/completions") {
		return base
	}
	return base + path
}

func (o *Options) timeout() time.Duration {
	if o.Timeout == 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// connections is how many requests can be in flight at once.
func (o *Options) connections() int {
	if o.Load.Concurrency > 0 {
		return o.Load.Concurrency
	}
	return min(o.NumPrompts, 4096)
}

// NewClient returns an HTTP client for benchmarking: no response compression
// (a gzip layer would buffer and delay streamed chunks) and at least
// maxInFlight idle connections kept per host so a closed loop reuses
// connections instead of opening new ones.
func NewClient(maxInFlight int) *http.Client {
	maxInFlight = max(maxInFlight, 2)
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:  true,
		MaxIdleConns:        maxInFlight,
		MaxIdleConnsPerHost: maxInFlight,
		IdleConnTimeout:     90 * time.Second,
	}}
}
