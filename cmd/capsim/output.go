package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
)

// newFlagSet returns a subcommand's flag set that reports errors instead of
// exiting and prints the command's help (commandHelp) for --help.
func newFlagSet(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("capsim "+name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() { commandHelp(stderr, name, fs) }
	return fs
}

// formatFlag adds --format table|json|csv to fs.
func formatFlag(fs *pflag.FlagSet) *string {
	return fs.String("format", "table", "output format: table, json or csv (the table's rows, for spreadsheets)")
}

// checkFormat rejects anything but table, json and csv.
func checkFormat(f string) error {
	if f != "table" && f != "json" && f != "csv" {
		return fmt.Errorf("--format must be table, json or csv, got %q", f)
	}
	return nil
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// tableWriter is what the table printers write rows to: cells separated
// by tabs, one row per line.
type tableWriter interface {
	io.Writer
	Flush() error
}

// csvOut is the stdout of a --format csv command: the table printers write
// to it as for --format table, the rows of their tables become CSV records
// (tables one after another, an empty line between them) and the prose
// around the tables, which has no place in a CSV file, is dropped.
type csvOut struct {
	w      io.Writer
	tables int
}

func (c *csvOut) Write(p []byte) (int, error) { return len(p), nil } // prose: dropped

// tableOutput is stdout as a command's table printer should see it.
func tableOutput(w io.Writer, format string) io.Writer {
	if format == "csv" {
		return &csvOut{w: w}
	}
	return w
}

// newTable returns a tab-aligned, right-aligned table writer (or a CSV one
// on a --format csv output); call Flush when done.
func newTable(w io.Writer) tableWriter {
	if c, ok := w.(*csvOut); ok {
		return &csvTable{out: c}
	}
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

// newTableLeft is newTable with left-aligned columns, for tables of names.
func newTableLeft(w io.Writer) tableWriter {
	if c, ok := w.(*csvOut); ok {
		return &csvTable{out: c}
	}
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// csvTable collects tab-separated rows and writes them as CSV on Flush.
type csvTable struct {
	out *csvOut
	buf bytes.Buffer
}

func (t *csvTable) Write(p []byte) (int, error) { return t.buf.Write(p) }

func (t *csvTable) Flush() error {
	text := strings.TrimRight(t.buf.String(), "\n")
	t.buf.Reset()
	if text == "" {
		return nil
	}
	if t.out.tables > 0 {
		if _, err := io.WriteString(t.out.w, "\n"); err != nil {
			return err
		}
	}
	t.out.tables++
	cw := csv.NewWriter(t.out.w)
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(strings.TrimSuffix(line, "\t"), "\t")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
