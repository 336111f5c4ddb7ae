// Package stacks is the adapter for CPU and memory profiles in any format
// flameox reads (pprof protobuf and every legacy format `go tool pprof`
// reads, `perf script` text, speedscope JSON, collapsed stacks): it
// validates and opens them in their native viewers, and its extractor
// turns them into frames, frame measurements, call edges and
// representative stacks, using pprof's own data model and its
// function-granularity naming (pkg/profile), so every number agrees with
// `go tool pprof -top` on the same file.
//
// Profiles are imported (`flameox import`) or produced by the capture
// adapters (gotest, perf, py-spy); this adapter does not capture.
//
// The package is named for what it reads, sampled stacks in any of these
// formats, not for one of them; the adapter itself keeps the name "pprof"
// (Name), because every run record and workspace already stores it.
package stacks
