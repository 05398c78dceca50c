package calibrate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// How a GPU or model without a fit of its own is priced: from every fitted
// group of the profile at once, not from the one nearest group. A single
// group's coefficients carry that benchmark's quirks (its client, its
// prefix-cache hits, what one TP degree cannot separate) to every target;
// a weighted geometric mean of many keeps what they share. Leave-one-GPU-out
// on the seeds and corpus (`capsim fit --cv`) halved the mean-TTFT error
// of the nearest-group rule this replaced (docs/accuracy-analysis.md).
const (
	// pooledSameFamily and pooledSameModel multiply the weight of a group of
	// the target's engine family, and of its model, on top of the
	// square root of the group's record count.
	pooledSameFamily = 3.0
	pooledSameModel  = 3.0
	// Floors of the CPU costs before taking logs: a fit that drove one to
	// zero (it is then absorbed by another term) would otherwise dominate.
	pooledMinOverheadS = 2e-4
	pooledMinPerSeqS   = 2e-6
	// balanceMinGPUs is how many distinct GPU balances must have fitted a
	// GEMM efficiency before its trend with the balance is trusted.
	balanceMinGPUs = 3
)

// pooledCost is a pool's price pooled over the profile's fitted groups.
type pooledCost struct {
	coeffs model.Coeffs
	// relSigma is the weighted spread of the pooled groups' typical step
	// times on the target's roofline, with in quadrature the systematic
	// error of carrying costs to another GPU or model (sigmaOtherGroup) and
	// of the engine table's overheads (sigmaOtherVersion), as a single
	// carried group had before pooling.
	relSigma float64
	groups   int
	from     string // what the derivation prints
}

// pooledCoeffs prices a role of a target pool from every group (of Groups
// and of the transfer Pool) that names its GPU and model and has an entry
// of the role (or its nearest role):
//   - efficiencies are the weighted geometric mean of the groups' fitted
//     inverse efficiencies (each at least 1, so the mean is too);
//   - CPU overheads are the target engine's table prior times the weighted
//     geometric mean of each group's fitted overhead ÷ its own engine's
//     table prior (in the group's eager or CUDA-graph mode), so a version's
//     catalogued speed-up carries while the fits say how far the table is
//     from measured engines.
//
// Weights are √records × pooledSameFamily (same engine family) ×
// pooledSameModel (same model). It returns false when no group qualifies.
func (p *Profile) pooledCoeffs(gpu model.GPU, llm model.LLM, pool model.Pool, graphs []int, engine, role, kind string, eager bool) (pooledCost, bool) {
	roles := nearRoles[role]
	fam := model.EngineFamily(engine)
	target := model.PriorCoeffsFor(model.EngineOverheadFor(engine), eager)
	type member struct {
		w float64
		c model.Coeffs
		g *Group
		e *Entry
	}
	var ms []member
	groups := make([]*Group, 0, len(p.Groups)+len(p.Pool))
	for i := range p.Groups {
		groups = append(groups, &p.Groups[i])
	}
	for i := range p.Pool {
		groups = append(groups, &p.Pool[i])
	}
	for _, g := range groups {
		if g.GPU == "" || g.Model == "" {
			continue // an assumed GPU or model is not a measurement of it
		}
		e := roleEntry(g, roles)
		if e == nil {
			continue
		}
		w := math.Sqrt(float64(len(g.Records)))
		if model.EngineFamily(g.Engine) == fam {
			w *= pooledSameFamily
		}
		if g.Model == llm.Name {
			w *= pooledSameModel
		}
		c := e.Coeffs
		own := model.PriorCoeffsFor(model.EngineOverheadFor(g.Engine), e.Eager)
		c.Overhead = math.Max(c.Overhead, pooledMinOverheadS) / own.Overhead * target.Overhead
		c.PerSeq = math.Max(c.PerSeq, pooledMinPerSeqS) / own.PerSeq * target.PerSeq
		ms = append(ms, member{w, c, g, e})
	}
	if len(ms) == 0 {
		return pooledCost{}, false
	}
	sum := make([]float64, len(model.CoeffNames))
	wsum := 0.0
	for _, m := range ms {
		for k, v := range m.c.Vector() {
			sum[k] += m.w * math.Log(v)
		}
		wsum += m.w
	}
	for k := range sum {
		sum[k] = math.Exp(sum[k] / wsum)
	}
	out := pooledCost{coeffs: model.CoeffsFromVector(sum), groups: len(ms)}
	// A GPU none of the groups ran on: move the GEMM efficiency along the
	// groups' trend with the GPU's balance (balanceTrend).
	onGPU := false
	xs := make([]float64, len(ms))
	fitted := make([]bool, len(ms))
	var xmean, xw float64
	for i, m := range ms {
		onGPU = onGPU || m.g.GPU == gpu.Name
		xs[i], fitted[i] = memberBalance(m.g), slices.Contains(m.e.Fitted, model.CoeffNames[iCompute])
		if !math.IsNaN(xs[i]) {
			xmean += m.w * xs[i]
			xw += m.w
		}
	}
	trend := ""
	if !onGPU && xw > 0 {
		xmean /= xw
		ws := make([]float64, len(ms))
		ys := make([]float64, len(ms))
		balances := map[float64]bool{} // GPUs of one balance (H100-SXM, H800) tell no trend apart
		for i, m := range ms {
			if fitted[i] && !math.IsNaN(xs[i]) {
				ws[i], ys[i] = m.w, math.Log(m.c.Compute)
				balances[math.Round(xs[i]*1000)] = true
			}
		}
		if b, ok := balanceSlope(xs, ys, ws); ok && len(balances) >= balanceMinGPUs {
			before := out.coeffs.Compute
			out.coeffs.Compute = math.Max(1, before*math.Exp(b*(gpuBalance(gpu, llm)-xmean)))
			clamped := ""
			if out.coeffs.Compute == 1 {
				clamped = ", held at peak"
			}
			trend = fmt.Sprintf("; GEMM efficiency ×%.2f along the trend with FLOP/byte (inverse efficiency ∝ balance^%.2f over %d GPU balances%s)",
				before/out.coeffs.Compute, b, len(balances), clamped)
		}
	}
	// The band: how far the pooled groups' own prices of a typical step of
	// this pool lie from each other, plus the carrying error.
	var mean, sq float64
	logs := make([]float64, len(ms))
	for i, m := range ms {
		logs[i] = math.Log(model.NewStepCost(gpu, llm, pool, m.c, graphs).StepTime(typicalStepOf(role)))
		mean += m.w * logs[i]
	}
	mean /= wsum
	for i, m := range ms {
		sq += m.w * (logs[i] - mean) * (logs[i] - mean)
	}
	out.relSigma = math.Hypot(math.Sqrt(sq/wsum), math.Hypot(sigmaOtherGroup, sigmaOtherVersion))
	// Name the heaviest groups so a reader can see what priced the pool.
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].w > ms[j].w })
	var top []string
	for _, m := range ms[:min(3, len(ms))] {
		top = append(top, fmt.Sprintf("%s on %s / %s", m.g.Engine, m.g.GPU, model.ShortName(m.g.Model)))
	}
	out.from = fmt.Sprintf("%s: %d fitted groups pooled (weighted geometric mean; heaviest: %s; CPU overheads: the %s engine-table row × the groups' fitted-to-table ratio%s)",
		kind, len(ms), strings.Join(top, ", "), model.EngineOverheadFor(engine).Generation, trend)
	return out, true
}

// balanceTrend: a GPU's balance is its GEMM FLOP/s per byte/s of memory
// bandwidth (about 37 on H20, 153 on A100, 295 on H100-SXM). The fitted
// groups reach a smaller share of peak FLOP/s the higher it is — H20's
// groups fit 80–100% of peak, A100's 53–67%, H100's 21–38% — because what
// runs beside the GEMMs (norms, activations, rotary embeddings, KV-cache
// writes, sampling, kernel gaps) is paid in memory traffic and time that do
// not shrink with the tensor cores. Pooling a constant share carried H20's
// efficiency to H100 and A100's to H20. balanceSlope fits the trend as
// log(inverse efficiency) = a + b·log(balance) over the groups that fitted
// their GEMM efficiency (the others hold the prior, which says nothing of
// the GPU), and pooling moves the pooled mean by b times the target's
// log-balance distance from the members' weighted mean. The slope is
// bounded to [0, 1]: efficiency never rises with balance, and never falls
// faster than balance grows (more FLOP/s at the same bandwidth never makes
// a GEMM slower).
// It applies only to a GPU none of the pooled groups ran on; groups of the
// GPU itself say its efficiency directly. Leave-one-GPU-out over seeds and
// corpus: mean-TTFT median error 38% → 31%, other metrics within a point
// (docs/accuracy-analysis.md).
const balanceMaxSlope = 1.0

// gpuBalance is the log of g's GEMM FLOP/s per byte/s of bandwidth at
// llm's weight format.
func gpuBalance(g model.GPU, llm model.LLM) float64 {
	return math.Log(g.GEMMTFLOPS(llm.Quant) / g.MemoryTBps)
}

// memberBalance is gpuBalance of a group's GPU and model, NaN when either
// is not in the catalogs.
func memberBalance(g *Group) float64 {
	gpu, err1 := model.LookupGPU(g.GPU)
	llm, err2 := model.LookupLLM(g.Model)
	if err1 != nil || err2 != nil {
		return math.NaN()
	}
	return gpuBalance(gpu, llm)
}

// balanceSlope is the weighted least-squares slope of ys on xs (zero
// weights left out), bounded to [0, balanceMaxSlope]; false when the xs do
// not vary.
func balanceSlope(xs, ys, ws []float64) (float64, bool) {
	var sw, sx, sy, sxx, sxy float64
	for i, w := range ws {
		if w <= 0 {
			continue
		}
		sw += w
		sx += w * xs[i]
		sy += w * ys[i]
		sxx += w * xs[i] * xs[i]
		sxy += w * xs[i] * ys[i]
	}
	if sw == 0 {
		return 0, false
	}
	mx, my := sx/sw, sy/sw
	vx := sxx/sw - mx*mx
	if vx <= 1e-12 {
		return 0, false
	}
	b := (sxy/sw - mx*my) / vx
	return math.Max(0, math.Min(b, balanceMaxSlope)), true
}

// roleEntry is a group's first entry of the first role in roles that it has.
func roleEntry(g *Group, roles []string) *Entry {
	for _, r := range roles {
		for j := range g.Entries {
			if g.Entries[j].Role == r {
				return &g.Entries[j]
			}
		}
	}
	return nil
}

// typicalStepOf is the step a role's uncertainty is judged by: a
// 2048-token prefill, or a decode step of 32 sequences at 1,000 tokens of
// context.
func typicalStepOf(role string) model.Step {
	if role == RolePrefill {
		return model.Step{PrefillTokens: 2048, PrefillSeqs: 1, PrefillAttn: model.ChunkAttn(0, 2048)}
	}
	return model.Step{DecodeSeqs: 32, DecodeKV: 32000}
}

// FitPool fits recs into prof's transfer Pool: their groups help price
// GPUs and models prof has no group of, and nothing else. Residuals are
// dropped (the pool is not a calibration of its own deployments); the
// fit's warnings are kept, prefixed "pool: ".
func FitPool(ctx context.Context, prof *Profile, recs []results.Record, opts Options, progress func(Progress)) error {
	opts.CV, opts.Pool = false, nil
	pool, _, err := Fit(ctx, recs, opts, progress)
	if err != nil {
		return fmt.Errorf("calibrate: transfer pool: %w", err)
	}
	prof.Pool = pool.Groups
	for i := range prof.Pool {
		prof.Pool[i].Residuals = nil
	}
	for _, w := range pool.Warnings {
		prof.Warnings = append(prof.Warnings, "pool: "+w)
	}
	return nil
}
