package model

// Step describes the work of one engine forward pass, the unit the cost
// model prices. A pure prefill step has DecodeSeqs = 0; a pure decode step
// has PrefillTokens = 0; chunked prefill mixes both.
type Step struct {
	// PrefillTokens is the number of prompt tokens computed in the step (sum of chunk lengths).
	PrefillTokens int
	// PrefillSeqs is the number of sequences contributing prefill chunks.
	PrefillSeqs int
	// PrefillAttn is the attention work of the prefill chunks in token-pairs:
	// for a chunk of c tokens starting after p cached tokens, c·p + c·(c+1)/2.
	PrefillAttn float64
	// DecodeSeqs is the number of sequences generating one token each.
	DecodeSeqs int
	// DecodeKV is the total context (KV tokens) the decoding sequences attend to.
	DecodeKV float64
}

// ChunkAttn is the attention work, in token pairs, of computing c prompt
// tokens after p tokens already in the KV cache (causal attention).
func ChunkAttn(p, c int) float64 {
	return float64(c)*float64(p) + float64(c)*float64(c+1)/2
}
