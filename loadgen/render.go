package loadgen

import (
	"fmt"
	"io"

	"github.com/capsim/capsim/internal/textout"
)

// WriteTable writes one row per load point's result, as capsim bench
// prints them, on a text table (on a textout.Output, so also CSV).
func WriteTable(w io.Writer, results []*Result) error {
	t := textout.NewTable(w)
	fmt.Fprintln(t, "load\tcompleted\tfailed\tduration_s\treq/s\tout_tok/s\tmean_ttft_ms\tp99_ttft_ms\tmean_tpot_ms\tp99_tpot_ms\tmean_itl_ms\tmean_e2el_ms\tp99_e2el_ms\tsched_delay_p99_ms\t")
	for _, r := range results {
		name := r.Load.String()
		if r.Partial {
			name += " (partial)"
		}
		delay := "-"
		if r.ScheduleDelay != nil {
			delay = fmt.Sprintf("%.1f", r.ScheduleDelay.P99)
		}
		lat := func(v float64) string { // no request finished: absent, never zero
			if r.Completed == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(t, "%s\t%d\t%d\t%.2f\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			name, r.Completed, r.Failed, r.Duration, r.RequestThroughput, r.OutputThroughput,
			lat(r.TTFT.Mean), lat(r.TTFT.P99), lat(r.TPOT.Mean), lat(r.TPOT.P99), lat(r.ITL.Mean), lat(r.E2EL.Mean), lat(r.E2EL.P99), delay)
	}
	return t.Flush()
}
