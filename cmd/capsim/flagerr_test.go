package main

import (
	"errors"
	"testing"

	"github.com/capsim/capsim/internal/optionerr"
)

// flagError drops a library's prefix only where the library typed its
// error (an *optionerr.Error about the one value it parsed): a message
// that merely starts like one keeps its words.
func TestFlagErrorDropsTypedPrefixOnly(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{optionerr.New("sim: ", nil, "%q is not a rate", "x"), `--rate: "x" is not a rate`},
		{errors.New("model: something else"), "--rate: model: something else"},
	} {
		if got := flagError("--rate", tt.err).Error(); got != tt.want {
			t.Errorf("flagError(%q) = %q, want %q", tt.err, got, tt.want)
		}
		if !errors.Is(flagError("--rate", tt.err), tt.err) {
			t.Errorf("flagError(%q) does not wrap it", tt.err)
		}
	}
}
