package plan

import (
	"errors"
	"fmt"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/internal/optionerr"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// The Options fields Validate names in its *optionerr.Error, with the
// words plan's own messages use for them.
var (
	fieldModel      = optionerr.Field{Name: "Model", Words: "model"}
	fieldISL        = optionerr.Field{Name: "ISL", Words: "ISL"}
	fieldOSL        = optionerr.Field{Name: "OSL", Words: "OSL"}
	fieldLoad       = optionerr.Field{Name: "Load", Words: "rate"}
	fieldRate       = optionerr.Field{Name: "Rate", Words: "a rate"}
	fieldConc       = optionerr.Field{Name: "Concurrency", Words: "a concurrency"}
	fieldSLOs       = optionerr.Field{Name: "SLOs", Words: "an SLO"}
	fieldMaxGPUs    = optionerr.Field{Name: "MaxGPUs", Words: "max GPUs"}
	fieldTopK       = optionerr.Field{Name: "TopK", Words: "top K"}
	fieldNumPrompts = optionerr.Field{Name: "NumPrompts", Words: "num prompts"}
	fieldHitRate    = optionerr.Field{Name: "PrefixHitRate", Words: "prefix-cache hit rate"}
	fieldConfidence = optionerr.Field{Name: "Confidence", Words: "confidence"}
	fieldTPs        = optionerr.Field{Name: "TPs", Words: "TP degrees"}
	fieldGPUCost    = optionerr.Field{Name: "GPUCost", Words: "GPU cost"}
	fieldKVLink     = optionerr.Field{Name: "KVLink", Words: "KV link"}
)

// oneServer is the smallest disaggregated deployment: a stated KV link
// that cannot price it prices no candidate.
var oneServer = model.Disaggregated(model.Pool{Count: 1, TP: 1}, model.Pool{Count: 1, TP: 1})

func invalid(format string, fields []optionerr.Field, args ...any) error {
	return optionerr.New("plan: ", fields, format, args...)
}

// Validate checks o as given: a zero MaxGPUs, TopK or Confidence is
// refused, so call it on options that state their defaults (DefaultMaxGPUs,
// DefaultTopK, DefaultConfidence), as a command line's flags do; Run fills
// zero values with the defaults, then validates. A value at fault in one
// field is an *optionerr.Error naming it; MaxGPUs above MaxGPUsLimit
// matches ErrTooManyGPUs.
func (o Options) Validate() error { return o.validate(nil) }

// validate is Validate, and sets *dataset (when not nil) to the workload's
// dataset as datasets.Check names it.
func (o Options) validate(dataset *string) error {
	w := o.Workload
	one := func(f optionerr.Field) []optionerr.Field { return []optionerr.Field{f} }
	switch {
	case o.Model == "":
		return invalid("%s is required (known: %s)", one(fieldModel), calibrate.LLMList())
	case w.ISL <= 0 || w.OSL <= 0:
		return invalid("%s and %s are required and must be positive", []optionerr.Field{fieldISL, fieldOSL})
	case w.ISL > model.MaxSequenceTokens:
		return invalid("%s %d is more than %d tokens, the longest prompt or output capsim models", one(fieldISL), w.ISL, model.MaxSequenceTokens)
	case w.OSL > model.MaxSequenceTokens:
		return invalid("%s %d is more than %d tokens, the longest prompt or output capsim models", one(fieldOSL), w.OSL, model.MaxSequenceTokens)
	case len(o.SLOs) == 0:
		return invalid("%s is required, e.g. ttft_p99=2000ms,tpot_p99=50ms", one(fieldSLOs))
	case w.Load.Kind == "":
		return invalid("give the target load: %s R (req/s) or %s N", []optionerr.Field{fieldRate, fieldConc})
	case w.Load.Kind == model.Burst:
		return invalid("%s inf is not a load to size for: give a finite rate", one(fieldLoad))
	case o.MaxGPUs <= 0:
		return invalid("%s must be positive, got %d", one(fieldMaxGPUs), o.MaxGPUs)
	case o.MaxGPUs > MaxGPUsLimit:
		return &maxGPUsError{fmt.Sprintf("plan: max GPUs %d is more than %d: the candidates grow with its square (%d GPUs over every catalog GPU take a minute or more and 2 to 4 GB)", o.MaxGPUs, MaxGPUsLimit, MaxGPUsLimit)}
	case o.TopK <= 0 || o.TopK > MaxTopK:
		return invalid("%s must be from 1 to %d, got %d", one(fieldTopK), MaxTopK, o.TopK)
	case w.NumPrompts < 0:
		return invalid("%s must be positive, got %d", one(fieldNumPrompts), w.NumPrompts)
	case !sim.ValidPrefixHitRate(w.PrefixHitRate):
		return invalid("%s must be a fraction in [0, 1), got %v", one(fieldHitRate), w.PrefixHitRate)
	case !(o.Confidence > 0 && o.Confidence < 1):
		return invalid("%s must be between 0 and 1 (exclusive), got %v", one(fieldConfidence), o.Confidence)
	case w.Sharing.Validate() != nil:
		return fmt.Errorf("plan: prefix sharing: %w", w.Sharing.Validate())
	case w.Sharing.Turns > 1:
		return errors.New("plan: multi-turn conversations are not planned (their prompts grow turn by turn, beyond the bounds the search prices); predict them")
	case w.Sharing.On() && w.ISL <= w.Sharing.SharedLen:
		return fmt.Errorf("plan: ISL %d is not longer than the %d shared tokens of every prompt", w.ISL, w.Sharing.SharedLen)
	case calibrate.CheckRouter(o.Router) != nil:
		return fmt.Errorf("plan: %w", calibrate.CheckRouter(o.Router))
	case o.Frontend != nil && calibrate.StatedFrontend(*o.Frontend, model.Topology{}) != nil:
		return fmt.Errorf("plan: %w", calibrate.StatedFrontend(*o.Frontend, model.Topology{}))
	case o.Frontend != nil && o.Disaggregated && !o.Aggregated:
		return fmt.Errorf("plan: %w applies to aggregated deployments, and the search is of disaggregated ones only", calibrate.ErrStatedFrontend)
	}
	for _, tp := range o.TPs {
		if tp <= 0 {
			return invalid("%s: %d is not a positive integer", one(fieldTPs), tp)
		}
	}
	if o.KVLink != "" {
		if _, ok := model.KVLinkWithinServer(o.KVLink); !ok {
			return invalid("%s: unknown link %q (want a GPU's own link such as NVLink4, or RDMA400, RDMA200 or %s)", one(fieldKVLink), o.KVLink, model.NodeNetwork)
		}
		if o.Aggregated && !o.Disaggregated {
			return invalid("%s applies to disaggregated deployments, and the search is of aggregated ones only", one(fieldKVLink))
		}
		for _, name := range o.GPUs {
			if g, err := model.LookupGPU(name); err == nil {
				if e, ok := errors.AsType[*calibrate.KVLinkError](calibrate.CheckKVLink(g, o.KVLink, oneServer)); ok {
					return invalid("%s: %s", one(fieldKVLink), e.Reason)
				}
			}
		}
	}
	if err := w.Load.Validate(); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	name, err := datasets.Check(w.Dataset)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if dataset != nil {
		*dataset = name
	}
	if _, err := calibrate.SteadyStatePrompts(w.Load, w.NumPrompts); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	return nil
}
