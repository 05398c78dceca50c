package calibrate

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

// TestHostileProfiles: profiles with absurd numbers are refused when read,
// with these exact errors (issue 15: 1e308 transfer latencies hung the
// simulator, zero costs predicted 4,841 req/s at TPOT 0).
func TestHostileProfiles(t *testing.T) {
	cases := []struct {
		name string
		edit func(p *Profile)
		want string
	}{
		{"transfer latency 1e308", func(p *Profile) { p.Groups[0].Transfer.LatencyS = 1e308 },
			"calibrate: profile: group 0 (dynamo-0.3.0): transfer.latency_s is 1e+308; want a number from 0 to 60"},
		{"transfer per token", func(p *Profile) { p.Groups[0].Transfer.PerTokenS = 1 },
			"calibrate: profile: group 0 (dynamo-0.3.0): transfer.per_token_s is 1; want a number from 0 to 0.01"},
		{"zero costs", func(p *Profile) { p.Groups[1].Entries[0].Coeffs = model.Coeffs{} },
			"calibrate: profile: group 1 (vllm-0.8.4) entry 0 (aggregated TP4): coeffs.weight is 0; want a number from 0.01 to 10000"},
		{"tiny costs", func(p *Profile) {
			c := &p.Groups[2].Entries[0].Coeffs
			c.Weight, c.Compute, c.Attn, c.KV, c.Comm = 1e-300, 1e-300, 1e-300, 1e-300, 1e-300
		}, "calibrate: profile: group 2 (vllm-0.9.0.1) entry 0 (aggregated TP4): coeffs.weight is 1e-300; want a number from 0.01 to 10000"},
		{"overhead of an hour", func(p *Profile) { p.Groups[0].Entries[2].Coeffs.Overhead = 3600 },
			"calibrate: profile: group 0 (dynamo-0.3.0) entry 2 (decode TP4): coeffs.overhead_s is 3600; want a number from 0 to 10"},
		{"negative frontend latency", func(p *Profile) {
			p.Groups[1].Frontend = &FrontendFit{LatencyS: -0.05, Source: SourcePrior, RelSigma: 0.1}
		},
			"calibrate: profile: group 1 (vllm-0.8.4): frontend.latency_s is -0.05; want a number from 0 to 60"},
		{"negative frontend serial work", func(p *Profile) {
			p.Groups[1].Frontend = &FrontendFit{LatencyS: 0.05, ServiceS: -0.01, Source: SourcePrior, RelSigma: 0.1}
		},
			"calibrate: profile: group 1 (vllm-0.8.4): frontend.service_s is -0.01; want a number from 0 to 60"},
		{"negative frontend sigma", func(p *Profile) {
			p.Groups[1].Frontend = &FrontendFit{LatencyS: 0.05, Source: SourcePrior, RelSigma: -1}
		},
			"calibrate: profile: group 1 (vllm-0.8.4): frontend.rel_sigma is -1; want a number from 0 to 100"},
		{"rel_sigma -5", func(p *Profile) {
			s := map[string]float64{}
			for k, v := range p.Groups[2].Entries[0].RelSigma {
				s[k] = v
			}
			s["kv"] = -5
			p.Groups[2].Entries[0].RelSigma = s
		}, "calibrate: profile: group 2 (vllm-0.9.0.1) entry 0 (aggregated TP4): rel_sigma is -5; want a number from 0 to 100 (of kv)"},
		{"transfer sigma", func(p *Profile) { p.Groups[0].Transfer.RelSigma = 1e9 },
			"calibrate: profile: group 0 (dynamo-0.3.0): transfer.rel_sigma is 1e+09; want a number from 0 to 100"},
		{"gpu_memory_utilization 5", func(p *Profile) { p.Groups[1].Settings.GPUMemoryUtilization = 5 },
			"calibrate: profile: group 1 (vllm-0.8.4): settings.gpu_memory_utilization is 5; want a number from 0 to 1"},
		{"negative block size", func(p *Profile) { p.Groups[0].Settings.BlockSize = -16 },
			"calibrate: profile: group 0 (dynamo-0.3.0): settings.block_size is -16; want a number from 0 to 4096"},
		{"huge max_num_seqs", func(p *Profile) { p.Groups[1].Settings.MaxNumSeqs = 1 << 40 },
			"calibrate: profile: group 1 (vllm-0.8.4): settings.max_num_seqs is 1.099511627776e+12; want a number from 0 to 1e+06"},
		{"TP 100000", func(p *Profile) { p.Groups[1].Entries[0].TP = 100000 },
			"calibrate: profile: group 1 (vllm-0.8.4) entry 0 (aggregated TP100000): tp is 100000; want a number from 1 to 1024"},
		{"negative PP", func(p *Profile) { p.Groups[1].Entries[0].PP = -2 },
			"calibrate: profile: group 1 (vllm-0.8.4) entry 0 (aggregated TP4): pp is -2; want a number from 0 to 1024"},
		{"graph size 0", func(p *Profile) { p.Groups[1].Entries[0].GraphSizes = []int{1, 0} },
			"calibrate: profile: group 1 (vllm-0.8.4) entry 0 (aggregated TP4): graph_sizes is 0; want a number from 1 to 65536"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := testProfile()
			tc.edit(p)
			b, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseProfile(b)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
	// Duplicate keys are reported, not resolved silently.
	dup := bytes.Replace(b0(), []byte(`"latency_s": 0.01,`), []byte(`"latency_s": 0.01, "latency_s": 1e308,`), 1)
	if _, err := ParseProfile(dup); err == nil || err.Error() != `calibrate: profile: duplicate key "latency_s" in groups[0].transfer` {
		t.Errorf("duplicate key: err = %v", err)
	}
	// Numbers JSON cannot hold as a float64 are decoding errors.
	b, _ := testProfile().Marshal()
	huge := bytes.Replace(b, []byte(`"latency_s": 0.01`), []byte(`"latency_s": 1e400`), 1)
	_, err := ParseProfile(huge)
	const want = "calibrate: profile: line 20: field groups.transfer.latency_s: 1e400 is out of range"
	if err == nil || err.Error() != want {
		t.Errorf("1e400: err = %v\nwant %s", err, want)
	}
}

func b0() []byte {
	b, _ := testProfile().Marshal()
	return b
}

// TestEveryCoefficientHasABound: a coefficient added to model.Coeffs needs
// its physical range in profileBounds.
func TestEveryCoefficientHasABound(t *testing.T) {
	if len(model.CoeffNames) != len(model.Coeffs{}.Vector()) {
		t.Fatalf("%d names for %d coefficients", len(model.CoeffNames), len(model.Coeffs{}.Vector()))
	}
	for _, n := range model.CoeffNames {
		if _, ok := profileBounds["coeffs."+n]; !ok {
			t.Errorf("profileBounds has no entry coeffs.%s", n)
		}
	}
}

// TestDefaultProfileWithinBounds: the shipped fit passes its own checks.
func TestDefaultProfileWithinBounds(t *testing.T) {
	shippedProfile(t)
}

// shippedProfile is the embedded default profile, read from disk
// (calibrate's tests must not import fixtures) and parsed.
func shippedProfile(t *testing.T) *Profile {
	t.Helper()
	b, err := os.ReadFile("../fixtures/default-profile.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzParseProfile: any input is either refused with a one-line
// "calibrate: profile" error or read into a profile that round-trips.
func FuzzParseProfile(f *testing.F) {
	if b, err := os.ReadFile("../fixtures/default-profile.json"); err == nil {
		f.Add(b)
	}
	b, _ := testProfile().Marshal()
	f.Add(b)
	f.Add([]byte(`{"schema":"capsim.profile/v1","groups":[{"gpu":"H20","model":"m","engine":"e","transfer":{"latency_s":1e308},"entries":[]}],"series":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "calibrate: ") || strings.Contains(msg, "\n") {
				t.Fatalf("bad error text %q", msg)
			}
			return
		}
		out, err := p.Marshal()
		if err != nil {
			t.Fatalf("a profile that was read does not encode: %v", err)
		}
		if _, err := ParseProfile(out); err != nil {
			t.Fatalf("a profile that was read is refused after encoding: %v", err)
		}
	})
}
