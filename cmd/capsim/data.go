package main

import (
	"cmp"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/capsim/capsim/internal/textout"
	"github.com/capsim/capsim/model"
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

// dataOutput is the JSON form of capsim data.
type dataOutput struct {
	Count   int              `json:"count"`
	Counts  map[string]int   `json:"counts"` // records per source file
	Records []results.Record `json:"records"`
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
	out := dataOutput{Count: len(recs), Counts: map[string]int{}, Records: recs}
	for _, r := range recs {
		out.Counts[r.Source.File]++
	}
	return writeOutput(stdout, o.format, out, func(w io.Writer) error { return writeDataTable(w, out) })
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

func writeDataTable(w io.Writer, out dataOutput) error {
	if out.Count == 0 {
		_, err := fmt.Fprintln(w, "no records match")
		return err
	}
	// Left-aligned: most columns are names, not numbers.
	tw := newTableLeft(w)
	fmt.Fprintln(tw, "ID\tGPU\tGPUS\tMODEL\tENGINE\tTOPOLOGY\tISL/OSL\tLOAD\tREQ/S\tOUT TOK/S\tTTFT ms\tTPOT ms\tE2E ms\tERRORS\tFLAGS")
	for _, r := range out.Records {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n",
			r.ID, cmp.Or(r.System.GPU, "-"), textout.Count(r.System.GPUCount), cmp.Or(model.ShortName(r.System.Model), "-"), cmp.Or(r.System.Engine, "-"),
			dataTopology(r.System.Topology), dataLengths(r.Workload), dataLoad(r.Workload),
			textout.Metric(r.Metrics, model.RequestThroughput), textout.Metric(r.Metrics, model.OutputThroughput), textout.Metric(r.Metrics, model.MeanTTFT),
			textout.Metric(r.Metrics, model.MeanTPOT), textout.Metric(r.Metrics, model.MeanE2EL), r.Errors, dataFlags(r.Anomalies))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	files := make([]string, 0, len(out.Counts))
	for f := range out.Counts {
		files = append(files, f)
	}
	sort.Strings(files)
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = fmt.Sprintf("%s %d", f, out.Counts[f])
	}
	_, err := fmt.Fprintf(w, "%d records (%s)\n", out.Count, strings.Join(parts, ", "))
	return err
}

func dataTopology(t model.Topology) string {
	switch {
	case t.Disaggregated():
		return "P " + t.Prefill.String() + " D " + t.Decode.String()
	case t.Replicas.IsZero():
		return "-"
	}
	return t.Replicas.String()
}

func dataLengths(w results.Workload) string {
	f := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return f(w.ISL) + "/" + f(w.OSL)
}

func dataLoad(w results.Workload) string {
	switch {
	case w.Load.Kind == model.Burst && w.NumPrompts > 0:
		return "burst " + strconv.Itoa(w.NumPrompts)
	case w.Load.Kind == "":
		return "-"
	}
	return w.Load.Label()
}

// dataFlags shows the anomaly codes ("throughput-dip", …); JSON has the full text.
func dataFlags(anomalies []string) string {
	codes := make([]string, 0, len(anomalies))
	for _, a := range anomalies {
		code, _, _ := strings.Cut(a, ":")
		codes = append(codes, code)
	}
	return cmp.Or(strings.Join(codes, ","), "-")
}
