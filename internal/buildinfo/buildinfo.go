// Package buildinfo says which capsim a binary is: its module version, the
// source revision and time it was built from when the build recorded them,
// and the Go version.
package buildinfo

import "runtime/debug"

// Version is capsim's version as the build recorded it, e.g. "capsim
// (devel), revision 0123456789ab (2026-11-22T20:00:00Z), go1.24.0".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "capsim (devel), unknown Go"
	}
	return format(bi)
}

func format(bi *debug.BuildInfo) string {
	v, rev, at := "(devel)", "", ""
	if bi.Main.Version != "" {
		v = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		}
	}
	out := "capsim " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += ", revision " + rev
		if at != "" {
			out += " (" + at + ")"
		}
	}
	return out + ", " + bi.GoVersion
}
