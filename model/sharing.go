package model

import "fmt"

// Sharing describes how a workload's prompts share prefixes, which a
// replica's prefix cache (sim.PoolConfig.PrefixCaching) then serves. The zero
// value shares nothing. Two benchmark datasets are expressible:
// inference-perf's shared_prefix (Groups × PromptsPerGroup distinct
// prompts, each a group's SharedLen-token system prompt and a question,
// sent in one shuffled order, cycled) and vLLM bench's prefix_repetition
// (Groups prefixes of SharedLen tokens, PromptsPerGroup 0: every request
// a uniformly drawn prefix and a suffix of its own).
type Sharing struct {
	// Groups is the number of distinct shared prefixes (inference-perf's
	// num_groups, vLLM's prefix_repetition_num_prefixes); 0: no sharing.
	Groups int `json:"groups,omitempty"`
	// PromptsPerGroup is the distinct prompts of a group (inference-perf's
	// num_prompts_per_group); 0: every prompt's rest is its own.
	PromptsPerGroup int `json:"prompts_per_group,omitempty"`
	// SharedLen is each group's shared prefix in tokens (system_prompt_len,
	// prefix_repetition_prefix_len); a prompt's rest is its length less it.
	SharedLen int `json:"shared_len,omitempty"`
	// Turns makes each of the Groups × PromptsPerGroup prompts a
	// conversation of that many turns (inference-perf's
	// enable_multi_turn_chat, bounded): a turn's prompt holds the system
	// prompt, the turns before it (questions and answers) and a new
	// question of the drawn prompt length less SharedLen, so prompts grow
	// turn by turn. 0 or 1: single-turn prompts.
	Turns int `json:"turns,omitempty"`
}

// On says whether s describes any sharing.
func (s Sharing) On() bool { return s.Groups > 0 }

// maxSharedPrompts bounds Groups × PromptsPerGroup: the shuffled order of
// the distinct prompts is held in memory.
const maxSharedPrompts = 1 << 24

// maxTurns bounds Sharing.Turns: a turn's prompt is looked up block by
// block, and grows with the turns before it.
const maxTurns = 1000

// Validate says, naming the field, why s cannot be simulated.
func (s Sharing) Validate() error {
	switch {
	case s.Groups < 0:
		return fmt.Errorf("groups must not be negative, got %d", s.Groups)
	case s.PromptsPerGroup < 0:
		return fmt.Errorf("prompts per group must not be negative, got %d", s.PromptsPerGroup)
	case s.SharedLen < 0:
		return fmt.Errorf("the shared length must not be negative, got %d", s.SharedLen)
	case s.Groups == 0 && (s.PromptsPerGroup > 0 || s.SharedLen > 0):
		return fmt.Errorf("prompts per group or a shared length set without groups")
	case s.Turns < 0:
		return fmt.Errorf("turns must not be negative, got %d", s.Turns)
	case s.Turns > 1 && s.PromptsPerGroup == 0:
		return fmt.Errorf("turns (%d) need prompts per group: each distinct prompt is a conversation", s.Turns)
	case s.Turns > maxTurns:
		return fmt.Errorf("turns %d are more than %d", s.Turns, maxTurns)
	case s.PromptsPerGroup > 0 && s.Groups > maxSharedPrompts/s.PromptsPerGroup:
		return fmt.Errorf("groups × prompts per group (%d × %d) is more than %d distinct prompts", s.Groups, s.PromptsPerGroup, maxSharedPrompts)
	}
	return nil
}

// LongestPrompt is the longest prompt of s whose single-turn prompts are
// at most prompt tokens and answers at most out: a conversation's last
// turn holds the system prompt, every turn's question and all answers but
// its own.
func (s Sharing) LongestPrompt(prompt, out int) int {
	if s.Turns <= 1 || !s.On() {
		return prompt
	}
	q := max(prompt-s.SharedLen, 1)
	return s.SharedLen + s.Turns*q + (s.Turns-1)*out
}

// String describes s in a few words ("" for no sharing).
func (s Sharing) String() string {
	switch {
	case !s.On():
		return ""
	case s.PromptsPerGroup > 0 && s.Turns > 1:
		return fmt.Sprintf("shared prefix: %d groups × %d conversations of %d turns, %d-token system prompt", s.Groups, s.PromptsPerGroup, s.Turns, s.SharedLen)
	case s.PromptsPerGroup > 0:
		return fmt.Sprintf("shared prefix: %d groups × %d prompts, %d-token system prompt", s.Groups, s.PromptsPerGroup, s.SharedLen)
	}
	return fmt.Sprintf("prefix repetition: %d prefixes of %d tokens", s.Groups, s.SharedLen)
}

// MaxCached is the most leading tokens of a prompt of prompt tokens that
// a prefix cache can serve under s: all but the last when prompts repeat
// (PromptsPerGroup > 0), else at most the shared prefix; 0 without
// sharing. A bound for any block size: planners price best cases with it.
func (s Sharing) MaxCached(prompt int) int {
	switch {
	case !s.On() || prompt <= 1:
		return 0
	case s.PromptsPerGroup > 0:
		return prompt - 1
	}
	return min(s.SharedLen, prompt-1)
}
