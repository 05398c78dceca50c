package jsondup

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// MaxDepth is the deepest nesting Find walks, encoding/json's own limit:
// deeper input is invalid JSON to the decoder that reads the values.
const MaxDepth = 10000

// Duplicate is a key given twice in one object.
type Duplicate struct {
	Path   string // the object's path, e.g. "groups[2].settings"; "" for the top level
	Key    string
	Offset int64 // byte offset just after the second occurrence
}

// Find returns the first duplicate key in data, or nil. It reads data once
// (linear time and memory: the path is joined only for a duplicate);
// invalid JSON, or JSON nested deeper than MaxDepth, is not its concern and
// returns nil, leaving the error to the decoder that reads the values.
func Find(data []byte) *Duplicate {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var w walker
	d, _ := w.walk(dec)
	return d
}

// walker holds the path to the value being read, one segment per level
// (".key" or "[i]").
type walker struct{ path []string }

func (w *walker) pathString() string {
	return strings.TrimPrefix(strings.Join(w.path, ""), ".")
}

// walk reads one value; its first token is read here.
func (w *walker) walk(dec *json.Decoder) (*Duplicate, bool) {
	tok, err := dec.Token()
	if err != nil {
		return nil, false
	}
	switch tok {
	case json.Delim('{'), json.Delim('['):
		if len(w.path) >= MaxDepth {
			return nil, false
		}
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, false
			}
			key, _ := kt.(string)
			if seen[key] {
				return &Duplicate{Path: w.pathString(), Key: key, Offset: dec.InputOffset()}, false
			}
			seen[key] = true
			w.path = append(w.path, "."+key)
			d, ok := w.walk(dec)
			w.path = w.path[:len(w.path)-1]
			if d != nil || !ok {
				return d, ok
			}
		}
		_, err := dec.Token()
		return nil, err == nil
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			w.path = append(w.path, "["+strconv.Itoa(i)+"]")
			d, ok := w.walk(dec)
			w.path = w.path[:len(w.path)-1]
			if d != nil || !ok {
				return d, ok
			}
		}
		_, err := dec.Token()
		return nil, err == nil
	}
	return nil, true
}
