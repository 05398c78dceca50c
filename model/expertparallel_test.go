package model

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// expectedMaxNormal against the tabulated expected maxima of standard
// normal samples (Tippett 1925; Harter 1961).
func TestExpectedMaxNormal(t *testing.T) {
	for n, want := range map[int]float64{1: 0, 2: 0.5642, 3: 0.8463, 4: 1.0294, 8: 1.4236, 16: 1.7660, 50: 2.2491, 100: 2.5076} {
		if got := expectedMaxNormal(n); math.Abs(got-want) > 1e-3 {
			t.Errorf("expected max of %d standard normals = %.4f, want %.4f", n, got, want)
		}
	}
}

// The busiest expert-parallel group's share of touched experts and its
// routed tokens, as the roofline prices them, against a simulation of
// uniform routing (each token picks k distinct experts at random): the
// mean over 2000 steps of the largest group's touched experts and routed
// token–expert pairs, for the models and degrees the ML.ENERGY sweeps
// ran, at EP 2 to 8. The touched experts are within 3% at every batch;
// the routed pairs' excess over the mean within 15% of the simulated
// excess once the mean group routes 16.
func TestExpertParallelBusiestGroupMatchesSimulatedRouting(t *testing.T) {
	g, _ := LookupGPU("H100")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		model string
		tp    int
	}{
		{"Qwen/Qwen3-235B-A22B", 8}, {"Qwen/Qwen3-235B-A22B", 4}, {"Qwen/Qwen3-30B-A3B", 2}, {"Qwen/Qwen3-235B-A22B", 2},
		{"meta-llama/Llama-4-Scout-17B-16E-Instruct", 8}, {"deepseek-ai/DeepSeek-V3", 8},
	} {
		m, err := LookupLLM(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		r := NewRoofline(g, m.WithExpertParallel(tt.tp), Pool{Count: 1, TP: tt.tp})
		if r.ExpertGroups != tt.tp {
			t.Fatalf("%s TP%d: %d expert groups, want %d", tt.model, tt.tp, r.ExpertGroups, tt.tp)
		}
		perGroup := m.Experts / tt.tp
		if r.ExpertsPerGroup != perGroup {
			t.Fatalf("%s TP%d: %d experts a group, want %d", tt.model, tt.tp, r.ExpertsPerGroup, perGroup)
		}
		ids := make([]int, m.Experts)
		for i := range ids {
			ids[i] = i
		}
		for _, tokens := range []int{1, 2, 8, 64, 512} {
			const steps = 2000
			var maxTouched, maxPairs float64
			for range steps {
				touched := make([]bool, m.Experts)
				pairs := make([]int, tt.tp)
				for range tokens {
					for j := range m.ActiveExperts { // a partial Fisher–Yates shuffle: k distinct experts
						x := j + rng.IntN(m.Experts-j)
						ids[j], ids[x] = ids[x], ids[j]
						touched[ids[j]] = true
						pairs[ids[j]/perGroup]++
					}
				}
				most, mostPairs := 0, 0
				for grp := range tt.tp {
					n := 0
					for _, on := range touched[grp*perGroup : (grp+1)*perGroup] {
						if on {
							n++
						}
					}
					most, mostPairs = max(most, n), max(mostPairs, pairs[grp])
				}
				maxTouched += float64(most) / float64(perGroup)
				maxPairs += float64(mostPairs) / (float64(tokens*m.ActiveExperts) / float64(tt.tp))
			}
			share, load := maxTouched/steps, maxPairs/steps
			if got := r.ExpertShare(float64(tokens)); math.Abs(got/share-1) > 0.03 {
				t.Errorf("%s TP%d, %d tokens: busiest group reads %.3f of its experts, simulated routing %.3f", tt.model, tt.tp, tokens, got, share)
			}
			if tokens*m.ActiveExperts < 16*tt.tp {
				continue
			}
			if got := r.expertLoad(float64(tokens), r.expertTable()); math.Abs((got-1)/(load-1)-1) > 0.15 {
				t.Errorf("%s TP%d, %d tokens: busiest group routes %.3f× the mean, simulated routing %.3f×", tt.model, tt.tp, tokens, got, load)
			}
		}
	}
}

// Expert parallelism never prices a step faster than the same experts
// split by TP (the busiest group does at least the mean's work), costs
// nothing once every expert is touched and the load evens out, and has
// no effect on a dense model or where the degree does not fit the worker.
func TestExpertParallelNeverFasterThanSplit(t *testing.T) {
	c := PriorCoeffs(false)
	for _, gpu := range []string{"H100", "B200", "A100", "MI300X"} {
		g, _ := LookupGPU(gpu)
		for _, name := range []string{"Qwen/Qwen3-235B-A22B", "Qwen/Qwen3-30B-A3B", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-32B"} {
			m, _ := LookupLLM(name)
			for _, tp := range []int{1, 2, 4, 8} {
				if err := m.CheckTP(tp); err != nil {
					continue
				}
				split := StepCost{Roofline: NewRoofline(g, m, Pool{Count: 1, TP: tp}), Coeffs: c}
				ep := StepCost{Roofline: NewRoofline(g, m.WithExpertParallel(tp), Pool{Count: 1, TP: tp}), Coeffs: c}
				for _, n := range []int{1, 4, 16, 64, 256} {
					s, e := split.StepTime(Step{DecodeSeqs: n}), ep.StepTime(Step{DecodeSeqs: n})
					if e < s*(1-1e-12) {
						t.Errorf("%s %s TP%d, %d sequences: expert-parallel step %.3f ms below the split experts' %.3f", gpu, ShortName(name), tp, n, 1e3*e, 1e3*s)
					}
					if (!m.IsMoE() || tp == 1) && e != s {
						t.Errorf("%s %s TP%d: expert parallelism changed a step it cannot apply to (%g vs %g)", gpu, ShortName(name), tp, e, s)
					}
				}
				if !m.IsMoE() || tp == 1 {
					continue
				}
				long := Step{PrefillTokens: 8192, PrefillSeqs: 2, PrefillAttn: 1}
				if s, e := split.StepTime(long), ep.StepTime(long); e/s-1 > 0.02 {
					t.Errorf("%s %s TP%d: an 8192-token prefill costs %.1f%% more with expert parallelism, want within 2%%", gpu, ShortName(name), tp, 100*(e/s-1))
				}
			}
		}
	}
}

func TestExpertParallelAt(t *testing.T) {
	moe, _ := LookupLLM("Qwen/Qwen3-235B-A22B")
	dense, _ := LookupLLM("Qwen/Qwen3-32B")
	for _, tt := range []struct {
		m      LLM
		ep, tp int
		want   int
	}{
		{moe, 8, 8, 8}, {moe, 8, 4, 4}, {moe, 4, 8, 4}, {moe, 0, 8, 1}, {moe, 3, 6, 1}, {dense, 8, 8, 1},
	} {
		if got := tt.m.WithExpertParallel(tt.ep).ExpertParallelAt(tt.tp); got != tt.want {
			t.Errorf("%s EP%d at TP%d: %d, want %d", ShortName(tt.m.Name), tt.ep, tt.tp, got, tt.want)
		}
	}
}

// A roofline read back from JSON prices expert parallelism as the one it
// was written from, and a hand-built one without experts per group does
// not fail.
func TestExpertParallelRooflineJSON(t *testing.T) {
	g, _ := LookupGPU("H100")
	m, _ := LookupLLM("Qwen/Qwen3-235B-A22B")
	r := NewRoofline(g, m.WithExpertParallel(8), Pool{Count: 1, TP: 8})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Roofline
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, tokens := range []float64{1, 8, 64, 512} {
		if a, b := r.ExpertShare(tokens), back.ExpertShare(tokens); a != b {
			t.Errorf("%v tokens: share %v written, %v read back", tokens, a, b)
		}
		if a, b := r.expertLoad(tokens, r.expertTable()), back.expertLoad(tokens, back.expertTable()); a != b {
			t.Errorf("%v tokens: load %v written, %v read back", tokens, a, b)
		}
	}
	odd := Roofline{ExpertRead: 1, ExpertMiss: 0.9, ExpertGroups: 4}
	if got, want := odd.ExpertShare(1), odd.touched(1); got != want || odd.expertLoad(1, odd.expertTable()) != 1 {
		t.Errorf("no experts per group: share %v (want %v), load %v (want 1)", got, want, odd.expertLoad(1, odd.expertTable()))
	}
}

// Beyond 512 experts the exact table's binomial coefficients leave
// float64's range: the busiest group's share falls back to the
// binomial's mean plus maxZ standard deviations, still above the
// split experts' share and at most all of them.
func TestExpertParallelManyExperts(t *testing.T) {
	if busiestGroup(512, 2) != nil {
		t.Fatal("a table for 1024 experts: want none")
	}
	r := Roofline{ExpertRead: 1, ExpertMiss: 1 - 8.0/1024, ExpertGroups: 2, ExpertsPerGroup: 512}
	for _, tokens := range []float64{1, 8, 64, 4096} {
		q, got := r.touched(tokens), r.ExpertShare(tokens)
		if math.IsNaN(got) || got < q || got > 1 {
			t.Errorf("%v tokens: share %v, want between the split experts' %v and 1", tokens, got, q)
		}
	}
}
