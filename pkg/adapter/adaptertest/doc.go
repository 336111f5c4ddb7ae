// Package adaptertest is the conformance suite every adapter passes: its
// probe is passive and well-formed, its plan has no side effects and keeps
// the approved workload argv intact, its declared artifacts are safe
// relative paths, it refuses garbage, and it names a native viewer.
package adaptertest
