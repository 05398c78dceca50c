package calibrate

import (
	"context"
	"testing"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/fixtures"
)

// BenchmarkStage1 is stage 1 alone (fitLinear) of every seed group at
// every catalog candidate, as fitGroup runs it before stage 2: the
// unstated group's 118 candidates are most of it.
func BenchmarkStage1(b *testing.B) {
	recs, err := fixtures.Records()
	if err != nil {
		b.Fatal(err)
	}
	groups, order, _ := preparePoints(recs, 0)
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for range b.N {
		for _, key := range order {
			pts := groups[key]
			cands, _, err := candidates(key, pts)
			if err != nil {
				continue
			}
			settings := settingsFrom(key.engine, pts)
			settings.KVCacheGiB = 0
			l := layoutOf(pts)
			for _, c := range cands {
				e := env{gpu: c.gpu.AcrossNodes(settings.Nodes), llm: c.llm, settings: settings, engine: engine.Parse(key.engine)}
				prior := priorParams(l, c.gpu, deployed(c.llm, settings), pts, settings, key.engine)
				if _, err := fitLinear(ctx, e, l, prior, pts); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	reportCPU(b, cpu0)
}
