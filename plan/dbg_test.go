package plan

import (
	"context"
	"encoding/json"
	"github.com/capsim/capsim/model"
	"syscall"
	"testing"
	"time"
)

func TestDbg(t *testing.T) {
	opts := Options{Model: "Qwen3-32B", ISL: 3000, OSL: 150, Load: model.Open(20, 1),
		SLOs:    mustSLOs(t, "ttft_p99=2000ms,tpot_p99=50ms"),
		GPUs:    []string{"H20", "H100-SXM", "H200"},
		GPUCost: map[string]float64{"H20": 1.9, "H100-SXM": 2.5, "H200": 3.5},
		MaxGPUs: 64, Seed: 1}
	for _, nm := range []bool{true, false} {
		opts.NoMargin = nm
		t0 := time.Now()
		c0 := cpu()
		res, err := Run(context.Background(), h20Profile(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.Search)
		t.Logf("%v cpu %.2fs %s", time.Since(t0), cpu()-c0, b)
		for _, r := range res.Recommendations {
			t.Logf("%s %s %v %v %+v %v", r.GPU, r.Notation, r.SLOValues, r.Central, r.Headroom, r.Settings)
		}
		m, _ := json.Marshal(res.Margin)
		t.Logf("margin %s", m)
	}
}

func cpu() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
