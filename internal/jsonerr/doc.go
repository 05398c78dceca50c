// Package jsonerr says where and why encoding/json refused a document: the
// line, the field and a plain reason (an empty or truncated file, a syntax
// error, a value of the wrong kind or out of range, content after the
// document), for capsim's strict readers (profiles, metadata sidecars).
package jsonerr
