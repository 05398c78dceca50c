package datasets

import "math/rand/v2"

// Streams of a PCG source (rand.NewPCG(seed, stream)) that deal one run's
// prompt and output lengths from its seed. The simulator and the load
// generator both deal from these, so a simulated and a measured run with
// the same seed and the same lengths give request i the same prompt and
// output length.
const (
	InputStream  = 0x696e7075 // "inpu"
	OutputStream = 0x6f757470 // "outp"
)

// Deck deals lengths like a shuffled deck: every value once per pass, in
// an order r shuffles, then reshuffled for the next pass. A benchmark
// client sends each prompt of its sample once, and a burst of a dataset's
// whole sample holds its longest request for certain, which sets how long
// the burst runs; drawn with replacement, a 1000-prompt burst of a
// 1000-length sample would miss a given length a third of the time.
type Deck struct {
	values []int
	r      *rand.Rand
	left   []int // the current pass, dealt from its end
}

// NewDeck returns a deck of values (not empty; not modified) shuffled by r.
// Two decks of the same values whose sources are seeded alike deal the
// same sequence.
func NewDeck(values []int, r *rand.Rand) *Deck {
	return &Deck{values: values, r: r}
}

// Next deals the next length. It panics on a deck of no values.
func (d *Deck) Next() int {
	if len(d.left) == 0 {
		if len(d.values) == 0 {
			panic("datasets: dealing from an empty deck")
		}
		d.left = append(d.left, d.values...)
	}
	// The pass is shuffled as it is dealt: the step of r.Shuffle's
	// Fisher–Yates that settles the card dealt next, the same draw in the
	// same order, so the deal is Shuffle's; a run that deals a few hundred
	// cards of a dataset of thousands does not shuffle them all.
	i := len(d.left) - 1
	if i > 0 {
		j := d.r.IntN(i + 1)
		d.left[i], d.left[j] = d.left[j], d.left[i]
	}
	v := d.left[i]
	d.left = d.left[:i]
	return v
}

// Deal returns the first n lengths a deck of values deals from seed on
// stream (InputStream or OutputStream).
func Deal(values []int, n int, seed, stream uint64) []int {
	d := NewDeck(values, rand.New(rand.NewPCG(seed, stream)))
	out := make([]int, n)
	for i := range out {
		out[i] = d.Next()
	}
	return out
}
