package calibrate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/capsim/capsim/model"
)

// bound is the physically sensible range of one number a profile holds.
// A value outside it (or not finite) is refused when the profile is read:
// zero costs would predict infinite throughput, a cost of 1e308 seconds
// would stall the simulator, a negative σ or a memory fraction of 5 mean
// nothing.
type bound struct{ lo, hi float64 }

// check is false for NaN and ±Inf outside the range.
func (b bound) check(v float64) bool { return v >= b.lo && v <= b.hi }

// profileBounds lists the range of every number of a profile, by its JSON
// path below a group ("coeffs.NAME" for each of model.CoeffNames). To add
// a coefficient, add its line here: TestEveryCoefficientHasABound fails
// until then.
var profileBounds = map[string]bound{
	// Seconds per engine step and per sequence in a step.
	"coeffs.overhead_s": {0, 10},
	"coeffs.per_seq_s":  {0, 1},
	// Multipliers of the roofline time (1 = peak hardware): faster than
	// 1/100 of the roofline or slower than 10,000× it is not an engine.
	"coeffs.weight":  {0.01, 1e4},
	"coeffs.compute": {0.01, 1e4},
	"coeffs.attn":    {0.01, 1e4},
	"coeffs.kv":      {0.01, 1e4},
	"coeffs.comm":    {0.01, 1e4},
	// Relative standard deviations (σ / value).
	"rel_sigma":          {0, 100},
	"transfer.rel_sigma": {0, 100},
	"frontend.rel_sigma": {0, 100},
	// KV transfer between prefill and decode workers, and the frontend.
	"transfer.latency_s":   {0, 60},
	"transfer.per_token_s": {0, 0.01},
	"frontend.latency_s":   {0, 60},
	"frontend.service_s":   {0, 60},
	// Worker shapes and engine settings (0 = the engine's default).
	"tp":                              {1, 1024},
	"pp":                              {0, 1024},
	"graph_sizes":                     {1, 1 << 16},
	"settings.block_size":             {0, 1 << 12},
	"settings.max_num_batched_tokens": {0, 1e8},
	"settings.max_num_seqs":           {0, 1e6},
	"settings.max_model_len":          {0, 1e8},
	"settings.gpu_memory_utilization": {0, 1},
	"settings.kv_cache_gib":           {0, 1 << 14},
	"settings.reserve_gb":             {0, 1 << 14},
	"settings.window_pool":            {0, 64},
	"settings.cuda_graph_max":         {0, 1 << 16},
}

// coeffFallback bounds a coefficient profileBounds does not list yet.
var coeffFallback = bound{0, 1e4}

// checkBound reports v outside the bound of key, naming where it is.
func checkBound(where, key string, v float64) error {
	b, ok := profileBounds[key]
	if !ok {
		b = coeffFallback
	}
	if b.check(v) {
		return nil
	}
	return fmt.Errorf("calibrate: profile: %s: %s is %v; want a number from %s to %s", where, key, v, fmtBound(b.lo), fmtBound(b.hi))
}

func fmtBound(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// validateBounds checks every number of g against profileBounds.
func validateBounds(label string, g *Group) error {
	where := fmt.Sprintf("%s (%s)", label, g.Engine)
	s := g.Settings
	for _, f := range []struct {
		key string
		v   float64
	}{
		{"settings.block_size", float64(s.BlockSize)},
		{"settings.max_num_batched_tokens", float64(s.MaxNumBatchedTokens)},
		{"settings.max_num_seqs", float64(s.MaxNumSeqs)},
		{"settings.max_model_len", float64(s.MaxModelLen)},
		{"settings.gpu_memory_utilization", s.GPUMemoryUtilization},
		{"settings.kv_cache_gib", s.KVCacheGiB},
		{"settings.reserve_gb", s.ReserveGB},
		{"settings.window_pool", s.WindowPool},
		{"settings.cuda_graph_max", float64(s.GraphMax)},
		{"transfer.latency_s", g.Transfer.LatencyS},
		{"transfer.per_token_s", g.Transfer.PerTokenS},
		{"transfer.rel_sigma", g.Transfer.RelSigma},
	} {
		if err := checkBound(where, f.key, f.v); err != nil {
			return err
		}
	}
	if fe := g.Frontend; fe != nil {
		if err := checkBound(where, "frontend.latency_s", fe.LatencyS); err != nil {
			return err
		}
		if err := checkBound(where, "frontend.rel_sigma", fe.RelSigma); err != nil {
			return err
		}
		if err := checkBound(where, "frontend.service_s", fe.ServiceS); err != nil {
			return err
		}
	}
	for j := range g.Entries {
		e := &g.Entries[j]
		ew := fmt.Sprintf("%s entry %d (%s TP%d)", where, j, e.Role, e.TP)
		if err := checkBound(ew, "tp", float64(e.TP)); err != nil {
			return err
		}
		if err := checkBound(ew, "pp", float64(e.PP)); err != nil {
			return err
		}
		for _, n := range e.GraphSizes {
			if err := checkBound(ew, "graph_sizes", float64(n)); err != nil {
				return err
			}
		}
		for k, v := range e.Coeffs.Vector() {
			if err := checkBound(ew, "coeffs."+model.CoeffNames[k], v); err != nil {
				return err
			}
		}
		for _, name := range slices.Sorted(maps.Keys(e.RelSigma)) {
			if err := checkBound(ew, "rel_sigma", e.RelSigma[name]); err != nil {
				return fmt.Errorf("%w (of %s)", err, name)
			}
		}
	}
	return nil
}
