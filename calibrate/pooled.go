package calibrate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// How a GPU or model without a fit of its own is priced: from every fitted
// group of the profile at once, not from the one nearest group. A single
// group's coefficients carry that benchmark's quirks (its client, its
// prefix-cache hits, what one TP degree cannot separate) to every target;
// a weighted geometric mean of many keeps what they share. Leave-one-GPU-out
// on the seeds and corpus (`capsim fit --cv`) halved the mean-TTFT error
// of the nearest-group rule this replaced (docs/accuracy.md).
const (
	// pooledSameFamily and pooledSameModel multiply the weight of a group of
	// the target's engine family, and of its model, on top of the
	// square root of the group's record count.
	pooledSameFamily = 3.0
	pooledSameModel  = 3.0
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
// of the role (or its nearest role); a dense target from dense groups, a
// mixture-of-experts one from MoE groups where there are any:
//   - efficiencies: the weighted geometric mean of the groups' inverse
//     efficiencies, each carried to the target GPU by the ratio of the two
//     GPUs' measured matmul or bandwidth shares (matmulShare);
//   - CPU overheads: the target engine's row (model.PriorCoeffsFor), since
//     what a group spends beyond its own row is that deployment's
//     (Group.Unexplained), never another GPU's or engine version's;
//   - comm 1: the interconnect catalog's cited all-reduce figures.
//
// Weights are √records × pooledSameFamily (same engine family) ×
// pooledSameModel (same model). It returns false when no group qualifies.
func (p *Profile) pooledCoeffs(gpu model.GPU, llm model.LLM, pool model.Pool, graphs []int, label string, s engine.Settings, role string, kind sourceKind, eager bool) (pooledCost, bool) {
	roles := nearRoles[role]
	fam := engine.Family(label)
	targetRow := engine.OverheadWith(label, s)
	type member struct {
		w float64
		c model.Coeffs
		g *Group
	}
	var ms []member
	// A fitted group's CPU costs beyond its engine row, and its comm
	// multiplier (which cannot tell a step's all-reduce latency from the
	// rest of its fixed per-step time), are that deployment's own: the
	// target takes its engine's row and the interconnect catalog's figures.
	row := model.PriorCoeffsFor(targetRow, eager)
	groups := make([]*Group, 0, len(p.Groups)+len(p.Pool))
	for i := range p.Groups {
		groups = append(groups, &p.Groups[i])
	}
	for i := range p.Pool {
		groups = append(groups, &p.Pool[i])
	}
	anyMoE := false
	for _, g := range groups {
		anyMoE = anyMoE || (g.GPU != "" && isMoE(g.Model) && roleEntry(g, roles) != nil)
	}
	for _, g := range groups {
		if g.GPU == "" || g.Model == "" {
			continue // an assumed GPU or model is not a measurement of it
		}
		e := roleEntry(g, roles)
		if e == nil {
			continue
		}
		if isMoE(g.Model) != llm.IsMoE() && (!llm.IsMoE() || anyMoE) {
			// A mixture-of-experts group's efficiencies are its fused
			// expert kernels' and its routing's, well below a dense
			// GEMM's: they price other MoE models, not a dense one, and
			// a MoE model is priced from them alone where there are any.
			continue
		}
		w := math.Sqrt(float64(len(g.Records)))
		if engine.Family(g.Engine) == fam {
			w *= pooledSameFamily
		}
		if g.Model == llm.Name {
			w *= pooledSameModel
		}
		c := e.Coeffs
		c.Overhead, c.PerSeq, c.Comm = row.Overhead, row.PerSeq, 1
		c.Compute *= memberMatmulShare(g) / gpu.AchievableMatmulShare(llm.Quant)
		mem := memberMemoryShare(g) / gpu.AchievableMemoryShare()
		c.Weight *= mem
		c.KV *= mem
		ms = append(ms, member{w, c, g})
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
	// The members' CPU costs and comm multipliers were set to the target's
	// row and 1 above; restore them exactly after the logs' round trip.
	out.coeffs.Overhead, out.coeffs.PerSeq, out.coeffs.Comm = row.Overhead, row.PerSeq, 1
	streamNote := ""
	if stream, ok := streamCoeff(gpu, llm); ok {
		// The fitted groups' weight and KV efficiencies carry their runs'
		// unexplained load costs, which those deployments keep and
		// another GPU does not pay.
		out.coeffs.Weight, out.coeffs.KV = stream, stream
		streamNote = "; weight and KV reads at the GPU's streaming share (" + model.DecodeStreamSource + ")"
	}
	// A mean of groups on GPUs that reach more of their peaks can carry an
	// efficiency above the target's spec peak; the peak still bounds it.
	var held []string
	for name, v := range map[string]*float64{"GEMM": &out.coeffs.Compute, "weight read": &out.coeffs.Weight, "KV read": &out.coeffs.KV} {
		if *v < 1 {
			*v = 1
			held = append(held, name)
		}
	}
	clamped := ""
	if len(held) > 0 {
		sort.Strings(held)
		clamped = "; " + strings.Join(held, " and ") + " held at peak"
	}
	share := fmt.Sprintf("; GEMM and memory efficiencies carried as shares of each GPU's measured matmul and bandwidth peaks (%s: %.0f%% and %.0f%% of spec%s)",
		gpu.Name, 100*gpu.AchievableMatmulShare(llm.Quant), 100*gpu.AchievableMemoryShare(), clamped)
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
	arch := ""
	if llm.IsMoE() && anyMoE {
		arch = " mixture-of-experts"
	}
	comm := "" // their figures have a line of their own (Derivation.Collectives)
	if pool.TP > 1 {
		comm = "; collectives at the interconnect catalog's cited latencies"
	}
	out.from = fmt.Sprintf("%s: %d fitted%s groups pooled (weighted geometric mean; heaviest: %s; CPU overheads: the %s engine-table row%s%s%s)",
		kind, len(ms), arch, strings.Join(top, ", "), targetRow.Generation, comm, share, streamNote)
	return out, true
}

// matmulShare: a GPU's spec peak is a boost-clock figure that GPUs reach
// to very different degrees in a large dense GEMM — H20 96%, A100 87%,
// H100 SXM 80%, H100 PCIe 66%, MI300X 54%, L4 49% in the public
// measurements the GPU catalog cites (model.GPU.MatmulShare) — by power
// caps, clocks and library maturity. A fitted GEMM efficiency says how
// close the engine came to what the GPU can do, so that is what is carried:
// each member's inverse efficiency is scaled by its GPU's share over the
// target's. This replaced a fitted trend of efficiency with FLOP/byte,
// which it explains (with the shares taken out, the trend's slope fell
// from 0.01–0.38 to 0.00–0.26 across the folds, its factor mostly to
// 0.91–1.07): leave-one-GPU-out mean TTFT 33% → 28%
// (docs/accuracy.md). Weight and KV reads carry the same way as
// shares of each GPU's measured streaming bandwidth (model.GPU.MemoryShare:
// 77% on the AMD GPUs, 85–96% on NVIDIA's).

// isMoE reports whether the catalog knows name as a mixture-of-experts model.
func isMoE(name string) bool {
	m, err := model.LookupLLM(name)
	return err == nil && m.IsMoE()
}

// streamCoeff is the weight and KV inverse efficiency of a dense model's
// decode on gpu where no fit of its own determined them: the GPU's
// measured streaming share (model.DecodeStreamSource). ok is false for a
// mixture of experts or latent attention, whose kernels are priced from
// fitted groups.
func streamCoeff(gpu model.GPU, llm model.LLM) (float64, bool) {
	if llm.IsMoE() || llm.LatentKV > 0 {
		return 0, false
	}
	return 1 / gpu.AchievableMemoryShare(), true
}

// memberMemoryShare is the bandwidth share of a group's GPU;
// MemoryShareUnmeasured when it is not in the catalog.
func memberMemoryShare(g *Group) float64 {
	if gpu, err := model.LookupGPU(g.GPU); err == nil {
		return gpu.AchievableMemoryShare()
	}
	return model.MemoryShareUnmeasured
}

// memberMatmulShare is the matmul share of a group's GPU at its model's
// weight format; MatmulShareUnmeasured when either is not in the catalogs.
func memberMatmulShare(g *Group) float64 {
	gpu, err1 := model.LookupGPU(g.GPU)
	llm, err2 := model.LookupLLM(g.Model)
	if err1 != nil || err2 != nil {
		return model.MatmulShareUnmeasured
	}
	return gpu.AchievableMatmulShare(llm.Quant)
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
	opts.CV, opts.Pool, opts.noResiduals = false, nil, true
	pool, _, err := Fit(ctx, recs, opts, progress)
	if err != nil {
		return fmt.Errorf("calibrate: transfer pool: %w", err)
	}
	prof.Pool = pool.Groups
	for _, w := range pool.Warnings {
		prof.Warnings = append(prof.Warnings, "pool: "+w)
	}
	return nil
}
