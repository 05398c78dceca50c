package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"
)

// newFlagSet returns a subcommand's flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("capsim "+name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	return fs
}

// formatFlag adds --format table|json to fs.
func formatFlag(fs *pflag.FlagSet) *string {
	return fs.String("format", "table", "output format: table or json")
}

// checkFormat rejects anything but table and json.
func checkFormat(f string) error {
	if f != "table" && f != "json" {
		return fmt.Errorf("--format must be table or json, got %q", f)
	}
	return nil
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newTable returns a tab-aligned writer; call Flush when done.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}
