package suggest

import "testing"

func TestClosest(t *testing.T) {
	cmds := []string{"predict", "plan", "fit", "data", "validate", "bench", "plot", "help", "version"}
	tests := []struct {
		word string
		want string
		ok   bool
	}{
		{"predcit", "predict", true}, // a swap
		{"prdict", "predict", true},
		{"fti", "fit", true},
		{"valdiate", "validate", true},
		{"vers", "version", true}, // a truncated name
		{"PLOT", "plot", true},
		{"deploy", "", false},
		{"x", "", false},
	}
	for _, tt := range tests {
		got, ok := Closest(tt.word, cmds)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tt.word, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := Closest("anything", nil); ok {
		t.Error("no candidates must suggest nothing")
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"gpu", "gpus", 1}} {
		if got := distance(tt.a, tt.b); got != tt.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}
