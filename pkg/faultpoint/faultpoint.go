//go:build !faultinject

// Package faultpoint marks named points where crash-safety tests kill the
// process. In normal builds Hit is an empty function the compiler removes;
// only binaries built with `-tags faultinject` honour FLAMEOX_FAULTPOINT.
package faultpoint

// Enabled reports whether this build honours fault points.
const Enabled = false

// Hit marks the named point. It does nothing in normal builds.
func Hit(string) {}
