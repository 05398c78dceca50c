// Package suggest finds the known word closest to a mistyped one, for "did
// you mean" hints: Closest compares by edit distance (insertions, deletions,
// substitutions and swaps of neighbours, each costing one) and accepts a
// candidate only when the distance is small for the word's length.
package suggest
