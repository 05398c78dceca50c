package jsondup

import (
	"runtime"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	tests := []struct {
		in         string
		path, key  string
		none       bool
		offsetLine int
	}{
		{in: `{"a":1,"b":2}`, none: true},
		{in: `{"a":1,"a":2}`, key: "a"},
		{in: `{"a":{"x":1},"b":[{"y":1,"y":2}]}`, path: "b[0]", key: "y"},
		{in: `{"g":[{},{},{"s":{"k":1,"k":1}}]}`, path: "g[2].s", key: "k"},
		{in: `[{"a":1},{"a":1}]`, none: true}, // same key in two objects is fine
		{in: `{"a":`, none: true},             // invalid JSON is the decoder's concern
		{in: `{"a":1,"b":{"c":[1,2,{"a":1}]},"a":3}`, key: "a"},
	}
	for _, tt := range tests {
		d := Find([]byte(tt.in))
		switch {
		case tt.none && d != nil:
			t.Errorf("%s: found %+v, want none", tt.in, d)
		case !tt.none && (d == nil || d.Path != tt.path || d.Key != tt.key):
			t.Errorf("%s: found %+v, want %q in %q", tt.in, d, tt.key, tt.path)
		case d != nil && !strings.Contains(tt.in[:d.Offset], `"`+tt.key+`"`):
			t.Errorf("%s: offset %d before the key", tt.in, d.Offset)
		}
	}
}

func FuzzFind(f *testing.F) {
	f.Add([]byte(`{"a":{"x":1},"b":[{"y":1,"y":2}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := Find(data); d != nil && (d.Offset < 0 || d.Offset > int64(len(data))) {
			t.Fatalf("offset %d outside the input", d.Offset)
		}
	})
}

// TestFindDeepNesting: the path is not built per level (nesting 10,000
// deep took 178 MB, 100,000 deep 13 GB), and nesting past MaxDepth stops
// the walk.
func TestFindDeepNesting(t *testing.T) {
	for _, depth := range []int{MaxDepth - 1, 100 * MaxDepth} {
		deep := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if d := Find(deep); d != nil {
			t.Fatalf("found %+v in arrays", d)
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
			t.Fatalf("%d nested arrays allocated %d MB, want under 16", depth, got>>20)
		}
	}
	// A duplicate within MaxDepth is still found, with its path.
	in := strings.Repeat(`{"a":[`, 50) + `{"k":1,"k":2}` + strings.Repeat("]}", 50)
	d := Find([]byte(in))
	if d == nil || d.Key != "k" || d.Path != strings.TrimPrefix(strings.Repeat(".a[0]", 50), ".") {
		t.Errorf("found %+v", d)
	}
}
