package main

import (
	"errors"
	"fmt"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/internal/optionerr"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
	"github.com/capsim/capsim/workload"
)

// parseLoads turns --concurrency or --rate lists into loads (nil when neither is given).
func parseLoads(concurrency, rate string, burstiness float64) ([]model.Load, error) {
	switch {
	case concurrency != "" && rate != "":
		return nil, fmt.Errorf("give either --concurrency or --rate, not both")
	case concurrency != "":
		loads, err := model.ParseConcurrencies(concurrency)
		return loads, flagError("--concurrency", err)
	case rate != "":
		if err := model.CheckBurstiness(burstiness); err != nil {
			return nil, flagError("--burstiness", err)
		}
		loads, err := model.ParseRates(rate, burstiness)
		return loads, flagError("--rate", err)
	}
	return nil, nil
}

// flagError names the flag a library error is about, in place of the
// library's prefix where err is an *optionerr.Error (a parser's, about
// the one value it was given) or a *calibrate.KVLinkError (its reason);
// it still wraps err.
func flagError(flag string, err error) error {
	if err == nil {
		return nil
	}
	return &flagErr{flag, err}
}

type flagErr struct {
	flag string
	err  error
}

func (e *flagErr) Error() string {
	if o, ok := e.err.(*optionerr.Error); ok {
		return e.flag + ": " + o.Text(nil)
	}
	if k, ok := e.err.(*calibrate.KVLinkError); ok {
		return e.flag + ": " + k.Reason
	}
	return e.flag + ": " + e.err.Error()
}

func (e *flagErr) Unwrap() error { return e.err }

// routerHelp is the help of --router (predict, validate and plan).
const routerHelp = "load balancer in front of replicas or decode workers: round-robin, least-outstanding, random or prefix-aware\n(prefix-aware: to the replica caching the longest prefix of the prompt; default: what the calibration states or its fit chose for a calibrated deployment, else round-robin)"

// datasetHelp is the help of --dataset (predict and plan).
var datasetHelp = "draw each request's prompt and output length from this dataset's sample, scaled to --isl and --osl (sharegpt)\n(default: every prompt at --isl, outputs within ±" + workload.OutputSpreadText + " of --osl)"

// hitRateHelp is the help of --prefix-hit-rate (predict and plan).
const hitRateHelp = "share of every prompt served from the engine's prefix cache, in [0, 1): not prefilled, but held in the KV cache"

// optionFlags says an *optionerr.Error from a library's Options.Validate
// after prefix, each field at fault called by its flag (flags: field to
// flag); other errors go to flagHint.
func optionFlags(err error, prefix string, flags map[string]string) error {
	e, ok := optionerr.As(err)
	if !ok {
		return flagHint(err)
	}
	return &optionFlagErr{prefix + e.Text(func(f string) string { return flags[f] }), e}
}

type optionFlagErr struct {
	msg string
	err error
}

func (e *optionFlagErr) Error() string { return e.msg }
func (e *optionFlagErr) Unwrap() error { return e.err }

// target turns the deployment flags into a profile target.
func (d *deploymentFlags) target(p *calibrate.Profile, modelName string, topo model.Topology) (calibrate.Target, error) {
	if err := d.checkDPAttention(); err != nil {
		return calibrate.Target{}, err
	}
	fe, err := statedFrontend(d.frontendMS, d.flags != nil && d.flags.Changed("frontend-ms"), topo)
	if err != nil {
		return calibrate.Target{}, err
	}
	t, err := p.Resolve(d.gpu, modelName, d.engine, topo)
	t.Router, t.DPAttention, t.Frontend, t.KVLink = d.router, d.dpAttention, fe, d.kvLink
	if err == nil {
		if err := calibrate.CheckKVLink(t.GPU, d.kvLink, topo); err != nil {
			return t, flagError("--kv-link", err)
		}
	}
	return t, flagHint(err)
}

// statedFrontend turns --frontend-ms into calibrate.Target.Frontend (nil
// when not given), checked for topo.
func statedFrontend(ms float64, given bool, topo model.Topology) (*float64, error) {
	if !given {
		return nil, nil
	}
	s := ms / 1000
	if err := calibrate.StatedFrontend(s, topo); errors.Is(err, calibrate.ErrFrontendRange) {
		return nil, fmt.Errorf("--frontend-ms must be 0 to %g, got %v", 1000*calibrate.MaxStatedFrontend, ms)
	} else if err != nil {
		return nil, flagError("--frontend-ms", err)
	}
	return &s, nil
}

// checkDPAttention refuses a negative --dp-attention.
func (d *deploymentFlags) checkDPAttention() error {
	if d.dpAttention < 0 {
		return fmt.Errorf("--dp-attention must be 1 or more, got %d", d.dpAttention)
	}
	return nil
}

// loadRecords reads the user's result files with their sidecar metadata
// (comma lists and shell patterns allowed), or the embedded fixtures when
// none are named.
func loadRecords(files []string) ([]results.Record, error) {
	if len(files) == 0 {
		return fixtures.Records()
	}
	return results.LoadPatterns(files)
}
