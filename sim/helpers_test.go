package sim

import "github.com/capsim/capsim/model"

// testCost is a cheap, documented cost model for tests and benchmarks:
// a step takes Overhead, plus PerPrefillToken per prompt token and PerAttn
// per attention token pair, plus (when it decodes) DecodeBase + PerSeq per
// decoding sequence + PerKV per KV token attended. Its DecodeAffine agrees
// with StepTime on pure decode steps.
type testCost struct {
	Overhead        float64 `json:"overhead"`
	PerPrefillToken float64 `json:"per_prefill_token"`
	PerAttn         float64 `json:"per_attn"`
	DecodeBase      float64 `json:"decode_base"`
	PerSeq          float64 `json:"per_seq"`
	PerKV           float64 `json:"per_kv"`
}

func (c testCost) StepTime(s model.Step) float64 {
	t := c.Overhead + c.PerPrefillToken*float64(s.PrefillTokens) + c.PerAttn*s.PrefillAttn
	if s.DecodeSeqs > 0 {
		t += c.DecodeBase + c.PerSeq*float64(s.DecodeSeqs) + c.PerKV*s.DecodeKV
	}
	return t
}

func (c testCost) DecodeAffine(n int) (float64, float64) {
	return c.Overhead + c.DecodeBase + c.PerSeq*float64(n), c.PerKV
}

// h20Like approximates an H20 at TP4 serving a mid-sized model: prefill
// 1e-4 s per token; decode 15 ms per step + 0.1 ms per sequence + 1e-8 s
// per KV token.
var h20Like = testCost{PerPrefillToken: 1e-4, DecodeBase: 0.015, PerSeq: 1e-4, PerKV: 1e-8}
