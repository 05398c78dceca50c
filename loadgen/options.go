package loadgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/internal/optionerr"
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
	// URL is the server's base URL, e.g. http://127.0.0.1:8000 or, as the
	// OpenAI SDK takes it, http://127.0.0.1:8000/v1; the endpoint's path
	// (/v1/completions or /v1/chat/completions) completes it unless URL
	// already ends with it. A query string is kept, a fragment dropped.
	URL string
	// Model is the model name sent with every request.
	Model string
	// Endpoint is Completions ("" means Completions) or Chat.
	Endpoint Endpoint
	// ISL is the prompt length in tokens; OSL the output length (max_tokens
	// with ignore_eos). With a Dataset they are the means its lengths are
	// scaled to.
	ISL, OSL int
	// Dataset names a dataset of package datasets ("sharegpt") whose
	// prompt and output lengths, scaled to ISL and OSL (Dataset.Scaled),
	// the requests take: request i gets the i-th length dealt from each
	// scaled list (datasets.Deal on datasets.InputStream and OutputStream,
	// seeded with Seed), as the simulator deals them. "" sends every
	// request with ISL and OSL.
	Dataset string
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

// MaxPromptTokens bounds the prompt tokens of a load point (NumPrompts ×
// ISL, or the dealt lengths' sum with a Dataset): every request body is built
// before the first is sent, so the prompts of a load point must fit in
// memory (1e8 tokens are about 600 MB of JSON).
const MaxPromptTokens = 100_000_000

// The Options fields CheckLengths names in its *optionerr.Error.
var (
	fieldISL = optionerr.Field{Name: "ISL", Words: "input length"}
	fieldOSL = optionerr.Field{Name: "OSL", Words: "output length"}
)

// CheckLengths refuses a prompt or output length (Options.ISL, OSL)
// beyond model.MaxSequenceTokens, naming the field; Validate runs it, and
// a caller may before it has the rest of the options.
func CheckLengths(isl, osl int) error {
	for _, f := range []struct {
		field optionerr.Field
		v     int
	}{{fieldISL, isl}, {fieldOSL, osl}} {
		if f.v > model.MaxSequenceTokens {
			return optionerr.New("loadgen: ", []optionerr.Field{f.field}, "%s %d is more than %d tokens, the longest prompt or output capsim models", f.v, model.MaxSequenceTokens)
		}
	}
	return nil
}

// Validate reports options that cannot be run.
func (o *Options) Validate() error {
	if o.URL == "" {
		return fmt.Errorf("loadgen: URL is required")
	}
	if !strings.HasPrefix(o.URL, "http://") && !strings.HasPrefix(o.URL, "https://") {
		return fmt.Errorf("loadgen: URL %q must start with http:// or https://", RedactURL(o.URL))
	}
	if u, err := url.Parse(o.URL); err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("loadgen: URL %q is not a server address like http://127.0.0.1:8000 or http://127.0.0.1:8000/v1", RedactURL(o.URL))
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
	if err := CheckLengths(o.ISL, o.OSL); err != nil {
		return err
	}
	if o.NumPrompts <= 0 {
		return fmt.Errorf("loadgen: number of prompts must be positive, got %d", o.NumPrompts)
	}
	if _, err := datasets.Check(o.Dataset); err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	if tokens := o.promptTokens(); tokens > MaxPromptTokens {
		if o.Dataset != "" {
			return fmt.Errorf("loadgen: %d prompts of %s lengths averaging %d tokens are %.3g prompt tokens, more than the %.0f one load point prepares (request bodies are built before sending, about 6 bytes a token)",
				o.NumPrompts, o.Dataset, o.ISL, tokens, float64(MaxPromptTokens))
		}
		return fmt.Errorf("loadgen: %d prompts of %d tokens are %.3g prompt tokens, more than the %.0f one load point prepares (request bodies are built before sending, about 6 bytes a token)",
			o.NumPrompts, o.ISL, tokens, float64(MaxPromptTokens))
	}
	if o.Timeout < 0 {
		return fmt.Errorf("loadgen: timeout must not be negative, got %v", o.Timeout)
	}
	if err := o.Load.Validate(); err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	return nil
}

// promptTokens is the sum of the load point's prompt lengths (ISL and
// NumPrompts valid, Dataset known), dealt without keeping them.
func (o *Options) promptTokens() float64 {
	ds, ok := datasets.Lookup(o.Dataset)
	if !ok || o.NumPrompts > MaxPromptTokens { // every prompt holds at least 1 token
		return float64(o.NumPrompts) * float64(o.ISL)
	}
	ins, _ := ds.Scaled(o.ISL, o.OSL)
	d := datasets.NewDeck(ins, rand.New(rand.NewPCG(o.Seed, datasets.InputStream)))
	sum := 0.0
	for range o.NumPrompts {
		sum += float64(d.Next())
	}
	return sum
}

// lengths are each request's prompt and output length, in request order
// (Dataset known).
func (o *Options) lengths() (inputs, outputs []int) {
	ds, ok := datasets.Lookup(o.Dataset)
	if !ok {
		inputs, outputs = make([]int, o.NumPrompts), make([]int, o.NumPrompts)
		for i := range inputs {
			inputs[i], outputs[i] = o.ISL, o.OSL
		}
		return inputs, outputs
	}
	ins, outs := ds.Scaled(o.ISL, o.OSL)
	return datasets.Deal(ins, o.NumPrompts, o.Seed, datasets.InputStream), datasets.Deal(outs, o.NumPrompts, o.Seed, datasets.OutputStream)
}

func (o *Options) endpoint() Endpoint {
	if o.Endpoint == "" {
		return Completions
	}
	return o.Endpoint
}

// requestURL is the full URL requests are posted to: URL's path completed
// to the endpoint's (http://h, http://h/v1 and http://h/v1/completions all
// post to http://h/v1/completions), its query kept, its fragment dropped.
func (o *Options) requestURL() string {
	u, err := url.Parse(o.URL)
	if err != nil { // Validate refuses it
		return o.URL
	}
	path := "/v1/completions"
	if o.endpoint() == Chat {
		path = "/v1/chat/completions"
	}
	base := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(base, path):
	case o.endpoint() == Completions && strings.HasSuffix(base, "/v1/chat/completions"):
	case strings.HasSuffix(base, "/v1"):
		base += strings.TrimPrefix(path, "/v1")
	default:
		base += path
	}
	u.Path, u.RawPath, u.Fragment, u.RawFragment = base, "", "", ""
	return u.String()
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
// (a gzip layer would buffer and delay streamed chunks), at least
// maxInFlight idle connections kept per host so a closed loop reuses
// connections instead of opening new ones, and no redirect to another host
// or scheme (the benchmark would silently measure, and send its key to,
// another server).
func NewClient(maxInFlight int) *http.Client {
	maxInFlight = max(maxInFlight, 2)
	return &http.Client{CheckRedirect: checkRedirect, Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:  true,
		MaxIdleConns:        maxInFlight,
		MaxIdleConnsPerHost: maxInFlight,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// checkRedirect follows at most 10 redirects, all to the same scheme and host.
func checkRedirect(req *http.Request, via []*http.Request) error {
	from := via[0].URL
	if req.URL.Host != from.Host || req.URL.Scheme != from.Scheme {
		return fmt.Errorf("loadgen: refusing a redirect to another host: %s", RedactURL(req.URL.String()))
	}
	if len(via) >= 10 {
		return errors.New("loadgen: stopped after 10 redirects")
	}
	return nil
}

// RedactURL returns raw with any user name and password, and the value of
// every query parameter (?api_key=...), replaced by "xxxxx", for printing:
// a URL such as http://user:secret@host/ must not reach a terminal, a log
// or a result file in clear. A string that does not parse as a URL is
// redacted up to its last '@' and from its '?'.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexByte(raw, '?'); i >= 0 {
			raw = raw[:i+1] + "xxxxx"
		}
		if i := strings.LastIndexByte(raw, '@'); i >= 0 {
			scheme := ""
			if j := strings.Index(raw, "://"); j >= 0 && j < i {
				scheme = raw[:j+3]
			}
			return scheme + "xxxxx" + raw[i:]
		}
		return raw
	}
	if u.User == nil && u.RawQuery == "" {
		return raw
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}
