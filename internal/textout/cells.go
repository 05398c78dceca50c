package textout

import "strconv"

// Number writes a number for a tidy CSV: six significant digits, never
// an exponent, so a spreadsheet reads a number and not the table's text.
func Number(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64) // exact at six digits, whatever the magnitude
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// Plural is one or many, by n.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
