package series

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// DefaultMaxPrompts caps the prompts simulated per load point when the
// caller gives no cap: enough for a benchmark's steady state, cheap enough
// to simulate hundreds of points in a fit.
const DefaultMaxPrompts = 1280

// DatasetSetting is the record setting that names the dataset a run's
// prompts came from (vLLM's --dataset-name; capsim bench's capsim_dataset).
const DatasetSetting = results.DatasetSetting

// datasetOf is the dataset a record's settings name, when package datasets
// holds its lengths; stated is the name as written ("" when none is).
func datasetOf(settings map[string]string) (d datasets.Dataset, stated string, ok bool) {
	k, v := results.StatedDataset(settings)
	if k == "" {
		return datasets.Dataset{}, "", false
	}
	d, ok = datasets.Lookup(settings[k])
	return d, v, ok
}

// HitRateSetting is the record setting that states a run's prefix-cache hit
// rate (results.HitRateSetting).
const HitRateSetting = results.HitRateSetting

// hitRate reads a record's HitRateSetting. An error says why the setting is unusable: a value
// that is not a fraction in [0, 1), or several spellings of the key whose
// values disagree (naming both keys). Keys are read in sorted order, so the
// answer does not depend on the map's iteration order.
func hitRate(settings map[string]string) (float64, error) {
	var keys []string
	for k := range settings {
		if results.IsHitRateKey(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	sort.Strings(keys)
	parse := func(k string) (float64, error) {
		v := strings.TrimSpace(settings[k])
		pct := strings.HasSuffix(v, "%")
		x, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, "%")), 64)
		if pct {
			x /= 100
		}
		if err != nil || !sim.ValidPrefixHitRate(x) {
			return 0, fmt.Errorf("setting %s %q is not a fraction in [0, 1) or a percentage under 100%%", k, settings[k])
		}
		return x, nil
	}
	h, err := parse(keys[0])
	if err != nil {
		return 0, err
	}
	for _, k := range keys[1:] {
		x, err := parse(k)
		if err != nil {
			return 0, err
		}
		if x != h {
			return 0, fmt.Errorf("settings %s %q and %s %q state different prefix-cache hit rates", keys[0], settings[keys[0]], k, settings[k])
		}
	}
	return h, nil
}

// Workloads returns the workload of every record, in record order, as fit,
// plot, predict and validate all simulate it; err[i] says why record i has
// none. all are every record of the sources (a record without an output
// length borrows its siblings' ratio); maxPrompts caps the prompts per
// point (0: DefaultMaxPrompts).
//
// The output length is the record's measured mean, else the median ratio
// of mean output to max_tokens over its source and model times its
// max_tokens. When a series' outputs clearly stop early (vLLM's E2E = TTFT +
// (OSL−1)·TPOT gives each point's mean output, and the series' median is
// under 95% of the stated length) every point uses that median and keeps
// the cap (OSLMax). A record that counted max_tokens per completed request
// ran every output to its cap (ExactOutput) and never stops early.
func Workloads(all []results.Record, maxPrompts int) ([]workload.Workload, []error) {
	out := make([]workload.Workload, len(all))
	errs := make([]error, len(all))
	osl := make([]float64, len(all))
	for i := range all {
		r := &all[i]
		w := &out[i]
		o := r.Workload.OSL
		if o <= 0 && r.Workload.OSLMax > 0 {
			o = oslEstimate(all, r)
			w.Notes = append(w.Notes, fmt.Sprintf("output length not stated: %.0f tokens assumed (from rows of the same source with max_tokens %d)", o, r.Workload.OSLMax))
		}
		if r.Workload.ISL <= 0 || o <= 0 {
			errs[i] = &UnusableError{Record: r.ID, Reason: fmt.Sprintf("prompt and output lengths unknown (isl %g, osl %g)", r.Workload.ISL, r.Workload.OSL)}
			continue
		}
		if err := r.Workload.Load.Validate(); err != nil {
			errs[i] = &UnusableError{Record: r.ID, Reason: err.Error(), Err: err}
			continue
		}
		h, err := hitRate(r.System.Settings)
		if err != nil {
			errs[i] = &UnusableError{Record: r.ID, Reason: err.Error()}
			continue
		}
		if h > 0 {
			w.PrefixHitRate = h
			w.Notes = append(w.Notes, fmt.Sprintf("prefix-cache hit rate %.3g (stated): that share of every prompt is not prefilled", h))
		}
		osl[i] = o
		w.Load = r.Workload.Load
		w.ISL = max(1, int(math.Round(r.Workload.ISL)))
		w.OSL = max(2, int(math.Round(o)))
		w.NumPrompts = Prompts(r, maxPrompts)
		if sh := r.Workload.Sharing; sh.On() && h == 0 {
			w.Sharing = sh
			w.Notes = append(w.Notes, "prompts: "+sh.String()+" (stated): served by the prefix cache where the engine keeps one")
		}
		ds, stated, ok := datasetOf(r.System.Settings)
		if ok {
			// The dataset's own spread of lengths is the outputs' spread.
			w.Dataset = ds.Name
			w.Notes = append(w.Notes, fmt.Sprintf("lengths: the %s dataset's, scaled to the measured means (%s)", ds.Name, ds.Source))
		} else {
			if stated != "" && !strings.EqualFold(stated, "random") {
				// Say so: a known dataset spelled otherwise would
				// otherwise be simulated at its means without a word.
				w.Notes = append(w.Notes, fmt.Sprintf("dataset %q is not one whose lengths capsim holds (it holds: %s): simulated at the measured means", stated, strings.Join(datasets.Names(), ", ")))
			}
			if m := r.Workload.OSLMax; m > 0 && float64(w.OSL) < earlyStop*float64(m) {
				w.OSLMax = m
			}
			if exactOutput(r) {
				w.ExactOutput, w.OSL = true, r.Workload.OSLMax
				w.Notes = append(w.Notes, ExactOutputNote(w.OSL))
			}
		}
	}
	// Outputs that stop early, per series.
	est := map[string][]float64{}
	keys := make([]string, len(all))
	for i := range all {
		if errs[i] != nil {
			continue
		}
		keys[i] = results.SeriesKey(&all[i])
		if n, ok := impliedOutput(&all[i]); ok && out[i].Dataset == "" {
			est[keys[i]] = append(est[keys[i]], n)
		}
	}
	for i := range all {
		e := est[keys[i]]
		if errs[i] != nil || len(e) < 2 || out[i].Dataset != "" || out[i].ExactOutput {
			continue
		}
		m := math.Round(stats.Median(e))
		if w := &out[i]; m < earlyStop*float64(w.OSL) && m >= 2 {
			w.Notes = append(w.Notes, fmt.Sprintf("outputs stop early: mean output %.0f tokens (from E2E, TTFT and TPOT) instead of the stated %d", m, w.OSL))
			w.OSLMax = max(w.OSLMax, w.OSL) // the stated length was a cap
			w.OSL = int(m)
		}
	}
	return out, errs
}

// ExactOutputNote is the note a workload whose outputs all ran to exactly
// osl tokens carries (workload.Workload.ExactOutput).
func ExactOutputNote(osl int) string {
	return fmt.Sprintf("outputs: every one ran to exactly %d tokens (the counted output tokens are max_tokens per completed request): simulated at that length, not spread", osl)
}

// exactOutput says a record counted every output at exactly its cap: total
// output tokens over the completed requests (none can exceed max_tokens)
// equal to the cap. A stated or estimated mean is not that evidence.
func exactOutput(r *results.Record) bool {
	m := r.Workload.OSLMax
	total, ok := r.Metrics[model.TotalOutputTokens]
	return ok && r.Completed > 0 && m > 0 && total == float64(r.Completed)*float64(m)
}

// earlyStop is the share of the stated output length under which a
// realised mean output means the outputs stopped early.
const earlyStop = 0.95

// UnusableError says why a record's workload cannot be simulated.
type UnusableError struct {
	Record string
	Reason string
	Err    error // the underlying error, if any
}

func (e *UnusableError) Error() string { return "series: record " + e.Record + ": " + e.Reason }
func (e *UnusableError) Unwrap() error { return e.Err }

// impliedOutput is the mean output length vLLM's identity
// E2E = TTFT + (OSL−1)·TPOT gives for a record, when it states all three.
func impliedOutput(r *results.Record) (float64, bool) {
	pos := func(m string) (float64, bool) {
		v, ok := r.Metrics[m]
		return v, ok && v > 0 && !math.IsInf(v, 0)
	}
	e2e, ok1 := pos(model.MeanE2EL)
	ttft, ok2 := pos(model.MeanTTFT)
	tpot, ok3 := pos(model.MeanTPOT)
	if !ok1 || !ok2 || !ok3 || e2e <= ttft {
		return 0, false
	}
	return 1 + (e2e-ttft)/tpot, true
}

// oslEstimate is the mean output length of a record that does not state
// it: the median ratio of mean output to max_tokens over the rows of the
// same source and model that state both, times the record's max_tokens.
func oslEstimate(all []results.Record, r *results.Record) float64 {
	var ratios []float64
	for i := range all {
		q := &all[i]
		if q.Source.File == r.Source.File && q.System.Model == r.System.Model && q.Workload.OSL > 0 && q.Workload.OSLMax > 0 {
			ratios = append(ratios, q.Workload.OSL/float64(q.Workload.OSLMax))
		}
	}
	if len(ratios) == 0 {
		return float64(r.Workload.OSLMax)
	}
	return math.Round(stats.Median(ratios) * float64(r.Workload.OSLMax))
}

// Prompts is the number of prompts to simulate for a record: its own
// count when it states one (always, for a burst, whose size is part of the
// workload: a burst that states no count sent the requests it reports,
// completed plus failed), else about ten per concurrent client as vLLM's
// benchmark scripts typically sent, at least 200; capped at maxPrompts (0
// means DefaultMaxPrompts) except for a burst.
func Prompts(r *results.Record, maxPrompts int) int {
	if maxPrompts <= 0 {
		maxPrompts = DefaultMaxPrompts
	}
	l := r.Workload.Load
	if l.Kind == model.Burst {
		if r.Workload.NumPrompts > 0 {
			return r.Workload.NumPrompts
		}
		if sent := r.Completed + r.Errors; sent > 0 {
			return sent
		}
		return 200
	}
	n := r.Workload.NumPrompts
	if n == 0 {
		n = 200
		if l.Concurrency > 0 {
			n = max(200, 10*l.Concurrency)
		}
	}
	return min(n, maxPrompts)
}
