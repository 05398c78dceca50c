package loadgen

import (
	"testing"

	"github.com/capsim/capsim/internal/optionerr"
	"github.com/capsim/capsim/model"
)

// Validate refuses a prompt or output beyond model.MaxSequenceTokens,
// naming the field, so that a command line calls it by its flag.
func TestValidateLengths(t *testing.T) {
	for _, tt := range []struct {
		isl, osl int
		field    string
		msg      string
	}{
		{model.MaxSequenceTokens + 1, 3, "ISL", "loadgen: input length 10000001 is more than 10000000 tokens, the longest prompt or output capsim models"},
		{3, model.MaxSequenceTokens + 1, "OSL", "loadgen: output length 10000001 is more than 10000000 tokens, the longest prompt or output capsim models"},
	} {
		o := baseOptions("http://127.0.0.1:1")
		o.ISL, o.OSL, o.NumPrompts = tt.isl, tt.osl, 1
		err := o.Validate()
		e, ok := optionerr.As(err)
		if !ok || len(e.Fields) != 1 || e.Fields[0].Name != tt.field || err.Error() != tt.msg {
			t.Errorf("ISL %d, OSL %d: err %v, want %q naming %s", tt.isl, tt.osl, err, tt.msg, tt.field)
		}
	}
	o := baseOptions("http://127.0.0.1:1")
	o.ISL, o.OSL, o.NumPrompts = model.MaxSequenceTokens, model.MaxSequenceTokens, 1
	if err := o.Validate(); err != nil {
		t.Errorf("the longest lengths: %v", err)
	}
}
