package jsondup

import (
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
