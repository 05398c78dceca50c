package series_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
)

func TestGroupSeed004(t *testing.T) {
	recs, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	groups := series.Group(results.Filter{Source: "004"}.Select(recs))
	// Dynamo 3P1D and 12P1D and vLLM 0.8.4 with four shapes each, vLLM 0.9.0.1 with three.
	if len(groups) != 15 {
		t.Fatalf("%d series in seed 004, want 15", len(groups))
	}
	for _, s := range groups {
		if s.Kind != model.ClosedLoop || len(s.Records) < 6 {
			t.Errorf("%s: %d points of %s", s.Slug(), len(s.Records), s.Kind)
		}
	}
	if got := groups[4].Slug(); got != "004-h20-qwen3-32b-dynamo-0.3.0-12p-tp1-1d-tp4-isl3000-osl150-concurrency" {
		t.Errorf("slug %q", got)
	}
}

func TestGroupBurstsUsePromptCount(t *testing.T) {
	recs, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	groups := series.Group(results.Filter{Source: "002"}.Select(recs))
	if len(groups) == 0 {
		t.Fatal("no series in seed 002")
	}
	s := groups[0]
	if s.Kind != model.Burst {
		t.Fatalf("kind %s", s.Kind)
	}
	var xs []float64
	for _, r := range s.Records {
		xs = append(xs, series.X(r))
	}
	want := []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}
	if !reflect.DeepEqual(xs, want) {
		t.Errorf("burst sizes %v, want %v", xs, want)
	}
}

// A burst's size is part of its workload: a source that states no prompt
// count sent the requests it reports (completed plus failed); only with
// neither is the count guessed.
func TestPromptsOfBurst(t *testing.T) {
	burst := model.Load{Kind: model.Burst}
	tests := []struct {
		name              string
		stated, done, bad int
		want              int
	}{
		{"stated count wins", 500, 480, 20, 500},
		{"completed plus failed", 0, 1633, 0, 1633},
		{"failures were sent too", 0, 90, 10, 100},
		{"nothing stated", 0, 0, 0, 200},
	}
	for _, tt := range tests {
		r := results.Record{Workload: results.Workload{Load: burst, NumPrompts: tt.stated}, Completed: tt.done, Errors: tt.bad}
		if got := series.Prompts(&r, 0); got != tt.want {
			t.Errorf("%s: Prompts = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// Outputs that stop well short of their cap keep the cap (OSLMax), so the
// simulator can spread them up to it; outputs that run to about their
// stated length, or a record with no cap, have none.
func TestWorkloadsKeepTheCapOfOutputsThatStopEarly(t *testing.T) {
	rec := func(osl float64, oslMax int) results.Record {
		return results.Record{ID: "x", Workload: results.Workload{Load: model.Open(10, 1), ISL: 3000, OSL: osl, OSLMax: oslMax, NumPrompts: 300}}
	}
	for _, tt := range []struct {
		osl     float64
		oslMax  int
		wantMax int
	}{
		{438, 1000, 1000}, // seed 000: 438 of at most 1000
		{990, 1000, 0},    // ran to the cap
		{1680, 0, 0},      // no cap stated (seed 001)
	} {
		works, errs := series.Workloads([]results.Record{rec(tt.osl, tt.oslMax)}, 0)
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		if w := works[0]; w.OSL != int(tt.osl) || w.OSLMax != tt.wantMax {
			t.Errorf("osl %v of %d: OSL %d, OSLMax %d; want %v, %d", tt.osl, tt.oslMax, w.OSL, w.OSLMax, tt.osl, tt.wantMax)
		}
	}
	// Seed 000 states max 1000 and realises about 440.
	recs, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	recs = results.Filter{Source: "000"}.Select(recs)
	works, _ := series.Workloads(recs, 0)
	for i, w := range works {
		if w.OSLMax != 1000 || w.OSL > 500 {
			t.Errorf("seed 000 record %s: OSL %d, OSLMax %d; want about 440 of 1000", recs[i].ID, w.OSL, w.OSLMax)
		}
	}
}

// A record that counted max_tokens output tokens per completed request ran
// every output to exactly that length (none can exceed it): its workload
// says so, at that length, with a note. A stated length, or a mean
// estimated from the latencies, is not that evidence, even beside a
// completed count.
func TestWorkloadsExactOutput(t *testing.T) {
	for _, tt := range []struct {
		name      string
		osl       float64
		oslMax    int
		completed int
		total     float64 // total_output_tokens; 0: not stated
		want      bool
	}{
		{"counted", 800, 800, 500, 400000, true}, // dstack's DeepSeek-R1 rows
		{"estimated just under", 799.9, 800, 500, 400000, true},
		{"one stopped early", 799.9, 800, 500, 399950, false},
		{"no totals", 800, 800, 500, 0, false}, // a table's stated OSL beside a completed count
		{"no completed count", 800, 800, 0, 400000, false},
		{"no cap", 800, 0, 500, 400000, false},
	} {
		r := results.Record{ID: "x", Completed: tt.completed, Metrics: map[string]float64{model.MeanTTFT: 100},
			Workload: results.Workload{Load: model.Closed(4), ISL: 3200, OSL: tt.osl, OSLMax: tt.oslMax, NumPrompts: 500}}
		if tt.total > 0 {
			r.Metrics["total_output_tokens"] = tt.total
		}
		works, errs := series.Workloads([]results.Record{r}, 0)
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		w := works[0]
		noted := strings.Contains(strings.Join(w.Notes, "\n"), "ran to exactly 800 tokens")
		if w.ExactOutput != tt.want || noted != tt.want || tt.want && w.OSL != 800 {
			t.Errorf("%s: ExactOutput %v, OSL %d, notes %q; want %v", tt.name, w.ExactOutput, w.OSL, w.Notes, tt.want)
		}
	}
}

// A record's prefix-cache hit rate setting reaches its workload, in either
// spelling, as a fraction or a percentage; a value outside [0, 1) makes the
// record unusable, naming the setting. The rate is not part of the series
// key: the load points of one sweep may log different rates.
func TestWorkloadsReadThePrefixHitRate(t *testing.T) {
	rec := func(settings map[string]string) results.Record {
		return results.Record{ID: "x", System: results.System{Settings: settings},
			Workload: results.Workload{Load: model.Closed(4), ISL: 1024, OSL: 1024, NumPrompts: 40}}
	}
	for _, tt := range []struct {
		settings map[string]string
		want     float64
		err      string
	}{
		{nil, 0, ""},
		{map[string]string{"enable_prefix_caching": "true"}, 0, ""},
		{map[string]string{"prefix_cache_hit_rate": "0.4"}, 0.4, ""},
		{map[string]string{"Prefix-Cache-Hit-Rate": " 53.7% "}, 0.537, ""},
		{map[string]string{"prefix_cache_hit_rate": "0"}, 0, ""},
		{map[string]string{"prefix_cache_hit_rate": "1"}, 0, `prefix_cache_hit_rate "1" is not a fraction`},
		{map[string]string{"prefix-cache-hit-rate": "-0.2"}, 0, `setting prefix-cache-hit-rate "-0.2"`}, // the key as the record spells it
		// Several spellings: the same value is one rate; different values
		// make the record unusable, naming both keys (whatever the map's order).
		{map[string]string{"prefix_cache_hit_rate": "0.4", "Prefix-Cache-Hit-Rate": "40%"}, 0.4, ""},
		{map[string]string{"prefix_cache_hit_rate": "0.4", "prefix-cache-hit-rate": "0.5"}, 0, `settings prefix-cache-hit-rate "0.5" and prefix_cache_hit_rate "0.4" state different prefix-cache hit rates`},
		{map[string]string{"prefix_cache_hit_rate": "0.4", "PREFIX_CACHE_HIT_RATE": "0.2", "prefix-cache-hit-rate": "0.4"}, 0, `PREFIX_CACHE_HIT_RATE "0.2" and prefix-cache-hit-rate "0.4"`},
		{map[string]string{"prefix_cache_hit_rate": "0.4", "prefix-cache-hit-rate": "2"}, 0, `setting prefix-cache-hit-rate "2" is not a fraction`},
		{map[string]string{"prefix_cache_hit_rate": "NaN"}, 0, `"NaN"`},
		{map[string]string{"prefix_cache_hit_rate": "high"}, 0, `"high"`},
		{map[string]string{"prefix_cache_hit_rate": "100%"}, 0, `"100%"`},
	} {
		// Repeated: a map's iteration order changes from run to run.
		for range 20 {
			works, errs := series.Workloads([]results.Record{rec(tt.settings)}, 0)
			if tt.err != "" {
				if errs[0] == nil || !strings.Contains(errs[0].Error(), tt.err) {
					t.Errorf("settings %v: err %v, want %q", tt.settings, errs[0], tt.err)
					break
				}
				continue
			}
			if errs[0] != nil {
				t.Errorf("settings %v: %v", tt.settings, errs[0])
				break
			}
			if got := works[0].PrefixHitRate; math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("settings %v: hit rate %v, want %v", tt.settings, got, tt.want)
				break
			}
		}
	}
	a, b := rec(map[string]string{"placement": "1 node", "prefix_cache_hit_rate": "0.3"}), rec(map[string]string{"placement": "1 node", "prefix_cache_hit_rate": "0.5"})
	if results.SeriesKey(&a) != results.SeriesKey(&b) {
		t.Errorf("hit rates split a series: %q vs %q", results.SeriesKey(&a), results.SeriesKey(&b))
	}
	c := rec(map[string]string{"placement": "2 nodes", "prefix_cache_hit_rate": "0.3"})
	if results.SeriesKey(&a) == results.SeriesKey(&c) {
		t.Errorf("other settings no longer split series: %q", results.SeriesKey(&a))
	}
}

// A record that names a dataset package datasets holds draws its lengths
// from it: the workload says so, and the dataset's spread replaces the
// early-stop cap, whose exponential would stand in for the same spread.
// Another dataset, or none, keeps the means. The shipped gpustack pages'
// ShareGPT blocks state theirs; their random blocks do not.
func TestWorkloadsReadTheDataset(t *testing.T) {
	rec := func(settings map[string]string) results.Record {
		return results.Record{ID: "x", System: results.System{Settings: settings},
			Workload: results.Workload{Load: model.Open(math.Inf(1), 1), ISL: 217, OSL: 150, OSLMax: 400, NumPrompts: 1000}}
	}
	for _, tt := range []struct {
		settings map[string]string
		want     string
		oslMax   int
	}{
		{nil, "", 400},
		{map[string]string{"dataset": "sharegpt"}, "sharegpt", 0},
		{map[string]string{"Dataset": " ShareGPT "}, "sharegpt", 0},
		{map[string]string{"dataset": "random"}, "", 400},
		{map[string]string{"dataset": "sharegpt, 16+ message conversations, multi-round prefixes"}, "", 400},
	} {
		works, errs := series.Workloads([]results.Record{rec(tt.settings)}, 0)
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		w := works[0]
		if w.Dataset != tt.want || w.OSLMax != tt.oslMax {
			t.Errorf("settings %v: dataset %q, OSLMax %d; want %q, %d", tt.settings, w.Dataset, w.OSLMax, tt.want, tt.oslMax)
		}
		if noted := strings.Contains(strings.Join(w.Notes, "; "), "dataset's"); noted != (tt.want != "") {
			t.Errorf("settings %v: notes %q", tt.settings, w.Notes)
		}
		// A dataset capsim does not hold is said to be simulated at the
		// means; random prompts are (fixed lengths), so they are not.
		unknown := tt.want == "" && tt.settings != nil && tt.settings["dataset"] != "random"
		if noted := strings.Contains(strings.Join(w.Notes, "; "), "simulated at the measured means"); noted != unknown {
			t.Errorf("settings %v: notes %q, want a note on the unknown dataset: %v", tt.settings, w.Notes, unknown)
		}
	}
	recs, err := fixtures.CorpusRecords()
	if err != nil {
		t.Fatal(err)
	}
	recs = results.Filter{Source: "b-gpustack-qwen3-14b-h100"}.Select(recs)
	works, _ := series.Workloads(recs, 0)
	shareGPT := 0
	for i, w := range works {
		isShareGPT := recs[i].Workload.ISL > 200 && recs[i].Workload.ISL < 230
		if (w.Dataset == "sharegpt") != isShareGPT {
			t.Errorf("record %s (ISL %.0f): dataset %q", recs[i].ID, recs[i].Workload.ISL, w.Dataset)
		}
		if isShareGPT {
			shareGPT++
		}
	}
	if shareGPT != 7 {
		t.Errorf("%d ShareGPT records in b-gpustack-qwen3-14b-h100, want 7", shareGPT)
	}
}
