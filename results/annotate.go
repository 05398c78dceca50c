package results

import (
	"fmt"
	"maps"
	"math"
	"sort"
	"strings"

	"github.com/capsim/capsim/model"
)

// Anomaly codes start each annotation ("code: explanation").
const (
	AnomalyThroughputDip    = "throughput-dip"
	AnomalyLatencyInversion = "latency-inversion"
	AnomalySlowFirst        = "ttft-tail"
	AnomalyErrors           = "high-error-rate"
	AnomalyDuplicate        = "duplicate"
	AnomalyPartial          = "partial"
)

// Thresholds of the cheap anomaly checks.
const (
	dipFraction       = 0.40 // throughput this much below the next-lower load's
	inversionFraction = 0.30 // mean E2E this much above a higher concurrency's
	ttftTailRatio     = 2.0  // p99 TTFT / mean TTFT at low concurrency
	lowConcurrency    = 4
	errorFraction     = 0.05
)

// Annotate replaces every record's Anomalies with the results of cheap
// checks over the set. Rows are never dropped; the notes let a fit
// down-weight them:
//   - throughput-dip: request (or output) throughput more than 40% below the
//     next-lower load point of the same series;
//   - latency-inversion: in a closed-loop series, mean E2E latency more than
//     30% above that of a higher concurrency (a busier point was faster);
//   - ttft-tail: at concurrency ≤ 4, p99 TTFT more than twice the mean (a
//     slow first request or warm-up);
//   - high-error-rate: 5% or more of the requests failed;
//   - duplicate: the same row label and metric values as an earlier record;
//   - partial: the load point was interrupted (Record.Partial).
//
// A series is the records of one file, section, row label, column group,
// settings, load family and requested lengths, ordered by load.
func Annotate(recs []Record) {
	for i := range recs {
		recs[i].Anomalies = nil
	}
	series := map[string][]int{}
	var keys []string
	for i, r := range recs {
		k := anomalySeriesKey(r)
		if _, ok := series[k]; !ok {
			keys = append(keys, k)
		}
		series[k] = append(series[k], i)
	}
	for _, k := range keys {
		idx := series[k]
		sort.SliceStable(idx, func(a, b int) bool { return loadLess(recs[idx[a]], recs[idx[b]]) })
		annotateSeries(recs, idx)
	}
	for i := range recs {
		r := &recs[i]
		if c := r.Workload.Load.Concurrency; r.Workload.Load.Kind == model.ClosedLoop && c > 0 && c <= lowConcurrency {
			mean, ok1 := r.Metrics[model.MeanTTFT]
			p99, ok2 := r.Metrics[model.P99TTFT]
			if ok1 && ok2 && mean > 0 && p99 > ttftTailRatio*mean {
				r.note(AnomalySlowFirst, "p99 TTFT %.0f ms is %.1fx the mean %.0f ms at concurrency %d (slow first request or warm-up?)", p99, p99/mean, mean, c)
			}
		}
		if r.Partial {
			r.note(AnomalyPartial, "the run was interrupted before every request finished; metrics cover the %d that did", r.Completed)
		}
		if r.Errors > 0 {
			total := r.Workload.NumPrompts
			if total == 0 && r.Completed > 0 {
				total = r.Completed + r.Errors
			}
			switch {
			case total == 0:
				r.note(AnomalyErrors, "%d requests failed (total not stated); throughput and latency cover the successful ones only", r.Errors)
			case float64(r.Errors) >= errorFraction*float64(total):
				r.note(AnomalyErrors, "%d of %d requests failed; throughput and latency cover the successful ones only", r.Errors, total)
			}
		}
	}
	// Duplicates within a file: same label, column and metric values.
	first := map[string]int{}
	for i := range recs {
		r := &recs[i]
		if len(r.Metrics) < 2 {
			continue
		}
		k := r.Source.File + "\x00" + r.Source.Row + "\x00" + r.Source.Column + "\x00" + metricsKey(r.Metrics)
		if j, ok := first[k]; ok {
			r.note(AnomalyDuplicate, "same values as %s (line %d); count it once when fitting", recs[j].ID, recs[j].Source.Line)
			continue
		}
		first[k] = i
	}
}

func (r *Record) note(code, format string, args ...any) {
	r.Anomalies = append(r.Anomalies, code+": "+fmt.Sprintf(format, args...))
}

// loadLess orders by offered load: concurrency, then rate, then bursts by size.
func loadLess(a, b Record) bool {
	ka, kb := loadOrder(a), loadOrder(b)
	if ka[0] != kb[0] {
		return ka[0] < kb[0]
	}
	return ka[1] < kb[1]
}

func loadOrder(r Record) [2]float64 {
	l := r.Workload.Load
	switch l.Kind {
	case model.ClosedLoop:
		return [2]float64{0, float64(l.Concurrency)}
	case model.OpenLoop:
		return [2]float64{1, l.Rate}
	case model.Burst:
		return [2]float64{2, float64(r.Workload.NumPrompts)}
	}
	return [2]float64{3, float64(r.Source.Line)}
}

func annotateSeries(recs []Record, idx []int) {
	if len(idx) < 2 || recs[idx[0]].Workload.Load.Kind == "" {
		return
	}
	for n := 1; n < len(idx); n++ {
		prev, cur := &recs[idx[n-1]], &recs[idx[n]]
		if loadOrder(*prev) == loadOrder(*cur) {
			continue
		}
		for _, m := range []string{model.RequestThroughput, model.OutputThroughput} {
			p, ok1 := prev.Metrics[m]
			c, ok2 := cur.Metrics[m]
			if ok1 && ok2 && p > 0 && c < (1-dipFraction)*p {
				cur.note(AnomalyThroughputDip, "%s %.4g is %.0f%% below %.4g at the lower load (%s)", m, c, 100*(1-c/p), p, loadText(*prev))
				break
			}
		}
	}
	if recs[idx[0]].Workload.Load.Kind != model.ClosedLoop {
		return
	}
	// Walk from the highest concurrency down, keeping the fastest mean E2E
	// seen at strictly higher concurrencies (linear in the series length).
	best, bestAt := math.Inf(1), -1
	groupBest, groupAt := math.Inf(1), -1
	for n := len(idx) - 1; n >= 0; n-- {
		cur := &recs[idx[n]]
		if n < len(idx)-1 && recs[idx[n+1]].Workload.Load.Concurrency != cur.Workload.Load.Concurrency {
			if groupBest < best {
				best, bestAt = groupBest, groupAt
			}
			groupBest, groupAt = math.Inf(1), -1
		}
		e, ok := cur.Metrics[model.MeanE2EL]
		if !ok {
			continue
		}
		if bestAt >= 0 && e > (1+inversionFraction)*best {
			cur.note(AnomalyLatencyInversion, "mean E2E %.0f ms is %.0f%% above %.0f ms at the higher %s", e, 100*(e/best-1), best, loadText(recs[bestAt]))
		}
		if e < groupBest {
			groupBest, groupAt = e, idx[n]
		}
	}
}

func loadText(r Record) string {
	l := r.Workload.Load
	switch l.Kind {
	case model.ClosedLoop:
		return fmt.Sprintf("concurrency %d", l.Concurrency)
	case model.OpenLoop:
		return fmt.Sprintf("rate %s req/s", l.RateString())
	case model.Burst:
		if r.Workload.NumPrompts > 0 {
			return fmt.Sprintf("burst of %d", r.Workload.NumPrompts)
		}
		return "burst"
	}
	return "unknown load"
}

func metricsKey(m map[string]float64) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(&b, "%s=%g;", k, m[k])
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
