package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/capsim/capsim/model"
)

// sharingFlags describe how a workload's prompts share prefixes, as
// inference-perf's shared_prefix data and vLLM bench's prefix_repetition
// dataset name them (model.Sharing).
type sharingFlags struct {
	groups, perGroup, systemLen  int
	repPrefix, repSuffix, repNum int
	turns                        int
	flags                        *pflag.FlagSet
}

func addSharingFlags(fs *pflag.FlagSet, f *sharingFlags) {
	f.flags = fs
	fs.IntVar(&f.groups, "prefix-groups", 0, "shared-prefix workload (inference-perf shared_prefix): groups of prompts, each sharing one system prompt")
	fs.IntVar(&f.perGroup, "prompts-per-group", 0, "shared-prefix workload: distinct prompts (questions) per group, sent in one shuffled order, cycled")
	fs.IntVar(&f.systemLen, "system-prompt-len", 0, "shared-prefix workload: tokens of each group's system prompt (a question is --isl less it)")
	fs.IntVar(&f.turns, "turns", 0, "shared-prefix workload: each prompt is a conversation of this many turns, each turn's prompt holding the turns before it\n(questions and answers) and a new question of --isl less --system-prompt-len tokens")
	fs.IntVar(&f.repPrefix, "prefix-repetition-prefix-len", 0, "vLLM bench's prefix_repetition dataset: tokens of each shared prefix")
	fs.IntVar(&f.repSuffix, "prefix-repetition-suffix-len", 0, "prefix_repetition: tokens of each request's own suffix (the prompt is prefix + suffix: --isl)")
	fs.IntVar(&f.repNum, "prefix-repetition-num-prefixes", 0, "prefix_repetition: distinct prefixes, one drawn per request")
}

// sharing is the workload the flags describe and the prompt length it
// implies (prefix_repetition's prefix + suffix; 0 when it implies none). isl is --isl (0: not given).
func (f sharingFlags) sharing(isl int) (model.Sharing, int, error) {
	changed := func(names ...string) bool {
		for _, n := range names {
			if f.flags != nil && f.flags.Changed(n) {
				return true
			}
		}
		return false
	}
	shared := changed("prefix-groups", "prompts-per-group", "system-prompt-len", "turns")
	rep := changed("prefix-repetition-prefix-len", "prefix-repetition-suffix-len", "prefix-repetition-num-prefixes")
	switch {
	case shared && rep:
		return model.Sharing{}, 0, fmt.Errorf("--prefix-groups/--prompts-per-group/--system-prompt-len and --prefix-repetition-* describe two workloads; give one")
	case shared:
		if f.groups <= 0 || f.perGroup <= 0 {
			return model.Sharing{}, 0, fmt.Errorf("--prefix-groups and --prompts-per-group must both be positive, got %d and %d", f.groups, f.perGroup)
		}
		if f.systemLen < 0 {
			return model.Sharing{}, 0, fmt.Errorf("--system-prompt-len must not be negative, got %d", f.systemLen)
		}
		if isl > 0 && isl <= f.systemLen {
			return model.Sharing{}, 0, fmt.Errorf("--isl %d must exceed --system-prompt-len %d: a question is the rest of the prompt", isl, f.systemLen)
		}
		if f.turns < 0 {
			return model.Sharing{}, 0, fmt.Errorf("--turns must not be negative, got %d", f.turns)
		}
		sh := model.Sharing{Groups: f.groups, PromptsPerGroup: f.perGroup, SharedLen: f.systemLen, Turns: f.turns}
		return sh, 0, flagErrOf(sh.Validate())
	case rep:
		if f.repPrefix <= 0 || f.repSuffix <= 0 || f.repNum <= 0 {
			return model.Sharing{}, 0, fmt.Errorf("--prefix-repetition-prefix-len, -suffix-len and -num-prefixes must all be positive, got %d, %d and %d", f.repPrefix, f.repSuffix, f.repNum)
		}
		n := f.repPrefix + f.repSuffix
		if isl > 0 && isl != n {
			return model.Sharing{}, 0, fmt.Errorf("--isl %d is not --prefix-repetition-prefix-len + -suffix-len (%d); give one or the other", isl, n)
		}
		sh := model.Sharing{Groups: f.repNum, SharedLen: f.repPrefix}
		return sh, n, flagErrOf(sh.Validate())
	}
	return model.Sharing{}, 0, nil
}

func flagErrOf(err error) error {
	if err != nil {
		return fmt.Errorf("prefix sharing: %w", err)
	}
	return nil
}
