package results

import (
	"cmp"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/capsim/capsim/internal/textout"
	"github.com/capsim/capsim/model"
)

// Listing is a list of records with their count per source file: capsim
// data's output, and its JSON form.
type Listing struct {
	Count   int            `json:"count"`
	Counts  map[string]int `json:"counts"` // records per source file
	Records []Record       `json:"records"`
}

// NewListing lists recs.
func NewListing(recs []Record) Listing {
	out := Listing{Count: len(recs), Counts: map[string]int{}, Records: recs}
	for _, r := range recs {
		out.Counts[r.Source.File]++
	}
	return out
}

// WriteListing writes a listing as a text table (on a textout.Output, so
// also CSV) of one row per record, then the count per file.
func WriteListing(w io.Writer, out Listing) error {
	if out.Count == 0 {
		_, err := fmt.Fprintln(w, "no records match")
		return err
	}
	// Left-aligned: most columns are names, not numbers.
	tw := textout.NewTableLeft(w)
	fmt.Fprintln(tw, "ID\tGPU\tGPUS\tMODEL\tENGINE\tTOPOLOGY\tISL/OSL\tLOAD\tREQ/S\tOUT TOK/S\tTTFT ms\tTPOT ms\tE2E ms\tERRORS\tFLAGS")
	for _, r := range out.Records {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n",
			r.ID, cmp.Or(r.System.GPU, "-"), textout.Count(r.System.GPUCount), cmp.Or(model.ShortName(r.System.Model), "-"), cmp.Or(r.System.Engine, "-"),
			listTopology(r.System.Topology), listLengths(r.Workload), listLoad(r.Workload),
			textout.Metric(r.Metrics, model.RequestThroughput), textout.Metric(r.Metrics, model.OutputThroughput), textout.Metric(r.Metrics, model.MeanTTFT),
			textout.Metric(r.Metrics, model.MeanTPOT), textout.Metric(r.Metrics, model.MeanE2EL), r.Errors, listFlags(r.Anomalies))
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

func listTopology(t model.Topology) string {
	switch {
	case t.Disaggregated():
		return "P " + t.Prefill.String() + " D " + t.Decode.String()
	case t.Replicas.IsZero():
		return "-"
	}
	return t.Replicas.String()
}

func listLengths(w Workload) string {
	f := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return f(w.ISL) + "/" + f(w.OSL)
}

func listLoad(w Workload) string {
	switch {
	case w.Load.Kind == model.Burst && w.NumPrompts > 0:
		return "burst " + strconv.Itoa(w.NumPrompts)
	case w.Load.Kind == "":
		return "-"
	}
	return w.Load.Label()
}

// listFlags shows the anomaly codes ("throughput-dip", …); JSON has the full text.
func listFlags(anomalies []string) string {
	codes := make([]string, 0, len(anomalies))
	for _, a := range anomalies {
		code, _, _ := strings.Cut(a, ":")
		codes = append(codes, code)
	}
	return cmp.Or(strings.Join(codes, ","), "-")
}
