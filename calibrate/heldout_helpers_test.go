//go:build research

package calibrate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/results"
)

// predictPrefillHeavy fits seed 004's H20 group of one engine on its
// decode-heavy series (1000:1000 and 500:1000), each record first passed
// through edit, and predicts its prefill-heavy 2500:100 and 3000:150
// series at concurrency 32–128 (issue 12's target) from that fit.
func predictPrefillHeavy(t *testing.T, engine string, edit func(*results.Record)) (*Profile, []heldOut) {
	t.Helper()
	all, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	var train, test []results.Record
	for _, r := range all {
		if r.System.GPU != "H20" || r.System.Engine != engine {
			continue
		}
		edit(&r)
		switch s := fmt.Sprintf("%d:%d", r.Workload.ISLMax, r.Workload.OSLMax); {
		case s != "2500:100" && s != "3000:150":
			train = append(train, r)
		case r.Workload.Load.Concurrency >= 32 && r.Workload.Load.Concurrency <= 128:
			test = append(test, r)
		}
	}
	prof, _, err := Fit(context.Background(), train, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	groups, keys, _ := preparePoints(test, 0)
	var pts []*point
	for _, k := range keys {
		pts = append(pts, groups[k]...)
	}
	held, err := predictHeldOut(context.Background(), prof, pts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range held {
		if h.failure != "" {
			t.Fatalf("record %s: %s", h.p.rec.ID, h.failure)
		}
	}
	return prof, held
}

// heldOutErrors are the median and maximum |predicted ÷ measured − 1| of a
// metric over held-out points, measured as the record states it.
func heldOutErrors(t *testing.T, held []heldOut, metric string) (med, max float64) {
	t.Helper()
	var abs []float64
	for _, h := range held {
		want, ok := h.p.rec.Metrics[metric]
		if !ok || want <= 0 {
			t.Fatalf("record %s states no %s", h.p.rec.ID, metric)
		}
		abs = append(abs, math.Abs(h.central[metric]/want-1))
	}
	return median(abs), maxOf(abs)
}

// corpusProfile is seeds and corpus fitted alike, as fit --cv fits them:
// the embedded profile's groups and its transfer pool, each fitted apart.
func corpusProfile(t *testing.T) *Profile {
	t.Helper()
	embedded, err := ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	return &Profile{Schema: embedded.Schema, CostModel: embedded.CostModel, Groups: append(slices.Clone(embedded.Groups), embedded.Pool...)}
}
