package main

import (
	"fmt"
	"io"

	"github.com/capsim/capsim/results"
)

// dataOptions are capsim data's flags. Empty filters match everything.
type dataOptions struct {
	format string
	files  []string // user result files; none means the embedded seed documents
	gpu    string   // case-insensitive substring of the GPU name
	model  string   // case-insensitive substring of the model id
	engine string   // case-insensitive substring of the engine label
	source string   // prefix of the record ID or of the file's base name
	// With --file, --gpu, --model, --engine and --topology state the
	// files' system instead of filtering.
	topology string
}

func runData(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data", stderr)
	var o dataOptions
	format := formatFlag(fs)
	fs.StringSliceVar(&o.files, "file", nil, "read these result files (repeat or comma-separate) instead of the embedded seed documents;\nNAME.meta.json next to NAME.ext adds what a file does not say (GPU, topology, ...)")
	fs.StringVar(&o.gpu, "gpu", "", "with --file: the GPU the files measured, e.g. H100 (states or overrides theirs);\nwithout: only seed records whose GPU contains this, e.g. H20")
	fs.StringVar(&o.model, "model", "", "with --file: the model the files measured; without: only seed records whose model contains this, e.g. qwen3")
	fs.StringVar(&o.engine, "engine", "", "with --file: the engine and version the files measured, e.g. vllm-0.10.1;\nwithout: only seed records whose engine contains this, e.g. dynamo, vllm-0.9")
	fs.StringVar(&o.topology, "topology", "", "with --file: the deployment the files measured: NxTPk or \"prefill NxTPk + decode MxTPk\"")
	fs.StringVar(&o.source, "source", "", "only records whose ID or file name starts with this, e.g. 004")
	if err := fs.Parse(args); err != nil {
		return withFlagHint(err, fs)
	}
	o.format = *format
	o.files = append(o.files, fs.Args()...)
	if err := checkFormat(o.format); err != nil {
		return err
	}
	recs, err := loadRecords(o.files)
	if err != nil {
		return err
	}
	if err := o.stateSystem(recs, "data", "--file results"); err != nil {
		return err
	}
	recs = o.filter(recs)
	out := results.NewListing(recs)
	return writeOutput(stdout, o.format, out, func(w io.Writer) error { return results.WriteListing(w, out) })
}

// stateSystem applies --gpu, --model, --engine and --topology to the
// records of the user's files, which they then describe rather than
// filter; without files --topology has nothing to state. cmd and files
// name the command and its files in errors.
func (o *dataOptions) stateSystem(recs []results.Record, cmd, files string) error {
	if len(o.files) == 0 {
		if o.topology != "" {
			return fmt.Errorf("%s: --topology states the system of %s", cmd, files)
		}
		return nil
	}
	sys := systemFlags{gpu: o.gpu, model: o.model, engine: o.engine, topology: o.topology}
	if err := sys.apply(recs); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	o.gpu, o.model, o.engine = "", "", ""
	return nil
}

func (o dataOptions) filter(recs []results.Record) []results.Record {
	return results.Filter{GPU: o.gpu, Model: o.model, Engine: o.engine, Source: o.source}.Select(recs)
}
