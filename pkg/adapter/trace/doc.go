// Package trace reads Chrome trace JSON, the format torch.profiler (Kineto)
// exports, into evidence rows: every slice as a stack on its track (the
// nesting chain, root first, with start and duration in nanoseconds from
// the trace's earliest timestamp), the frames those chains name (one per
// slice name and category), nesting and flow edges, counters, and per-name
// and per-category totals a recipe reads without re-reading the slices.
//
// The format is the Trace Event Format (the Chrome/Perfetto document,
// https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU,
// and https://perfetto.dev/docs/reference/trace-formats#json): a JSON object
// {"traceEvents": [...], ...} or a bare array of events, plain or gzipped.
// Kineto adds "schemaVersion", "deviceProperties", "distributedInfo",
// "baseTimeNanoseconds" and its categories (cpu_op, cuda_runtime, kernel,
// gpu_memcpy, ac2g flows ...); see libkineto's output_json.cpp.
//
// No library reads it: there is no maintained Go reader of the format
// (Go's own cmd/internal/traceviewer only writes it, with integer pids;
// the few third-party packages are unmaintained and load every event and
// its args into memory). The reader walks the top level with
// encoding/json's Decoder token by token and decodes one event at a time
// into a reused struct, so it counts events and kept string bytes against
// the workspace's [limits] as it goes and never holds the raw document.
package trace
