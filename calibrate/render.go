package calibrate

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/capsim/capsim/internal/textout"
	"github.com/capsim/capsim/model"
)

// apeCell is "median/max"; "tok" marks a series judged on token throughput.
func apeCell(s SeriesReport, m string) string {
	a, judged, ok := s.Judged(m)
	switch {
	case !ok:
		return "-"
	case judged != m:
		return "tok " + apeText(a)
	}
	return apeText(a)
}

func apeText(a APE) string { return fmt.Sprintf("%.1f/%.0f", a.Median, a.Max) }

func writeSeriesTable(w io.Writer, rows []SeriesReport, cv bool) error {
	t := textout.NewTable(w)
	head := "source\tgpu\tmodel\tengine\ttopology\tISL:OSL\tpoints\treq/s %\tTTFT %\tTPOT %\tE2E %\tflagged\t"
	if cv {
		head = "held out\t" + head
	}
	fmt.Fprintln(t, head)
	for _, s := range rows {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%g:%g\t%d\t%s\t%s\t%s\t%s\t%d\t", path.Base(s.Source), cmp.Or(s.GPU, "-"), cmp.Or(model.ShortName(s.Model), "-"), s.Engine,
			s.Topology, s.ISL, s.OSL, s.Points, apeCell(s, model.RequestThroughput), apeCell(s, model.MeanTTFT),
			apeCell(s, model.MeanTPOT), apeCell(s, model.MeanE2EL), len(s.Flagged))
		if cv {
			line = s.Holdout + "\t" + line
		}
		fmt.Fprintln(t, line)
	}
	return t.Flush()
}

func errCell(apes map[string]APE, m string) string {
	if a, ok := apes[m]; ok {
		return apeText(a)
	}
	return "-"
}

func writeHoldoutTable(w io.Writer, rows []HoldoutReport) error {
	t := textout.NewTable(w)
	fmt.Fprintln(t, "held out	fold	points	req/s %	out tok/s %	TTFT %	TPOT %	E2E %	coverage	failed	")
	for _, h := range rows {
		cov := "-"
		if c, ok := h.Coverage["all"]; ok {
			cov = fmt.Sprintf("%.2f", c)
		}
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", h.Kind, path.Base(h.Fold), h.Points,
			errCell(h.APE, model.RequestThroughput), errCell(h.APE, model.OutputThroughput), errCell(h.APE, model.MeanTTFT),
			errCell(h.APE, model.MeanTPOT), errCell(h.APE, model.MeanE2EL), cov, h.Failed)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, h := range rows {
		if h.Fold != "all" || len(h.CoverageByClass) == 0 {
			continue
		}
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(h.CoverageByClass)) {
			cc := h.CoverageByClass[c]
			parts = append(parts, fmt.Sprintf("%s %.2f (%d)", c, cc.Share, cc.N))
		}
		if _, err := fmt.Fprintf(w, "coverage by GPU class, %s: %s\n", h.Kind, strings.Join(parts, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// WriteReportTable writes a fit's report as capsim fit prints it: the
// in-sample and held-out errors per series, the leave-one-out folds, the
// flagged points and what the data determine.
func WriteReportTable(w io.Writer, rep *Report) error {
	fmt.Fprintln(w, "In-sample absolute % error, median/max per series:")
	if err := writeSeriesTable(w, rep.Series, false); err != nil {
		return err
	}
	if len(rep.CV) > 0 {
		fmt.Fprintln(w, "\nHeld-out absolute % error (each configuration or shape fitted without its own rows), median/max:")
		if err := writeSeriesTable(w, rep.CV, true); err != nil {
			return err
		}
	}
	if len(rep.Holdout) > 0 {
		fmt.Fprintln(w, "\nLeave-one-GPU-, engine-version- and source-out: every record of the fold refitted without it and predicted as")
		fmt.Fprintln(w, "predict would (its GPU, model, engine label, topology and stated settings); absolute % error median/max, and the")
		fmt.Fprintln(w, "share of measurements inside the ±1σ band (coverage, target 0.55–0.80). The in-sample row predicts the same")
		fmt.Fprintln(w, "records the same way from the full profile, each priced by its own group: the floor the folds are read against.")
		if err := writeHoldoutTable(w, rep.Holdout); err != nil {
			return err
		}
	}
	var flagged []string
	for _, s := range rep.Series {
		for _, f := range s.Flagged {
			flagged = append(flagged, fmt.Sprintf("  %s (%s %s, %s): %s", f.Record, s.Engine, s.Topology, f.Load, f.Reason))
		}
	}
	if len(flagged) > 0 {
		fmt.Fprintln(w, "\nFlagged points (kept in the fit, down-weighted by the robust loss):")
		fmt.Fprintln(w, strings.Join(flagged, "\n"))
	}
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w, "\nWhat the data determine:")
		for _, n := range rep.Notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	return nil
}
