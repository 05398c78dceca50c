package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"devel", debug.BuildInfo{GoVersion: "go1.24.0"}, "capsim (devel), go1.24.0"},
		{"tagged, revision and time", debug.BuildInfo{GoVersion: "go1.24.0", Main: debug.Module{Version: "v0.3.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-11-22T20:00:00Z"}}},
			"capsim v0.3.0, revision 0123456789ab (2026-11-22T20:00:00Z), go1.24.0"},
		{"revision only", debug.BuildInfo{GoVersion: "go1.24.0", Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}},
			"capsim (devel), revision abc, go1.24.0"},
	} {
		if got := format(&tc.bi); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
