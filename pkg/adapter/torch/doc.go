// Package torch is the capture adapter of torch.profiler: it runs an
// approved Python program under contrib/python/flameox_torch.py, a small
// launcher that wraps it in torch.profiler.profile with the activities
// and flags the workload's options declare, exports the Chrome trace and
// writes a sidecar saying what was actually recorded. The trace is an
// execution_trace that the trace extractor (pkg/adapter/trace) reads; the
// launcher's facts also reach the evidence as SDK observations
// (pkg/adapter/observe). The launcher travels inside the binary, which
// writes it into the capture's output directory before the run
// (adapter.Preparer), so installed binaries need no source tree.
package torch
