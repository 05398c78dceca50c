package predict

import (
	"fmt"

	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/internal/optionerr"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// The Options fields Validate names in its *optionerr.Error.
var (
	fieldISL         = optionerr.Field{Name: "ISL", Words: "Options.Workload.ISL"}
	fieldOSL         = optionerr.Field{Name: "OSL", Words: "Options.Workload.OSL"}
	fieldNumPrompts  = optionerr.Field{Name: "NumPrompts", Words: "Options.Workload.NumPrompts"}
	fieldHitRate     = optionerr.Field{Name: "PrefixHitRate", Words: "Options.Workload.PrefixHitRate"}
	fieldExactOutput = optionerr.Field{Name: "ExactOutput", Words: "Options.Workload.ExactOutput"}
	fieldDataset     = optionerr.Field{Name: "Dataset", Words: "Options.Workload.Dataset"}
	fieldMode        = optionerr.Field{Name: "Mode", Words: "Options.Mode"}
)

func invalid(format string, fields []optionerr.Field, args ...any) error {
	return optionerr.New("predict: ", fields, format, args...)
}

// Validate checks the workload and mode of o (not its target, which the
// profile resolves). A value at fault in one field is an *optionerr.Error
// naming it.
func (o Options) Validate() error { return o.validate(nil) }

// validate is Validate, and sets *dataset (when not nil) to the workload's
// dataset as datasets.Check names it.
func (o Options) validate(dataset *string) error {
	w := o.Workload
	lengths := []optionerr.Field{fieldISL, fieldOSL}
	one := func(f optionerr.Field) []optionerr.Field { return []optionerr.Field{f} }
	switch {
	case w.ISL < 0 || w.OSL < 0:
		return invalid("%s and %s must be positive", lengths)
	case (w.ISL == 0) != (w.OSL == 0):
		return invalid("give both %s and %s, or neither", lengths)
	case w.ISL > model.MaxSequenceTokens:
		return invalid("%s %d is more than %d tokens, the longest prompt or output capsim models", one(fieldISL), w.ISL, model.MaxSequenceTokens)
	case w.OSL > model.MaxSequenceTokens:
		return invalid("%s %d is more than %d tokens, the longest prompt or output capsim models", one(fieldOSL), w.OSL, model.MaxSequenceTokens)
	case w.Sharing.On() && w.ISL == 0:
		return invalid("a shared-prefix workload needs %s and %s", lengths)
	case w.NumPrompts < 0:
		return invalid("%s must be positive", one(fieldNumPrompts))
	case !sim.ValidPrefixHitRate(w.PrefixHitRate):
		return invalid("%s must be a fraction in [0, 1), got %v", one(fieldHitRate), w.PrefixHitRate)
	case w.ExactOutput && w.Dataset != "":
		return invalid("%s does not apply with %s %s: the dataset's own output lengths are simulated", []optionerr.Field{fieldExactOutput, fieldDataset}, w.Dataset)
	case o.Mode != "" && o.Mode != sim.SteadyState && o.Mode != sim.BenchmarkReplay:
		return invalid("%s must be %s or %s, got %q", one(fieldMode), sim.SteadyState, sim.BenchmarkReplay, o.Mode)
	}
	if err := w.Sharing.Validate(); err != nil {
		return fmt.Errorf("predict: Options.Workload.Sharing.%w", err)
	}
	if w.ISL > 0 && w.Sharing.On() && w.ISL <= w.Sharing.SharedLen {
		return fmt.Errorf("predict: ISL %d is not longer than the %d shared tokens of every prompt (Options.Workload.Sharing.SharedLen)", w.ISL, w.Sharing.SharedLen)
	}
	name, err := datasets.Check(w.Dataset)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	if dataset != nil {
		*dataset = name
	}
	return nil
}
