// Package analysis holds flameox's read-only recipes over the published
// corpus: hotspots, and the drill-down from a frame to its callers,
// callees and representative stacks. Every result names its operation and
// version, the pinned commit, its inputs, its parameters, its units, how
// much of the data it covers, what it cannot say (limitations) and what to
// look at next; lists are bounded and continue with a cursor. Nothing here
// takes the write lock; --record persists a result through fox-publish.
//
// Numbers follow `go tool pprof -top` exactly: frames are function-level
// nodes named and merged as pprof merges them, flat counts the leaf,
// cumulative counts a function once per sample even when it recurses;
// rows carry pprof's sum% and inline labels, and results the unit pprof
// would print them in. --focus/--ignore need every sample, which the
// tables do not keep, so a filtered hotspots reads the native profile
// (focus.go). A run id resolves to one of its profiles (scope.go); when
// that is a choice, the result's source_note says which and why.
package analysis
