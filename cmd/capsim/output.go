package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/pflag"

	"github.com/capsim/capsim/internal/textout"
)

// newFlagSet returns a subcommand's flag set that reports errors instead of
// exiting and prints the command's help (commandHelp) for --help.
func newFlagSet(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("capsim "+name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() { commandHelp(stderr, name, fs) }
	if flagSetMade != nil {
		flagSetMade(name, fs)
	}
	return fs
}

// flagSetMade, when set, is handed every subcommand's flag set as it is
// made, so that docs/cli.md is written from the flags themselves (docs_test.go).
var flagSetMade func(name string, fs *pflag.FlagSet)

// formatFlag adds --format table|json|csv to fs.
func formatFlag(fs *pflag.FlagSet) *string {
	return fs.String("format", "table", "output format: table, json or csv (for spreadsheets)")
}

// checkFormat rejects anything but table, json and csv.
func checkFormat(f string) error {
	if !slices.Contains(textout.Formats, f) {
		return fmt.Errorf("--format must be table, json or csv, got %q", f)
	}
	return nil
}

// The one writer of every command's output: package textout.
var (
	writeOutput  = textout.Write
	writeJSON    = textout.JSON
	tableOutput  = textout.Output
	newTableLeft = textout.NewTableLeft
)
