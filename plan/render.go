package plan

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/capsim/capsim/internal/textout"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/predict"
)

// Rendering of a plan as text tables and tidy CSV; it knows nothing of
// flags, but names them where a search limit says what moves it.

// WriteTable writes a plan as capsim plan prints it: a text table, or on
// a textout.Output for CSV its tables alone.
func WriteTable(w io.Writer, r *Result) error {
	var slos []string
	for _, s := range r.SLOs {
		slos = append(slos, s.String())
	}
	fmt.Fprintf(w, "%s, ISL %d / OSL %d at %s; SLOs %s%s\n", model.ShortName(r.Model), r.ISL, r.OSL, r.Load, strings.Join(slos, ", "), predict.WorkloadClause(r.PrefixHitRate, r.Dataset))
	fmt.Fprintf(w, "verdicts: %s simulation, every SLO met with %.0f%% confidence (each pool's costs at %+.2fσ of their band)\n",
		r.Mode, 100*r.Confidence, r.BandSigmas)
	if r.FrontendMS != nil {
		fmt.Fprintf(w, "frontend: %.1f ms a request outside the engine, stated, for aggregated deployments\n", *r.FrontendMS)
	}
	if r.KVLink != "" {
		fmt.Fprintf(w, "KV link: disaggregated deployments' KV transfers priced over %s (stated)\n", r.KVLink)
	}
	s := r.Search
	fmt.Fprintf(w, "searched %d deployments on %s (up to %d GPUs): %d below the rate by capacity bound, %d too slow for an SLO alone, "+
		"%d costlier than the top %d, %d missed a screening run, %d simulated in steady state, %d meet every SLO "+
		"(%d near %s tried other engine settings, %d then met them; %d simulations)\n",
		s.Candidates, strings.Join(r.GPUTypes, ", "), r.MaxGPUs, s.Overloaded, s.TooSlow, s.Costlier, len(r.Recommendations), s.ShortMissed,
		s.Simulated, s.Feasible, s.SettingsTried, textout.Plural(s.SettingsTried, "miss", "misses"), s.SettingsFound, s.Simulations)
	for _, l := range LimitLines(r) {
		fmt.Fprintf(w, "limit: %s\n", l)
	}
	if r.CostUnit == CostGPUs && len(r.GPUTypes) > 1 {
		// A count ranks a B200 level with an L4.
		fmt.Fprintf(w, "cost: GPUs counted alike across %d GPU types; --gpu-cost (e.g. H100-SXM=2.5,B200=5) ranks them by price\n", len(r.GPUTypes))
	}
	fmt.Fprintln(w)
	tw := textout.NewTable(w)
	head := "rank\tGPU\ttopology\tGPUs\t" + planCostHeader(r.CostUnit) + "\t"
	for _, s := range r.SLOs {
		head += s.Label() + "\t"
	}
	head += "tok/s/GPU\ttok/s/user\theadroom\tlimit\tbottleneck\tcosts\t"
	fmt.Fprintln(tw, head)
	for _, rec := range r.Recommendations {
		row := fmt.Sprintf("%d\t%s\t%s\t%d\t%s\t", rec.Rank, rec.GPU, rec.Shape(), rec.GPUs, planCost(rec.Cost, r.CostUnit))
		for _, v := range rec.SLOValues {
			row += textout.Value(v.Value) + "\t"
		}
		row += fmt.Sprintf("%.1f\t%.1f\t%s\t%s\t%s\t%s ±%.0f%%\t", rec.OutputPerGPU, rec.PerUser, planHeadroom(rec.Headroom),
			cmp.Or(rec.Headroom.Binding, "-"), rec.Bottleneck.Resource, rec.Costs, 100*rec.Uncertainty)
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "(latencies in ms at the verdicts' confidence; headroom: the highest load still meeting every SLO; limit: the SLO missed first above it)")
	for _, rec := range r.Recommendations {
		fmt.Fprintf(w, "%d. %s, %s: %s — %s\n", rec.Rank, rec.Engine, rec.Layout, rec.Bottleneck.Resource, rec.Bottleneck.Why)
		fmt.Fprintf(w, "   engine: %s", planSettings(rec.Settings))
		if rec.Router != "" {
			fmt.Fprintf(w, "; router %s", rec.Router)
		}
		if len(rec.Central) > 0 {
			var cs []string
			for _, c := range rec.Central {
				cs = append(cs, fmt.Sprintf("%s %s", c.SLO, textout.Value(c.Value)))
			}
			fmt.Fprintf(w, "; central costs: %s ms", strings.Join(cs, ", "))
		}
		fmt.Fprintln(w)
	}
	if m := r.Margin; m != nil {
		if m.CentralBest == "" {
			fmt.Fprintf(w, "margin: even with central costs no cheaper deployment meets every SLO\n")
		} else {
			fmt.Fprintf(w, "margin: with central costs the cheapest deployment meeting every SLO is %s on %d× %s (cost %s); the %.0f%% confidence costs %s more\n",
				m.CentralBest, m.CentralGPUs, m.CentralGPU, planCost(m.CentralCost, r.CostUnit), 100*r.Confidence, planCost(m.Extra, r.CostUnit))
		}
	}
	fmt.Fprintf(w, "\nPareto frontier of output tokens/s per GPU against per user, over the %s (%d simulated in all):\n", r.FrontierOf, len(r.Cloud))
	tw = textout.NewTable(w)
	fmt.Fprintln(tw, "GPU\ttopology\tGPUs\ttok/s/GPU\ttok/s/user\tmeets SLOs\t")
	for _, p := range r.Frontier {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%s\t\n", p.GPU, p.Shape(), p.GPUs, p.OutputPerGPU, p.PerUser, map[bool]string{true: "yes", false: "no"}[p.MeetsSLOs])
	}
	return tw.Flush()
}

// planSettings is one line of engine settings per pool, "*" marking values the search chose.
func planSettings(ps []predict.EngineSettings) string {
	var parts []string
	for _, p := range ps {
		mark := ""
		if p.Searched {
			mark = " (searched)"
		}
		layout := ""
		if p.DPAttention > 1 {
			layout = fmt.Sprintf(", --enable-dp-attention --dp %d", p.DPAttention)
		}
		if p.ExpertParallel > 1 {
			layout += fmt.Sprintf(", experts over %d GPUs (expert parallelism)", p.ExpertParallel)
		}
		parts = append(parts, fmt.Sprintf("%s max-num-seqs %d, max-num-batched-tokens %d%s%s", p.Role, p.MaxNumSeqs, p.MaxNumBatchedTokens, layout, mark))
	}
	return strings.Join(parts, "; ")
}

func planCostHeader(unit string) string {
	if unit == "GPUs" {
		return "cost"
	}
	return "cost " + unit
}

func planCost(c float64, unit string) string {
	if unit == "GPUs" {
		return strconv.FormatFloat(c, 'f', -1, 64)
	}
	return fmt.Sprintf("%.2f", c)
}

func planHeadroom(h Headroom) string {
	at := ""
	if h.AtLeast {
		at = "≥"
	}
	if h.MaxConcurrency > 0 {
		return fmt.Sprintf("%sc=%d (%.2f×)", at, h.MaxConcurrency, h.Ratio)
	}
	return fmt.Sprintf("%s%.3g req/s (%.2f×)", at, h.RequestRate, h.Ratio)
}

// WriteCSV writes one row per recommendation under one header: the
// deployment, its cost, each SLO's simulated value and limit at the
// verdicts' confidence, throughputs, headroom and what binds it. The
// Pareto frontier and the margin are in --format json.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	head := []string{"rank", "gpu", "engine", "topology", "notation", "gpus", "cost", "cost_unit"}
	for _, s := range r.SLOs {
		head = append(head, s.Label()+"_ms", s.Label()+"_limit_ms")
	}
	head = append(head, "output_throughput_per_gpu", "output_tokens_per_user", "headroom_request_rate", "headroom_max_concurrency",
		"headroom_ratio", "headroom_at_least", "binding_slo", "bottleneck", "costs", "uncertainty", "search_limit_bound")
	limits := strings.Join(LimitLines(r), "; ")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, rec := range r.Recommendations {
		row := []string{strconv.Itoa(rec.Rank), rec.GPU, rec.Engine, rec.Layout, rec.Notation, strconv.Itoa(rec.GPUs), textout.Number(rec.Cost), r.CostUnit}
		for _, v := range rec.SLOValues {
			row = append(row, textout.Number(v.Value), textout.Number(v.Limit))
		}
		h := rec.Headroom
		rate, conc := "", ""
		if h.RequestRate > 0 {
			rate = textout.Number(h.RequestRate)
		}
		if h.MaxConcurrency > 0 {
			conc = strconv.Itoa(h.MaxConcurrency)
		}
		row = append(row, textout.Number(rec.OutputPerGPU), textout.Number(rec.PerUser), rate, conc, textout.Number(h.Ratio), strconv.FormatBool(h.AtLeast),
			h.Binding, rec.Bottleneck.Resource, rec.Costs, textout.Number(rec.Uncertainty), limits)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// LimitLines say which search limits bound the search (LimitBound)
// and what lies past each, naming the flag that moves it.
func LimitLines(r *Result) []string {
	var out []string
	for _, l := range r.Limits {
		than := "cost less than rank 1 (" + planCost(l.Against, r.CostUnit) + ")"
		if l.Against == 0 {
			than = "might meet the SLOs where nothing searched did"
		}
		limit := fmt.Sprintf("the %d-GPU limit (--max-gpus)", l.Value)
		where, rerun := fmt.Sprintf("past it, up to %d GPUs,", l.UpTo), fmt.Sprintf("--max-gpus %d", l.CheapestGPUs)
		if l.Limit == LimitTP {
			var tps []string
			for _, tp := range l.Excluded {
				tps = append(tps, strconv.Itoa(tp))
			}
			limit = "--tp"
			where, rerun = fmt.Sprintf("at TP %s, which it left out,", strings.Join(tps, ", ")), "--tp naming them, or without --tp"
		}
		past := fmt.Sprintf("the cheapest of the %d simulated, %s on %d GPUs (cost %s), meets every SLO in one steady-state run: rerun with %s",
			l.Simulated, l.Cheapest, l.CheapestGPUs, planCost(l.CheapestCost, r.CostUnit), rerun)
		if !l.Meets {
			past = fmt.Sprintf("the %d simulated, from %s on %d GPUs (cost %s), miss them", l.Simulated, l.Cheapest, l.CheapestGPUs, planCost(l.CheapestCost, r.CostUnit))
		}
		out = append(out, fmt.Sprintf("%s bound the search: %d %s %s pass the capacity and latency bounds and %s; %s",
			limit, l.Untried, textout.Plural(l.Untried, "deployment", "deployments"), where, than, past))
	}
	return out
}
