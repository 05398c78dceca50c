package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/series"
)

// TestSameRecordSameNumbers checks that the fit's residual, capsim
// validate on the record's source file, capsim predict --mode benchmark-replay with the record's
// workload and the curve capsim plot draws report the same mean TTFT for
// the same record: they share one workload (series.Workloads), one
// deployment (calibrate.Profile.RecordTarget and Configure) and one seed.
func TestSameRecordSameNumbers(t *testing.T) {
	t.Parallel()
	prof, err := calibrate.ParseProfile(fixtures.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := fixtures.Records()
	if err != nil {
		t.Fatal(err)
	}
	works, werrs := series.Workloads(recs, 0)
	v := runValidateJSON(t, "--results", "../../fixtures/seeds/004_40ae512a668d8e46.md")
	groups := series.Group(recs)
	for _, tc := range []struct {
		id, engine, gpus string
		args             []string
	}{
		{"004:245", "vllm-0.9.0.1", "", []string{"--replicas", "4xTP4"}},                     // aggregated: frontend latency
		{"004:79", "dynamo-0.3.0", "", []string{"--prefill", "12xTP1", "--decode", "1xTP4"}}, // disaggregated: KV transfer
	} {
		t.Run(tc.id, func(t *testing.T) {
			i := slices.IndexFunc(recs, func(r results.Record) bool { return r.ID == tc.id })
			if i < 0 || werrs[i] != nil {
				t.Fatalf("record %s: index %d, %v", tc.id, i, werrs)
			}
			w, r := works[i], &recs[i]
			topo := r.System.Topology
			deploy := []string{"--replicas", topo.Replicas.String()}
			if topo.Disaggregated() {
				deploy = []string{"--prefill", topo.Prefill.String(), "--decode", topo.Decode.String()}
			}

			var fit float64
			for _, g := range prof.Groups {
				for _, res := range g.Residuals {
					if res.Record == tc.id {
						fit = res.Fitted[model.MeanTTFT]
					}
				}
			}

			var val float64
			for _, p := range v.Points {
				if p.Record == tc.id {
					for _, c := range p.Metrics {
						if c.Metric == model.MeanTTFT {
							val = c.Predicted
						}
					}
				}
			}

			args := append([]string{"predict", "--gpu", "H20", "--model", "Qwen3-32B", "--engine", tc.engine,
				"--isl", strconv.Itoa(w.ISL), "--osl", strconv.Itoa(w.OSL), "--concurrency", strconv.Itoa(w.Load.Concurrency),
				"--num-prompts", strconv.Itoa(w.NumPrompts), "--seed", "1", "--no-band", "--format", "json", "--mode", "benchmark-replay"}, deploy...)
			var out, errb bytes.Buffer
			if err := run(args, &out, &errb); err != nil {
				t.Fatalf("predict: %v\n%s", err, errb.String())
			}
			var pred predict.Prediction
			if err := json.Unmarshal(out.Bytes(), &pred); err != nil {
				t.Fatal(err)
			}
			prd := pred.Points[0].Metrics[model.MeanTTFT]

			gi := slices.IndexFunc(groups, func(s *series.Series) bool { return slices.Contains(s.Records, r) })
			sp, err := predict.Series(context.Background(), prof, groups[gi], recs, predict.SeriesOptions{Metrics: []string{model.MeanTTFT}})
			if err != nil {
				t.Fatal(err)
			}
			var plt float64
			for _, c := range sp.Curve {
				if c.X == series.X(r) {
					plt = c.Metrics[model.MeanTTFT]
				}
			}

			t.Logf("%s mean TTFT: fit %.4g, validate %.6g, predict %.6g, plot %.6g ms (measured %.5g)", tc.id, fit, val, prd, plt, r.Metrics[model.MeanTTFT])
			for name, got := range map[string]float64{"validate": val, "predict": prd, "plot": plt} {
				// The profile stores the residual to 4 significant digits.
				if !(fit > 0) || math.Abs(got-fit) > 5e-4*fit {
					t.Errorf("%s: %s says mean TTFT %.6g ms, the fit residual %.4g ms", tc.id, name, got, fit)
				}
			}
			if val != prd || prd != plt {
				t.Errorf("%s: validate %v, predict %v and plot %v differ", tc.id, val, prd, plt)
			}
		})
	}
}
