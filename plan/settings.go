package plan

import (
	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// Engine limits the settings search stays within: vLLM accepts any
// max-num-seqs up to its block table and CUDA-graph limits and needs
// max-num-batched-tokens ≥ max-num-seqs; these bounds keep the search to
// values deployments use (V1 on large GPUs defaults to 1024 sequences).
const (
	minNumSeqs     = 16
	maxNumSeqs     = 1024
	minTokenBudget = 512
	maxTokenBudget = 32768
)

// poolSetting overrides one pool's engine settings (0: keep).
type poolSetting struct{ seqs, budget int }

// variant is one alternative to the engines' default settings.
type variant struct{ a, b poolSetting } // a: replicas or prefill; b: decode

// applyTo is d with v's settings (nil: none), each changed pool's KV cache
// resized as the engine sizes it for them (calibrate.WithBatchLimits).
func (v *variant) applyTo(d calibrate.Deployment, disagg bool) (calibrate.Deployment, error) {
	if v == nil {
		return d, nil
	}
	if !disagg {
		return d.WithBatchLimits(calibrate.RoleAggregated, v.a.seqs, v.a.budget)
	}
	d, err := d.WithBatchLimits(calibrate.RolePrefill, v.a.seqs, v.a.budget)
	if err != nil {
		return d, err
	}
	return d.WithBatchLimits(calibrate.RoleDecode, v.b.seqs, v.b.budget)
}

func seqsOf(p sim.PoolConfig) int { return p.MaxNumSeqs }

// variants are the engine settings tried on a near miss, in a fixed order,
// one setting changed at a time. Aggregated: a smaller token budget
// shortens the prefill chunks that stall running decodes (the TPOT tail);
// fewer sequences per step shorten each step. Disaggregated: fewer
// sequences per decode step (TPOT), a larger or smaller prefill budget
// (batching prompts against the TTFT of each).
// A variant whose KV cache, resized for its limits, no longer holds the
// workload's longest request is not tried.
func variants(t *template, w workload.Workload) []variant {
	var out []variant
	ok := func(s poolSetting, p sim.PoolConfig) bool {
		seqs, budget := seqsOf(p), budgetOf(p)
		if s.seqs > 0 {
			seqs = s.seqs
		}
		if s.budget > 0 {
			budget = s.budget
		}
		changed := seqs != seqsOf(p) || budget != budgetOf(p)
		return changed && seqs >= minNumSeqs && seqs <= maxNumSeqs && budget >= minTokenBudget && budget <= maxTokenBudget && budget >= seqs
	}
	pinned := t.dep.Stated
	add := func(v variant, pa, pb sim.PoolConfig, disagg bool) {
		if (v.a != poolSetting{} && !ok(v.a, pa)) || (disagg && v.b != poolSetting{} && !ok(v.b, pb)) {
			return
		}
		if (pinned.MaxNumBatchedTokens > 0 && (v.a.budget > 0 || v.b.budget > 0)) || (pinned.MaxNumSeqs > 0 && (v.a.seqs > 0 || v.b.seqs > 0)) {
			return // the user stated it: the search does not vary it
		}
		if d, err := v.applyTo(t.dep, disagg); err != nil || d.Fits(w) != nil {
			return
		}
		for _, w := range out {
			if w == v {
				return
			}
		}
		out = append(out, v)
	}
	cfg := t.dep.Config
	if !t.disagg {
		p := cfg.Replicas
		S, B := seqsOf(p), budgetOf(p)
		for _, v := range []variant{
			{a: poolSetting{budget: B / 2}}, {a: poolSetting{budget: B / 4}}, {a: poolSetting{seqs: S / 2}},
		} {
			add(v, p, sim.PoolConfig{}, false)
		}
		return out
	}
	pp, dp := cfg.Prefill, cfg.Decode
	S, B := seqsOf(dp), budgetOf(pp)
	for _, v := range []variant{
		{b: poolSetting{seqs: S / 2}}, {a: poolSetting{budget: 2 * B}}, {a: poolSetting{budget: B / 2}},
	} {
		if v.a.budget > 0 && v.a.budget < t.dep.MaxModelLen && t.dep.Engine.PrefillBudgetCoversContext() {
			continue // vLLM would refuse the budget: such a variant could not be deployed
		}
		add(v, pp, dp, true)
	}
	return out
}

// settingsOf reports the engine settings of a deployment's pools; v marks
// the values the search changed.
func settingsOf(d calibrate.Deployment, disagg bool, v *variant) []predict.EngineSettings {
	out := predict.SettingsOf(d)
	if v == nil {
		return out
	}
	for i := range out {
		s := v.a
		if out[i].Role == "decode" {
			s = v.b
		}
		out[i].Searched = s != poolSetting{}
	}
	return out
}
