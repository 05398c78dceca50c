package calibrate

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

func TestZZOne(t *testing.T) {
	if os.Getenv("ZZDEV") == "" {
		t.Skip()
	}
	g, _ := model.LookupGPU("H20")
	m, _ := model.LookupLLM("Qwen3-32B")
	e := env{gpu: g, llm: m, settings: defaultSettings("vllm")}
	c := model.Coeffs{Overhead: 0.0051223, PerSeq: 2.4177e-05, Weight: 1.7056, PrefillCompute: 1.2557, DecodeCompute: 1.3365, Attn: 0.37109, KV: 1.2588, Comm: 1.6743}
	prm := params{coeffs: map[string]model.Coeffs{RoleAggregated: c}}
	for _, topo := range []string{"1xTP4", "4xTP4"} {
		tp, _ := model.ParseTopology(topo)
		for _, conc := range []int{1, 8, 32} {
			p := &point{topo: tp, load: model.Closed(conc), isl: 1000, osl: 1000, prompt: 10 * conc}
			cfg, _ := simConfig(e, prm, p, 0)
			cfg.KeepRequests = true
			res, err := sim.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Printf("%s c=%d ttft %.1f tpot %.2f tput %.3f pools %+v\n", topo, conc, res.Metrics["mean_ttft_ms"], res.Metrics["mean_tpot_ms"], res.Metrics["request_throughput"], res.Pools[0])
			for _, r := range res.Requests[:min(12, len(res.Requests))] {
				fmt.Printf("   %d send %.3f first %.3f done %.3f\n", r.ID, r.Send, r.FirstToken, r.Done)
			}
		}
	}
	st := model.NewStepCost(g, m, model.Pool{Count: 1, TP: 4}, c, model.VLLMGraphSizes(512))
	fmt.Println("prefill1000+8", st.StepTime(model.Step{PrefillTokens: 1000, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(0, 1000), DecodeSeqs: 8, DecodeKV: 8000}))
	fmt.Println("decode8", st.StepTime(model.Step{DecodeSeqs: 8, DecodeKV: 8000}))
}
