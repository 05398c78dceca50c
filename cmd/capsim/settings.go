package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/capsim/capsim/engine"
)

// addEngineSettingsFlags registers the engine settings a user states,
// named as vLLM's flags name them, on fs (predict, validate, plan); the
// function it returns reads what the parsed flags state.
func addEngineSettingsFlags(fs *pflag.FlagSet, what string) func() (engine.Stated, error) {
	var s engine.Stated
	var prefixOn, prefixOff, eager, asyncOn, asyncOff, epOn, epOff bool
	fs.IntVar(&s.MaxNumBatchedTokens, engine.FlagMaxNumBatchedTokens, 0, "engine settings, as vLLM's flags name them (each, unless stated: "+what+"):\nthe per-step token budget")
	fs.IntVar(&s.MaxNumSeqs, engine.FlagMaxNumSeqs, 0, "the cap on running sequences per worker")
	fs.IntVar(&s.MaxModelLen, engine.FlagMaxModelLen, 0, "the longest request, prompt and output, in tokens")
	fs.Float64Var(&s.GPUMemoryUtilization, engine.FlagGPUMemoryUtilization, 0, "the share of GPU memory for weights and KV cache, in (0, 1]")
	fs.IntVar(&s.BlockSize, engine.FlagBlockSize, 0, "the KV-cache block size in tokens ("+engine.BlockSizesText()+")")
	fs.BoolVar(&prefixOn, engine.FlagPrefixCaching, false, "cache prompts' KV blocks for later requests sharing their prefix")
	fs.BoolVar(&prefixOff, "no-"+engine.FlagPrefixCaching, false, "do not cache prompts' prefixes")
	fs.BoolVar(&eager, engine.FlagEnforceEager, false, "run without CUDA graphs: every step pays eager kernel launches and all-reduces")
	fs.StringVar(&s.KVCacheDtype, engine.FlagKVCacheDtype, "", "the KV cache's element type ("+engine.KVCacheDtypes+"; auto: the checkpoint's)")
	fs.BoolVar(&asyncOn, engine.FlagAsyncScheduling, false, "schedule the next step while the GPU runs this one (vLLM 0.10 or later; on by default from 0.14)")
	fs.BoolVar(&asyncOff, "no-"+engine.FlagAsyncScheduling, false, "schedule each step after the last (vLLM 0.10 or later)")
	fs.BoolVar(&epOn, engine.FlagExpertParallel, false, "deal a mixture of experts' experts whole to every GPU of a worker (expert parallelism)")
	fs.BoolVar(&epOff, "no-"+engine.FlagExpertParallel, false, "split every expert over the worker's GPUs (tensor parallelism)")
	return func() (engine.Stated, error) {
		st := s
		for _, n := range []string{engine.FlagMaxNumBatchedTokens, engine.FlagMaxNumSeqs, engine.FlagMaxModelLen, engine.FlagBlockSize} {
			if f := fs.Lookup(n); fs.Changed(n) && f.Value.String() == "0" {
				return st, fmt.Errorf("--%s must be positive, got 0", n)
			}
		}
		if fs.Changed(engine.FlagGPUMemoryUtilization) && st.GPUMemoryUtilization == 0 {
			return st, fmt.Errorf("--%s must be a fraction in (0, 1], got 0", engine.FlagGPUMemoryUtilization)
		}
		var err error
		if st.PrefixCaching, err = onOff(fs, engine.FlagPrefixCaching, prefixOn, prefixOff, st.PrefixCaching); err != nil {
			return st, err
		}
		if st.AsyncScheduling, err = onOff(fs, engine.FlagAsyncScheduling, asyncOn, asyncOff, st.AsyncScheduling); err != nil {
			return st, err
		}
		if st.ExpertParallel, err = onOff(fs, engine.FlagExpertParallel, epOn, epOff, st.ExpertParallel); err != nil {
			return st, err
		}
		if fs.Changed(engine.FlagEnforceEager) {
			st.EnforceEager = &eager
		}
		if fs.Changed(engine.FlagKVCacheDtype) && st.KVCacheDtype == "" {
			return st, fmt.Errorf("--%s must name a type, got \"\"", engine.FlagKVCacheDtype)
		}
		return st, st.Validate()
	}
}

// onOff reads a vLLM boolean flag given as --NAME or --no-NAME (yes and no
// their parsed values): cur when neither was given, an error when both.
func onOff(fs *pflag.FlagSet, name string, yes, no bool, cur *bool) (*bool, error) {
	on, off := fs.Changed(name), fs.Changed("no-"+name)
	var v bool
	switch {
	case on && off:
		return cur, fmt.Errorf("--%s and --no-%[1]s contradict each other: give one", name)
	case on:
		v = yes
	case off:
		v = !no
	default:
		return cur, nil
	}
	return &v, nil
}
