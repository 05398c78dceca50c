package suggest

import "strings"

// Closest returns the candidate nearest to word, case-insensitively, and
// whether it is near enough to suggest: at most 1 edit for words of up to
// four letters, 2 up to eight, 3 beyond. A candidate that starts with word
// (a truncated name) is suggested too. Ties go to the earlier candidate.
func Closest(word string, candidates []string) (string, bool) {
	w := strings.ToLower(word)
	best, bestD := "", -1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := distance(w, lc)
		if len(w) >= 3 && strings.HasPrefix(lc, w) {
			d = min(d, 1)
		}
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 {
		return "", false
	}
	limit := 3
	switch n := len([]rune(w)); {
	case n <= 4:
		limit = 1
	case n <= 8:
		limit = 2
	}
	return best, bestD <= limit
}

// distance is the optimal-string-alignment edit distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
