// Package version reports the flameox version: the module version recorded
// by the Go toolchain, overridable at link time with
// -ldflags "-X github.com/flameox/flameox/pkg/version.override=v1.2.3".
package version

import "runtime/debug"

var override string

// Version returns the flameox version string ("(devel)" for local builds).
func Version() string {
	if override != "" {
		return override
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
