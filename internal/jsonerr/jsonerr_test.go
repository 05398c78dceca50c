package jsonerr

import (
	"bytes"
	"encoding/json"
	"testing"
)

type doc struct {
	Name  string  `json:"name"`
	TP    int     `json:"tp"`
	Rate  float64 `json:"rate"`
	Items []int   `json:"items"`
}

func TestDescribe(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{" \n", "the file is empty"},
		{`{"name":`, "line 1: truncated JSON: the file ends before the document does"},
		{"{\"name\": \"a\",\n \"tp\": }", "line 2: invalid JSON: invalid character '}' looking for beginning of value"},
		{"{\n\"tp\": 1.5}", "line 2: field tp: 1.5 is not an integer"},
		{"{\n\"rate\": 1e400}", "line 2: field rate: 1e400 is out of range"},
		{"{\n\"tp\": 1e3}", "line 2: field tp: 1e3 is out of range, or not an integer written in digits"},
		{"{\"items\": 3}", "line 1: field items: number where a list was expected"},
		{"{\"name\": 3}", "line 1: field name: number where a string was expected"},
		{`{"other": 1}`, `unknown field "other"`},
	} {
		dec := json.NewDecoder(bytes.NewReader([]byte(tt.in)))
		dec.DisallowUnknownFields()
		var d doc
		err := dec.Decode(&d)
		if err == nil {
			t.Fatalf("%q decoded", tt.in)
		}
		if got := Describe([]byte(tt.in), err).Error(); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTrailing(t *testing.T) {
	for in, want := range map[string]string{"{}\n": "", "{}\n\ngarbage": "line 3: more after the document's closing brace", "{} {}": "line 1: more after the document's closing brace"} {
		dec := json.NewDecoder(bytes.NewReader([]byte(in)))
		var d doc
		if err := dec.Decode(&d); err != nil {
			t.Fatal(err)
		}
		p := Trailing([]byte(in), dec)
		if got := ""; p != nil {
			got = p.Error()
			if got != want {
				t.Errorf("%q: %q, want %q", in, got, want)
			}
		} else if want != "" {
			t.Errorf("%q: nothing, want %q", in, want)
		}
	}
}
