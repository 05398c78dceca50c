// Package jsondup finds duplicate keys in JSON objects, which
// encoding/json accepts silently (the last one wins). capsim's strict
// readers (metadata sidecars, profiles) report them instead.
package jsondup
