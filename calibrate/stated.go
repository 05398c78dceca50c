package calibrate

import (
	"cmp"
	"fmt"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
)

// withKVCache is m with the KV cache's element size s.KVCacheDtype
// states: the cache's capacity and the bytes each decode step reads.
func withKVCache(s engine.Settings, m model.LLM) model.LLM {
	if b := engine.KVCacheBytes(s.KVCacheDtype); b > 0 {
		m.KVCacheBytes = b
	}
	return m
}

// deployed is m laid out over its workers as s states: data-parallel
// attention and expert parallelism.
func deployed(m model.LLM, s engine.Settings) model.LLM {
	return m.WithAttentionDP(s.DPAttention).WithExpertParallel(s.ExpertParallel)
}

// checkStated refuses stated settings that vLLM would refuse together
// with the settings they meet: async scheduling where the engine has no
// such flag, a token budget below the sequence cap, or, for workers
// without chunked prefill (engine.ID.PrefillBudgetCoversContext), below
// the max-model-len.
func checkStated(s engine.Settings, st engine.Stated, e engine.ID, disaggregated bool, maxContext int) error {
	if err := engine.CheckAsyncScheduling(e, st.AsyncScheduling); err != nil {
		return err
	}
	if st.MaxNumBatchedTokens == 0 && st.MaxNumSeqs == 0 && st.MaxModelLen == 0 {
		return nil
	}
	budget, seqs := s.Budget(), s.SeqCap()
	if budget < seqs {
		return fmt.Errorf("--%s %d must be at least --%s %d, as vLLM requires", engine.FlagMaxNumBatchedTokens, budget, engine.FlagMaxNumSeqs, seqs)
	}
	if mml := cmp.Or(s.MaxModelLen, maxContext); disaggregated && e.PrefillBudgetCoversContext() && budget < mml {
		return fmt.Errorf("--%s %d is below --%s %d: %s's prefill workers run without chunked prefill, and vLLM then refuses a smaller budget",
			engine.FlagMaxNumBatchedTokens, budget, engine.FlagMaxModelLen, mml, e.Label)
	}
	return nil
}

// engineFlags are the settings d runs with, as vLLM's flags name them,
// each marked stated, the engine version's default on d's GPU (at
// maxModelLen), or the calibrated deployment's own; and the rule the
// defaults follow.
func engineFlags(d Deployment, maxModelLen int, fromGroup bool) ([]engine.Flag, string) {
	// A release run on its other engine generation has that one's defaults.
	e, gen := d.Engine, ""
	if g, ok := e.AsGeneration(d.Settings.Generation); ok {
		e, gen = g, "; run on "+d.Settings.Generation.Note()
	}
	def, _ := engine.Defaults(e, d.GPU.Device(), maxModelLen)
	s := d.Settings
	util := func(u float64) string { return engine.FormatFloat(cmp.Or(u, engine.VLLMGPUMemoryUtilization)) }
	yes := func(b bool) string { return fmt.Sprint(b) }
	dtype := cmp.Or(d.Settings.KVCacheDtype, "auto")
	rows := []struct{ name, value, def string }{
		{engine.FlagMaxNumBatchedTokens, engine.FormatInt(s.Budget()), engine.FormatInt(def.MaxNumBatchedTokens)},
		{engine.FlagMaxNumSeqs, engine.FormatInt(s.SeqCap()), engine.FormatInt(def.MaxNumSeqs)},
		{engine.FlagMaxModelLen, engine.FormatInt(d.MaxModelLen), engine.FormatInt(cmp.Or(def.MaxModelLen, d.LLM.MaxContext))},
		{engine.FlagGPUMemoryUtilization, util(s.GPUMemoryUtilization), util(def.GPUMemoryUtilization)},
		{engine.FlagBlockSize, engine.FormatInt(s.Block()), engine.FormatInt(def.BlockSize)},
		{engine.FlagPrefixCaching, yes(s.PrefixCaching == engine.PrefixOn), yes(def.PrefixCaching == engine.PrefixOn)},
		{engine.FlagEnforceEager, yes(s.DecodeEager), "false"},
		{engine.FlagKVCacheDtype, dtype, "auto"},
	}
	if d.LLM.IsMoE() { // listed where the model has experts to spread
		rows = append(rows, struct{ name, value, def string }{engine.FlagExpertParallel, yes(s.ExpertParallel > 0), "false"})
	}
	if engine.HasAsyncScheduling(e) { // listed where the engine (as it ran) has the flag
		rows = append(rows, struct{ name, value, def string }{engine.FlagAsyncScheduling,
			yes(engine.AsyncSchedulingOn(e, s.AsyncScheduling)), yes(engine.AsyncSchedulingOn(e, nil))})
	}
	flags := make([]engine.Flag, len(rows))
	for i, r := range rows {
		from := engine.FromDefault
		switch {
		case d.Stated.Has(r.name):
			from = engine.FromStated
		case r.value != r.def && fromGroup:
			from = engine.FromCalibrated
		}
		flags[i] = engine.Flag{Name: r.name, Value: r.value, From: from}
	}
	return flags, def.Rule + gen
}
