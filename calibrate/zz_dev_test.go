package calibrate

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/capsim/capsim/fixtures"
)

func TestZZDev(t *testing.T) {
	if os.Getenv("ZZDEV") == "" {
		t.Skip()
	}
	recs, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	if f := os.Getenv("ZZSRC"); f != "" {
		var keep = recs[:0]
		for _, r := range recs {
			if len(r.Source.File) > 9 && r.Source.File[6:9] == f {
				keep = append(keep, r)
			}
		}
		recs = keep
	}
	start := time.Now()
	opts := Options{SkipRefine: os.Getenv("ZZQUICK") != "", CV: os.Getenv("ZZCV") != ""}
	prof, rep, err := Fit(context.Background(), recs, opts, func(p Progress) {
		if p.Stage != "refine" || p.Done%20 == 0 {
			fmt.Printf("  [%s] %s %d/%d %.4g %v\n", p.Stage, p.Group, p.Done, p.Total, p.Loss, time.Since(start).Round(time.Millisecond))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("elapsed", time.Since(start))
	for _, n := range rep.Notes {
		fmt.Println(n)
	}
	for _, w := range rep.Warnings {
		fmt.Println("WARN", w)
	}
	pr := func(s SeriesReport) {
		fmt.Printf("%-3.3s %-12s %-10.10s %-14s %-22s %6g:%-6g", s.Source[6:], s.Holdout, s.GPU, s.Engine, s.Topology, s.ISL, s.OSL)
		for _, m := range ReportMetrics {
			if a, ok := s.APE[m]; ok {
				fmt.Printf(" %s %5.1f/%5.1f", m[5:9], a.Median, a.Max)
			} else {
				fmt.Printf(" %s    -      ", m[5:9])
			}
		}
		fmt.Println(" flagged", len(s.Flagged))
	}
	for _, s := range rep.Series {
		pr(s)
	}
	for _, s := range rep.CV {
		pr(s)
	}
	for _, g := range prof.Groups {
		for _, e := range g.Entries {
			fmt.Printf("%s %s %s TP%d PP%d %+v\n", g.GPU, g.Engine, e.Role, e.TP, e.PP, e.Coeffs)
		}
	}
	if os.Getenv("ZZFLAGS") != "" {
		for _, s := range rep.Series {
			for _, f := range s.Flagged {
				fmt.Println("FLAG", s.Engine, s.Topology, s.ISL, f.Load, f.Reason)
			}
		}
	}
}
