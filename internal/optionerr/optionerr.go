// Package optionerr is the typed error of an Options.Validate: the
// fields at fault and a message that calls them by name, so that a caller
// with its own names for them (a command line's flags) says the same
// thing in its own words, without editing the message. A parser of one
// value (a topology, a rate list) returns one without fields: its caller
// names the value and drops the library's prefix (Text).
package optionerr

import (
	"errors"
	"fmt"
)

// Field is an option at fault: its Go field name and the words the
// library's own message uses for it.
type Field struct{ Name, Words string }

// Error is an Options value a Validate refuses.
type Error struct {
	Prefix string // the library's, e.g. "plan: "
	Fields []Field
	format string // one %s per field, first, for its name
	args   []any
}

// New returns an Error whose message is format with each field's name in
// its leading %s verbs, then args.
func New(prefix string, fields []Field, format string, args ...any) *Error {
	return &Error{Prefix: prefix, Fields: fields, format: format, args: args}
}

// Error is the library's message: the prefix, the fields by their words.
func (e *Error) Error() string { return e.Prefix + e.Text(nil) }

// Text is the message without the prefix, each field called name(its Go
// name), or by its words where name is nil or returns "".
func (e *Error) Text(name func(field string) string) string {
	args := make([]any, 0, len(e.Fields)+len(e.args))
	for _, f := range e.Fields {
		n := ""
		if name != nil {
			n = name(f.Name)
		}
		if n == "" {
			n = f.Words
		}
		args = append(args, n)
	}
	return fmt.Sprintf(e.format, append(args, e.args...)...)
}

// As finds an *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
