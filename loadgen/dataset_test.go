package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/model"
)

// bodyLengths decodes the prompt length (token ids, or words of a chat
// prompt) and max_tokens of each request body.
func bodyLengths(t *testing.T, bodies [][]byte) (prompts, outputs []int) {
	t.Helper()
	for i, b := range bodies {
		var p struct {
			Prompt    []int `json:"prompt"`
			Messages  []struct{ Content string }
			MaxTokens int  `json:"max_tokens"`
			MaxCompl  *int `json:"max_completion_tokens"`
			IgnoreEOS bool `json:"ignore_eos"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("body %d: %v", i, err)
		}
		n := len(p.Prompt)
		if len(p.Messages) > 0 {
			n = len(strings.Fields(p.Messages[0].Content))
			if p.MaxCompl == nil || *p.MaxCompl != p.MaxTokens {
				t.Fatalf("chat body %d: max_completion_tokens %v, max_tokens %d", i, p.MaxCompl, p.MaxTokens)
			}
		}
		if !p.IgnoreEOS {
			t.Fatalf("body %d without ignore_eos: its output length would not be exact", i)
		}
		prompts, outputs = append(prompts, n), append(outputs, p.MaxTokens)
	}
	return prompts, outputs
}

// With a dataset, request i asks for the i-th prompt and output length
// dealt from the dataset's lengths scaled to ISL and OSL: every scaled
// length once per pass, in an order the seed fixes, the same for the
// same seed. Without one, every request asks for ISL and OSL.
func TestRequestBodiesDealTheDataset(t *testing.T) {
	ds, _ := datasets.Lookup("sharegpt")
	ins, outs := ds.Scaled(40, 12)
	for _, c := range []struct {
		endpoint Endpoint
		dataset  string
		seed     uint64
		n        int
	}{
		{Completions, "sharegpt", 1, len(ins)},
		{Chat, "ShareGPT", 2, len(outs) + 5},
		{Completions, "sharegpt", 3, 2*len(outs) + 1},
		{Completions, "", 1, 50},
		{Chat, "", 1, 20},
	} {
		o := Options{URL: "http://127.0.0.1:1", Model: "m", Endpoint: c.endpoint, ISL: 40, OSL: 12, NumPrompts: c.n, Seed: c.seed, Dataset: c.dataset}
		bodies := bodiesFor(&o)
		prompts, outputs := bodyLengths(t, bodies)
		if c.dataset == "" {
			for i := range prompts {
				if prompts[i] != 40 || outputs[i] != 12 {
					t.Fatalf("%s, no dataset: request %d asks %d+%d tokens, want 40+12", c.endpoint, i, prompts[i], outputs[i])
				}
			}
			continue
		}
		name := func(s string) string { return fmt.Sprintf("%s, seed %d, %d prompts: %s", c.endpoint, c.seed, c.n, s) }
		if want := datasets.Deal(ins, c.n, c.seed, datasets.InputStream); !slices.Equal(prompts, want) {
			t.Errorf("%s", name("prompt lengths are not the deal from the seed's input stream"))
		}
		if want := datasets.Deal(outs, c.n, c.seed, datasets.OutputStream); !slices.Equal(outputs, want) {
			t.Errorf("%s", name("max_tokens are not the deal from the seed's output stream"))
		}
		// Every scaled length once per full pass.
		for _, v := range []struct {
			what      string
			got, deck []int
		}{{"prompts", prompts, ins}, {"outputs", outputs, outs}} {
			for p := 0; (p+1)*len(v.deck) <= c.n; p++ {
				pass := slices.Sorted(slices.Values(v.got[p*len(v.deck) : (p+1)*len(v.deck)]))
				if !slices.Equal(pass, slices.Sorted(slices.Values(v.deck))) {
					t.Errorf("%s", name(v.what+": a pass does not deal each scaled length once"))
				}
			}
		}
		if slices.Equal(prompts, slices.Repeat([]int{prompts[0]}, len(prompts))) {
			t.Errorf("%s", name("every prompt has the same length"))
		}
		again := bodiesFor(&o)
		for i := range bodies {
			if !bytes.Equal(bodies[i], again[i]) {
				t.Fatalf("%s", name("the same seed built different bodies"))
			}
		}
		other := o
		other.Seed += 100
		if p2, _ := bodyLengths(t, bodiesFor(&other)); slices.Equal(p2, prompts) {
			t.Errorf("%s", name("another seed dealt the same prompt lengths"))
		}
	}
}

// The mismatch counters, the fallback prompt length and a failed
// request's input_lens compare with each request's own lengths.
func TestRunDatasetPerRequestExpectations(t *testing.T) {
	const n = 40
	for _, c := range []struct {
		name    string
		fault   func(i int) fault
		dataset string
	}{
		{"server echoes the lengths", nil, "sharegpt"},
		{"server answers at the means", func(int) fault { return faultBaseLengths }, "ShareGPT"},
		{"server answers at the means, fixed lengths", func(int) fault { return faultBaseLengths }, ""},
		{"no prompt count, failures", func(i int) fault {
			return []fault{faultNoPromptUsage, faultHTTP500, faultNone, faultPromptLength}[i%4]
		}, "sharegpt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMockServer(t, 0, 0, c.fault)
			opts := baseOptions(m.URL) // ISL 32, OSL 5
			opts.NumPrompts, opts.Load, opts.Dataset = n, model.Closed(1), c.dataset
			r, err := Run(context.Background(), opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			ins, outs := opts.lengths()
			if want := strings.ToLower(c.dataset); r.Dataset != want { // the canonical name
				t.Errorf("result dataset %q, want %q", r.Dataset, want)
			}
			wantPrompt, wantOutput, wantIn, wantFailed := 0, 0, 0, 0
			for i := range n {
				f := faultNone
				if c.fault != nil {
					f = c.fault(i) // one client: arrival order is request order
				}
				in, out := ins[i], outs[i]
				switch f {
				case faultBaseLengths:
					in, out = 32, 5
				case faultPromptLength:
					in++
				case faultHTTP500:
					wantFailed++
					if r.InputLens[i] != ins[i] || r.OutputLens[i] != 0 {
						t.Errorf("failed request %d: input_lens %d output_lens %d, want its own %d and 0", i, r.InputLens[i], r.OutputLens[i], ins[i])
					}
					continue
				}
				if in != ins[i] {
					wantPrompt++
				}
				if out != outs[i] {
					wantOutput++
				}
				wantIn += in
				if r.InputLens[i] != in || r.OutputLens[i] != out {
					t.Errorf("request %d: input_lens %d output_lens %d, want %d and %d", i, r.InputLens[i], r.OutputLens[i], in, out)
				}
			}
			if r.PromptTokenMismatches != wantPrompt || r.OutputTokenMismatches != wantOutput || r.Failed != wantFailed || r.TotalInputTokens != wantIn {
				t.Errorf("mismatches %d prompt, %d output; %d failed; %d input tokens: want %d, %d, %d, %d",
					r.PromptTokenMismatches, r.OutputTokenMismatches, r.Failed, r.TotalInputTokens, wantPrompt, wantOutput, wantFailed, wantIn)
			}
			if c.name == "server answers at the means" && (wantPrompt < n/2 || wantOutput < n/2) {
				t.Errorf("only %d and %d of %d dealt lengths differ from the means: the test shows nothing", wantPrompt, wantOutput, n)
			}
		})
	}
}

// Validate names an unknown dataset (an *datasets.UnknownError a caller can
// map to its flag), and bounds the prompt tokens the dealt lengths add up
// to, not NumPrompts × ISL: a lone request of a long-tailed dataset can
// exceed the bound its mean keeps under.
func TestValidateDataset(t *testing.T) {
	o := baseOptions("http://127.0.0.1:1")
	o.Dataset = "sonnet"
	err := o.Validate()
	var unknown *datasets.UnknownError
	if err == nil || err.Error() != `loadgen: unknown dataset "sonnet" (known: sharegpt)` || !errors.As(err, &unknown) {
		t.Errorf("unknown dataset: err %v", err)
	}
	if _, err := Run(context.Background(), o, nil); !errors.As(err, &unknown) {
		t.Errorf("Run with an unknown dataset: err %v", err)
	}

	// Ten prompts at the longest ISL (model.MaxSequenceTokens) average
	// the bound: their dealt lengths add up to more or less.
	const n, isl = 10, MaxPromptTokens / 10
	ds, _ := datasets.Lookup("sharegpt")
	ins, _ := ds.Scaled(isl, 10)
	sum := func(seed uint64) (s int) {
		for _, l := range datasets.Deal(ins, n, seed, datasets.InputStream) {
			s += l
		}
		return s
	}
	var long, short uint64
	for seed := uint64(1); long == 0 || short == 0; seed++ {
		if f := sum(seed); f > MaxPromptTokens && long == 0 {
			long = seed
		} else if f < MaxPromptTokens && short == 0 {
			short = seed
		}
	}
	for _, c := range []struct {
		dataset string
		seed    uint64
		ok      bool
	}{{"", long, true}, {"sharegpt", short, true}, {"sharegpt", long, false}} {
		o := baseOptions("http://127.0.0.1:1")
		o.NumPrompts, o.ISL, o.Dataset, o.Seed = n, isl, c.dataset, c.seed
		err := o.Validate()
		if c.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "10 prompts of sharegpt lengths averaging 10000000 tokens are")) {
			t.Errorf("dataset %q seed %d (prompts %d tokens): err %v", c.dataset, c.seed, sum(c.seed), err)
		}
	}
}

// Check's test request is request 0 of the load point, with its lengths.
func TestCheckSendsTheFirstDealtRequest(t *testing.T) {
	m := newMockServer(t, 0, 0, nil)
	opts := baseOptions(m.URL)
	opts.Dataset = "sharegpt"
	if err := Check(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	ins, outs := opts.lengths()
	prompts, outputs := bodyLengths(t, bodiesOf(t, m))
	if len(prompts) != 1 || prompts[0] != ins[0] || outputs[0] != outs[0] {
		t.Errorf("test request asked %v+%v tokens, want request 0's %d+%d", prompts, outputs, ins[0], outs[0])
	}
}

func bodiesFor(o *Options) [][]byte {
	in, out := o.lengths()
	return requestBodies(o, in, out)
}

// bodiesOf re-encodes the bodies the mock server received.
func bodiesOf(t *testing.T, m *mockServer) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out [][]byte
	for _, b := range m.bodies {
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}
