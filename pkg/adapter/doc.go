// Package adapter defines what flameox needs from each collector it drives
// (go test, perf, py-spy, pyperf, ...) and from each native format it
// reads: a passive capability probe, a side-effect-free capture plan, a
// check that an artifact is what it claims to be, extraction into evidence
// rows, and the command that opens the artifact in its native viewer.
//
// Adapters are plain values collected into a Registry by explicit calls
// (pkg/adapter/all), never registered by init() side effects; every adapter
// passes the same conformance suite (pkg/adapter/adaptertest).
package adapter
