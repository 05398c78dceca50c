package sim

import "github.com/capsim/capsim/model"

// hitRate is the share of prompt tokens an ideal cache of block tokens
// per block serves over n requests of prompt tokens each, routed over
// workers replicas each of which sees every group's prompts (round-robin
// with many requests): a prompt hits the full blocks of its group's shared
// prefix after the group's first request on that replica, and its whole
// prompt's full blocks after its own first request there (cycled
// prompts); at most prompt−1 tokens (the last is always computed). It is
// the analytic value the simulated rate approaches when nothing is evicted,
// for single-turn prompts (Turns ≤ 1).
func hitRate(s model.Sharing, prompt, block, n, workers int) float64 {
	if !s.On() || prompt <= 1 || n <= 0 || block <= 0 || workers <= 0 {
		return 0
	}
	capTok := (prompt - 1) / block * block
	shared := min(s.SharedLen, prompt) / block * block
	whole := min(prompt/block*block, capTok)
	shared = min(shared, capTok)
	firstGroup := min(n, s.Groups*workers) // each group's first request on each replica misses
	hit := float64(n-firstGroup) * float64(shared)
	if s.PromptsPerGroup > 0 {
		firstPrompt := min(n, s.Groups*s.PromptsPerGroup*workers)
		hit += float64(n-firstPrompt) * float64(whole-shared)
	}
	return hit / (float64(n) * float64(prompt))
}
