package calibrate

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/capsim/capsim/fixtures"
)

func TestZZSpeed(t *testing.T) {
	if os.Getenv("ZZDEV") == "" {
		t.Skip()
	}
	recs, _ := fixtures.Records()
	groups, order, _ := preparePoints(recs, 0)
	type tm struct {
		d    time.Duration
		what string
	}
	var all []tm
	var total time.Duration
	for _, key := range order {
		pts := groups[key]
		gf, err := fitGroup(context.Background(), key, pts, Options{SkipRefine: true}, func(Progress) {})
		if err != nil {
			t.Fatal(err)
		}
		var gt time.Duration
		for _, p := range pts {
			cfg, err := simConfig(gf.env, gf.params, p, 0)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if _, err := opts0.simulate()(context.Background(), cfg); err != nil {
				t.Fatal(p.rec.ID, err)
			}
			d := time.Since(start)
			gt += d
			all = append(all, tm{d, fmt.Sprintf("%s %s %s %d:%d n=%d", p.rec.ID, key, p.load, p.isl, p.osl, p.prompt)})
		}
		fmt.Println(key, len(pts), gt)
		total += gt
	}
	sort.Slice(all, func(i, j int) bool { return all[i].d > all[j].d })
	for _, a := range all[:15] {
		fmt.Println(a.d, a.what)
	}
	fmt.Println("total", total)
}

var opts0 Options
