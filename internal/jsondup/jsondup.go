package jsondup

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Duplicate is a key given twice in one object.
type Duplicate struct {
	Path   string // the object's path, e.g. "groups[2].settings"; "" for the top level
	Key    string
	Offset int64 // byte offset just after the second occurrence
}

// Find returns the first duplicate key in data, or nil. It reads data once
// (linear time); invalid JSON is not its concern and returns nil, leaving
// the error to the decoder that reads the values.
func Find(data []byte) *Duplicate {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	d, _ := walk(dec, "")
	return d
}

// walk reads one value; its first token is read here.
func walk(dec *json.Decoder, path string) (*Duplicate, bool) {
	tok, err := dec.Token()
	if err != nil {
		return nil, false
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
				return &Duplicate{Path: path, Key: key, Offset: dec.InputOffset()}, false
			}
			seen[key] = true
			sub := key
			if path != "" {
				sub = path + "." + key
			}
			if d, ok := walk(dec, sub); d != nil || !ok {
				return d, ok
			}
		}
		_, err := dec.Token()
		return nil, err == nil
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if d, ok := walk(dec, path+"["+strconv.Itoa(i)+"]"); d != nil || !ok {
				return d, ok
			}
		}
		_, err := dec.Token()
		return nil, err == nil
	}
	return nil, true
}
