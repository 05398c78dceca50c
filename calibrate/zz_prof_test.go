package calibrate

import (
	"context"
	"os"
	"testing"
	"time"
	"fmt"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

func TestZZProf(t *testing.T) {
	if os.Getenv("ZZDEV") == "" {
		t.Skip()
	}
	g, _ := model.LookupGPU("H20")
	m, _ := model.LookupLLM("Qwen3-32B")
	e := env{gpu: g, llm: m, settings: defaultSettings("vllm")}
	c := model.Coeffs{Overhead: 0.010365, PerSeq: 2.4635e-05, Weight: 1.4841, PrefillCompute: 1.3842, DecodeCompute: 0.49513, Attn: 0.51405, KV: 0.49513, Comm: 1.4847}
	prm := params{coeffs: map[string]model.Coeffs{RoleAggregated: c}}
	tp, _ := model.ParseTopology("4xTP4")
	for _, conc := range []int{1, 2, 4, 8, 32, 128} {
		p := &point{topo: tp, load: model.Closed(conc), isl: 3000, osl: 150, prompt: max(200, 10*conc)}
		cfg, _ := simConfig(e, prm, p, 0)
		start := time.Now()
		for i := 0; i < 5; i++ {
			if _, err := sim.Run(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Println(conc, time.Since(start)/5)
	}
}
