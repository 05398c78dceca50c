package loadgen

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
)

// Prompt token ids are drawn from [tokenLow, tokenHigh): inside every common
// vocabulary (≥ 32k entries) and clear of the special tokens that sit at
// either end of most of them.
const (
	tokenLow  = 1000
	tokenHigh = 30000
)

// promptWords are short common English words; each is about one token in the
// usual BPE vocabularies, which is what makes chat prompt lengths approximate.
var promptWords = strings.Fields(`the of and to in is was for on are with as be at by this had not
but from or have an they which one you were her all she there would their we him been has when who
will more no if out so said what up its about into than them can only other new some could time
these two may then do first any my now such like our over man me even most made after also did
many before must through back years where much your way well down should because each just those
people how too little state good very make world still own see men work long get here between both
life being under never day same another know while last might us great old year off come since
against go came right used take three`)

// requestBodies builds every request body of a load point up front, so no
// JSON is encoded on the timing path: request i asks for inputs[i] prompt
// tokens and outputs[i] output tokens (Options.lengths).
func requestBodies(o *Options, inputs, outputs []int) [][]byte {
	rng := rand.New(rand.NewPCG(o.Seed, streamPrompts))
	bodies := make([][]byte, o.NumPrompts)
	streamOptions := map[string]any{"include_usage": true}
	for i := range bodies {
		var payload map[string]any
		if o.endpoint() == Chat {
			payload = map[string]any{
				"model":                 o.Model,
				"messages":              []map[string]string{{"role": "user", "content": textPrompt(rng, inputs[i])}},
				"max_completion_tokens": outputs[i],
				"max_tokens":            outputs[i],
				"ignore_eos":            true,
				"stream":                true,
				"stream_options":        streamOptions,
			}
		} else {
			payload = map[string]any{
				"model":          o.Model,
				"prompt":         tokenPrompt(rng, inputs[i]),
				"max_tokens":     outputs[i],
				"ignore_eos":     true,
				"stream":         true,
				"stream_options": streamOptions,
			}
		}
		b, err := json.Marshal(payload)
		if err != nil {
			panic("loadgen: encoding a request body: " + err.Error()) // maps of plain values always encode
		}
		bodies[i] = b
	}
	return bodies
}

func tokenPrompt(rng *rand.Rand, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = tokenLow + rng.IntN(tokenHigh-tokenLow)
	}
	return ids
}

func textPrompt(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(promptWords[rng.IntN(len(promptWords))])
	}
	return b.String()
}
