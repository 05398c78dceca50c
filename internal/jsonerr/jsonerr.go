package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Problem is why a document could not be decoded.
type Problem struct {
	Line   int    // 1-based; 0 when the decoder gave no position
	Field  string // the dotted field path of a type error ("" otherwise)
	Reason string // plain words, e.g. "1.5 is not an integer"
}

// Error is "line N: field F: reason", leaving out what is unknown.
func (p Problem) Error() string {
	var parts []string
	if p.Line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", p.Line))
	}
	if p.Field != "" {
		parts = append(parts, "field "+p.Field)
	}
	return strings.Join(append(parts, p.Reason), ": ")
}

// Describe turns err, from decoding data, into a Problem.
func Describe(data []byte, err error) Problem {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return Problem{Reason: "the file is empty"}
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return Problem{Line: Line(data, int64(len(bytes.TrimRight(data, " \t\r\n")))), Reason: "truncated JSON: the file ends before the document does"}
	case errors.As(err, &se):
		return Problem{Line: Line(data, se.Offset), Reason: "invalid JSON: " + se.Error()}
	case errors.As(err, &te):
		return Problem{Line: Line(data, te.Offset), Field: te.Field, Reason: typeReason(te)}
	}
	return Problem{Reason: strings.TrimPrefix(err.Error(), "json: ")}
}

// Trailing reports content after the document dec has just decoded, as a
// Problem at its line; nil when the rest of data is blank.
func Trailing(data []byte, dec *json.Decoder) *Problem {
	if _, err := dec.Token(); err == io.EOF {
		return nil
	}
	return &Problem{Line: Line(data, dec.InputOffset()), Reason: "more after the document's closing brace"}
}

// Line is the 1-based line of byte offset off in data.
func Line(data []byte, off int64) int {
	return bytes.Count(data[:min(max(off, 0), int64(len(data)))], []byte("\n")) + 1
}

// typeReason says what a value of the wrong kind should have been.
func typeReason(te *json.UnmarshalTypeError) string {
	want := map[reflect.Kind]string{reflect.Slice: "a list", reflect.Array: "a list", reflect.Struct: "an object", reflect.Map: "an object",
		reflect.Pointer: "an object", reflect.String: "a string", reflect.Bool: "true or false",
		reflect.Float64: "a number", reflect.Float32: "a number",
		reflect.Int: "an integer", reflect.Int64: "an integer", reflect.Int32: "an integer", reflect.Uint64: "an integer", reflect.Uint32: "an integer"}[te.Type.Kind()]
	if want == "" {
		want = te.Type.String()
	}
	if num, ok := strings.CutPrefix(te.Value, "number "); ok && (want == "a number" || want == "an integer") {
		switch v, err := strconv.ParseFloat(num, 64); {
		case want == "a number":
			return num + " is out of range"
		case err == nil && v != math.Trunc(v):
			return num + " is not an integer"
		}
		return num + " is out of range, or not an integer written in digits"
	}
	return te.Value + " where " + want + " was expected"
}
