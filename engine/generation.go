package engine

import (
	"fmt"
	"strings"
)

// Generation is the vLLM engine generation a run states where it is not
// its release's own: V0 from 0.8 (VLLM_USE_V1=0, or a V0 engine named)
// through 0.10, the last releases that had it, or V1 before 0.8
// (VLLM_USE_V1=1). The zero value is the release's own. It chooses the
// run's defaults (ID.AsGeneration) and its CPU row (OverheadWith).
type Generation string

// The generations a run can state.
const (
	GenV0 Generation = "v0"
	GenV1 Generation = "v1"
)

// ParseGeneration reads a stated generation, "v0" or "v1" in any case;
// "" is none.
func ParseGeneration(s string) (Generation, error) {
	switch g := Generation(strings.ToLower(strings.TrimSpace(s))); g {
	case "", GenV0, GenV1:
		return g, nil
	}
	return "", fmt.Errorf("engine: unknown vLLM engine generation %q (want v0 or v1)", s)
}

// UseV1 is the VLLM_USE_V1 value that runs g; ok is false for the zero
// value, which needs none.
func (g Generation) UseV1() (value string, ok bool) {
	switch g {
	case GenV0:
		return "0", true
	case GenV1:
		return "1", true
	}
	return "", false
}

// Note says how a run on g is started, "its V0 engine, VLLM_USE_V1=0";
// "" for the zero value.
func (g Generation) Note() string {
	v, ok := g.UseV1()
	if !ok {
		return ""
	}
	return "its " + strings.ToUpper(string(g)) + " engine, VLLM_USE_V1=" + v
}

// AsGeneration is the release whose defaults and CPU row a vLLM release
// run on generation g takes: one from 0.8 to 0.10 run on V0 the last V0
// release's (0.7.3), one before 0.8 run on V1 the first V1 release's
// (0.8.0). ok is false, and e is kept, for another family, the zero
// value, the release's own generation, or V0 from 0.11, which has none.
func (e ID) AsGeneration(g Generation) (id ID, ok bool) {
	if e.Family != VLLM {
		return e, false
	}
	switch g {
	case GenV0:
		if len(e.Version) == 0 || (e.AtLeast(0, 8) && !e.AtLeast(0, 11)) {
			return Parse("vllm-0.7.3"), true
		}
	case GenV1:
		if len(e.Version) == 0 || !e.AtLeast(0, 8) {
			return Parse("vllm-0.8.0"), true
		}
	}
	return e, false
}
