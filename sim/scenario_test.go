package sim

import (
	"cmp"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// scenarioPool is a PoolConfig with a testCost, as written in testdata/scenarios.
type scenarioPool struct {
	Workers          int      `json:"workers"`
	Cost             testCost `json:"cost"`
	KVCapacity       int      `json:"kv_capacity"`
	BlockSize        int      `json:"block_size"`
	MaxNumSeqs       int      `json:"max_num_seqs"`
	MaxBatchedTokens int      `json:"max_batched_tokens"`
}

func (p *scenarioPool) config() PoolConfig {
	if p == nil {
		return PoolConfig{}
	}
	// A file that states no limits runs vLLM's unversioned ones.
	return PoolConfig{Workers: p.Workers, Cost: p.Cost, KVCapacity: p.KVCapacity, BlockSize: cmp.Or(p.BlockSize, 16),
		MaxNumSeqs: cmp.Or(p.MaxNumSeqs, 256), MaxBatchedTokens: cmp.Or(p.MaxBatchedTokens, 8192)}
}

// scenario is one file of testdata/scenarios: load + deployment + costs.
type scenario struct {
	Description string        `json:"description"`
	Replicas    *scenarioPool `json:"replicas"`
	Prefill     *scenarioPool `json:"prefill"`
	Decode      *scenarioPool `json:"decode"`
	Transfer    struct {
		Latency  float64 `json:"latency"`
		PerToken float64 `json:"per_token"`
	} `json:"transfer"`
	Router        Routing `json:"router"`
	PrefillRouter Routing `json:"prefill_router"`
	Load          struct {
		Kind        model.LoadKind `json:"kind"`
		Concurrency int            `json:"max_concurrency"`
		Rate        float64        `json:"rate"`
		Burstiness  float64        `json:"burstiness"`
	} `json:"load"`
	Input      LengthDist `json:"input"`
	Output     LengthDist `json:"output"`
	NumPrompts int        `json:"num_prompts"`
	Seed       uint64     `json:"seed"`
}

func (s *scenario) config() Config {
	l := model.Load{Kind: s.Load.Kind, Concurrency: s.Load.Concurrency, Rate: s.Load.Rate, Burstiness: s.Load.Burstiness}
	if l.Kind == model.Burst {
		l.Rate = math.Inf(1)
	}
	return Config{Replicas: s.Replicas.config(), Prefill: s.Prefill.config(), Decode: s.Decode.config(),
		Transfer: Transfer{Latency: s.Transfer.Latency, PerToken: s.Transfer.PerToken},
		Router:   s.Router, PrefillRouter: s.PrefillRouter, Load: l,
		Input: s.Input, Output: s.Output, NumPrompts: s.NumPrompts, Seed: s.Seed}
}

// TestScenarios runs every scenario file and compares its metrics and pool
// statistics with the golden file (refresh with go test ./sim -update).
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var sc scenario
			dec := json.NewDecoder(strings.NewReader(string(data)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&sc); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			res := run(t, sc.config())
			for i := range res.Pools {
				res.Pools[i].Series = nil // keep golden files small; series are tested elsewhere
			}
			got, _ := json.MarshalIndent(res, "", "  ")
			golden := filepath.Join("testdata/golden", name+".json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantData, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./sim -update)", err)
			}
			var want, have any
			json.Unmarshal(wantData, &want)
			json.Unmarshal(got, &have)
			var diffs []string
			compareJSON("", want, have, &diffs)
			sort.Strings(diffs)
			for _, d := range diffs {
				t.Error(d)
			}
		})
	}
}

// compareJSON reports differences, comparing numbers with a relative tolerance
// of 1e-9 (floating-point contraction may differ across architectures).
func compareJSON(path string, want, have any, diffs *[]string) {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			*diffs = append(*diffs, path+": not an object")
			return
		}
		for k := range w {
			compareJSON(path+"."+k, w[k], h[k], diffs)
		}
		for k := range h {
			if _, ok := w[k]; !ok {
				*diffs = append(*diffs, path+"."+k+": unexpected")
			}
		}
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			*diffs = append(*diffs, path+": array length differs")
			return
		}
		for i := range w {
			compareJSON(path+"["+string(rune('0'+i%10))+"]", w[i], h[i], diffs)
		}
	case float64:
		h, ok := have.(float64)
		if !ok || !near(w, h, 1e-9) {
			*diffs = append(*diffs, path+": got "+jsonString(have)+", want "+jsonString(want))
		}
	default:
		if jsonString(want) != jsonString(have) {
			*diffs = append(*diffs, path+": got "+jsonString(have)+", want "+jsonString(want))
		}
	}
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }
