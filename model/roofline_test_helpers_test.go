package model

// weightRead and gemmFLOPTime are a step's weight reads and GEMM FLOP
// time over tokens tokens, as Terms prices them (stepExperts once for
// both), for the tests that check each alone.
func (r *Roofline) weightRead(tokens float64) float64 {
	share, _ := r.stepExperts(tokens)
	return r.weightReadAt(share)
}

func (r *Roofline) gemmFLOPTime(tokens, sampled float64) float64 {
	share, load := r.stepExperts(tokens)
	return r.gemmFLOPTimeAt(tokens, sampled, share, load)
}
