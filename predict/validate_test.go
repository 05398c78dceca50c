package predict

import (
	"testing"

	"github.com/capsim/capsim/internal/optionerr"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
	"github.com/capsim/capsim/workload"
)

// Validate names the field at fault in a typed error, so that a command
// line calls it by its flag without editing the message.
func TestValidateNamesTheField(t *testing.T) {
	good := Options{Workload: workload.Workload{ISL: 1024, OSL: 256}}
	if err := good.Validate(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	if err := (Options{}).Validate(); err != nil {
		t.Fatalf("every calibrated shape: %v", err)
	}
	tests := []struct {
		edit  func(*Options)
		field string
		msg   string
	}{
		{func(o *Options) { o.Workload.ISL = -1 }, "ISL", "predict: Options.Workload.ISL and Options.Workload.OSL must be positive"},
		{func(o *Options) { o.Workload.OSL = 0 }, "ISL", "predict: give both Options.Workload.ISL and Options.Workload.OSL, or neither"},
		{func(o *Options) { o.Workload.OSL = model.MaxSequenceTokens + 1 }, "OSL",
			"predict: Options.Workload.OSL 10000001 is more than 10000000 tokens, the longest prompt or output capsim models"},
		{func(o *Options) { o.Workload.NumPrompts = -1 }, "NumPrompts", "predict: Options.Workload.NumPrompts must be positive"},
		{func(o *Options) { o.Workload.PrefixHitRate = 1 }, "PrefixHitRate", "predict: Options.Workload.PrefixHitRate must be a fraction in [0, 1), got 1"},
		{func(o *Options) { o.Workload.ExactOutput, o.Workload.Dataset = true, "sharegpt" }, "ExactOutput",
			"predict: Options.Workload.ExactOutput does not apply with Options.Workload.Dataset sharegpt: the dataset's own output lengths are simulated"},
		{func(o *Options) { o.Mode = "fast" }, "Mode", `predict: Options.Mode must be steady-state or benchmark-replay, got "fast"`},
	}
	for _, tc := range tests {
		o := good
		tc.edit(&o)
		err := o.Validate()
		e, ok := optionerr.As(err)
		if !ok || err.Error() != tc.msg || e.Fields[0].Name != tc.field {
			t.Errorf("error %v (typed %v), want %q naming %s", err, ok, tc.msg, tc.field)
		}
	}
	o := good
	o.Mode = sim.BenchmarkReplay
	if err := o.Validate(); err != nil {
		t.Errorf("benchmark replay: %v", err)
	}
}
