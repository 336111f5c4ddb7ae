// Package observe reads the observations the flameox SDKs write
// (contrib/python/flameox_observe.py, contrib/go/observe): facts a
// profiler cannot see, such as which configuration path ran or which
// safeguard was off, and the time spent in named phases. A capture sets
// FLAMEOX_OBSERVATIONS to a file in its output directory and registers
// the file when the workload wrote one (pkg/capture); this extractor
// turns its JSON lines into observations rows (kind "observation", one per
// name and value and phase, with how often it was recorded) and phases
// into "phase" rows and phase.wall_time measurements.
//
// The format is the SDKs' own, one JSON object a line: a header
// {"flameox_observations": 1, "language", "pid"} (again after each fork),
// then {"t": "observe", "name", "values", "phase", "ts_ns"} and
// {"t": "phase", "name", "start_ns", "duration_ns"}. No library reads it;
// encoding/json reads each line, bounded by the extraction limits.
package observe
