package schema

// Measurements, profiles and observations extracted from native artifacts.

// Measurements keeps the raw hierarchy of a benchmark (worker, run index,
// value index, loops, warm-up, block, variant, order, phase) as plain columns
// so cohort filters never have to look inside dimensions.
var Measurements = newTable("measurements", 1, 0,
	"One row per measured value, with its unit and its place in the raw hierarchy.",
	req("measurement_id", tStr, "digest of the measurement identity"),
	req("run_id", tStr, "run the value belongs to"),
	opt("artifact_id", tStr, "artifact it was extracted from (null for process facts)"),
	req("name", tStr, "metric name, e.g. process.wall_time, collector.peak_rss, pytest.phase.call").dict(),
	opt("value_int", tI64, "integer value (exactly one of value_int, value_float is set)"),
	opt("value_float", tF64, "floating-point value"),
	req("unit", tStr, "unit of the value: ns, bytes, count, ...").dict(),
	req("aggregation", tStr, "how the value was formed: value | sum | mean | first | ...").dict(),
	req("scope", tStr, "what it covers: process | run | test_suite | test | benchmark").dict(),
	opt("subject", tStr, "what was measured inside the scope: test node id, benchmark or fixture name"),
	opt("outcome", tStr, "outcome of the subject, e.g. passed | failed").dict(),
	opt("trial_id", tStr, "trial (experiments link runs through trials.run_id)"),
	opt("worker_id", tStr, "benchmark worker process (go test: the package; pyperf: worker-N, the process of run N)").dict(),
	opt("worker_run_index", tI32, "run index within the worker (pyperf: the run's index within its benchmark, one run per worker)"),
	opt("value_index", tI32, "value index within the worker run (pyperf: warm-ups first, then values, in measured order; go test: the -count repetition of the benchmark under its package, full name and configuration; hyperfine: the run's index)"),
	opt("loop_count", tU64, "inner loops behind one value (pyperf: loops × inner_loops; go test: the line's iterations; hyperfine: the runs a user or system time is the mean of)").count(),
	req("is_warmup", tBool, "value is a warm-up value"),
	opt("block_id", tStr, "experiment block"),
	opt("variant_id", tStr, "experiment variant").dict(),
	opt("order_in_block", tI32, "position in the block"),
	opt("phase", tStr, "phase annotation active when measured").dict(),
	opt("dimensions", tStrMap, "remaining labels (never used for hot filters); process facts: process (started, workload or collector), processes (command names), source (wait4, proc_stat, sampled, unknown); pyperf: loops, inner_loops, orig_unit, calibration (on the warm-ups of a calibration run); go test: every configuration key in force at the line (goos, goarch, pkg, cpu, user keys), gomaxprocs, name.base, name.KEY, orig_unit; hyperfine: parameter.NAME, result_index; heaptrack (memory.*): source, printed (heaptrack_print's text), precision_bytes, heaptrack_header, includes_collector (memory.peak_rss); heaptrack memory.snapshot.heap: snapshot, time (ms), time_unit (ms), source (heaptrack_print --print-massif), heaptrack_header, precision_bytes; memray (memory.*): source, allocator; memray memory.snapshot.heap and .rss: snapshot (memray's ordinal), time (ms since the first snapshot), time_unit (ms), source (memray FileReader.get_memory_snapshots); coverage (coverage.*): source, and for Go mode, files, blocks; phase.wall_time (SDK phases): count, source; traces (trace.op.*, trace.category.*): category, class (operator, annotation, python, runtime, sync, device, other), device (true/false), frame_id; trace.op.device_self: kernels; trace.op.alloc_bytes: allocations; trace.op.shapes: shapes (Input Dims), total_ns; trace.step: step, start_ns, track_id, index; trace.device.*: pid, process, first_ns, last_ns (trace.device.gap: start_ns, end_ns, rank); trace.memory.allocated/freed: events; trace.span: origin_ns and the Kineto header; trace.counter, trace.instant: time_ns"),
	req("evidence_level", tStr, "observed | derived | inferred").dict(),
)

// Frames follows pprof's identity model: a frame is a (function, file, line)
// in a module at a module-relative address; inlined frames list the frames
// they are inlined into.
//
// Version 1.1 adds frame_index: a profile's frames are written hottest
// first under its default sample type, the first 1,024 in a row group of
// their own, so that hotspots fetch their top frames' names by position
// from that row group instead of matching digests across the whole file.
//
// Version 1.2 adds invalid_utf8: a name, file or module that was not valid
// UTF-8 is stored with U+FFFD replacements (DuckDB reads no other
// strings), and the digest of its original bytes is kept there. The
// frame_id still hashes the original bytes, so two names that differ
// only in their invalid bytes stay two frames.
var Frames = newTable("frames", 1, 2,
	"Profile frames with pprof-style identity and symbolization quality.",
	req("frame_id", tStr, "digest of the frame identity").digest(),
	opt("language", tStr, "source language, e.g. go, c, python; traces: device (GPU/accelerator work) or host").dict(),
	opt("function", tStr, "function name (demangled)").text(),
	opt("system_name", tStr, "function name as in the binary (mangled)").text(),
	opt("module", tStr, "mapping file / module / category").dict(),
	opt("file", tStr, "source file").dict(),
	opt("line", tI32, "source line"),
	opt("column", tI32, "source column"),
	opt("start_line", tI32, "first line of the function"),
	opt("address", tU64, "absolute address in the profiled process"),
	opt("build_id", tStr, "build id of the module").dict(),
	opt("module_relative_address", tU64, "address relative to the module's load base"),
	opt("inlined", tBool, "frame was inlined into its caller at this address"),
	opt("inline_chain", tStrList, "frame_ids this frame is inlined into, physical frame first").digest(),
	req("symbolization", tStr, "full | partial | none").dict(),
	opt("source_state_id", tStr, "source state the file/line refer to"),
	opt("artifact_id", tStr, "artifact the frame was read from (artifact-local frames)"),
	opt("frame_index", tI32, "position of the frame among its artifact's frames (0 first), hottest first under the default sample type").since(1),
	opt("invalid_utf8", tStrMap, "for each string column of the row whose value was not valid UTF-8 (stored with U+FFFD in place of each invalid sequence): column name -> sha256:<hex> of the original bytes; null when every value was valid").originals().since(2),
)

// FrameMeasurements aggregates one metric per frame, thread and process.
//
// Version 1.1 adds rank and frame_index. Each frame id has one row per
// metric, thread and process; rows are written by metric, thread and
// process, then rank (the order `flameox analyze hotspots` lists them
// in), with the first 1,024 ranks of each in a row group of their own:
// a profile's top frames are a range of rank that min/max statistics
// find in one small row group.
var FrameMeasurements = newTable("frame_measurements", 1, 1,
	"Self and inclusive values per frame and metric (one profile sample type).",
	req("run_id", tStr, "run"),
	req("artifact_id", tStr, "profile artifact"),
	req("frame_id", tStr, "frames.frame_id").digest(),
	req("metric", tStr, "sample type, e.g. cpu, alloc_space, trace.slice_duration").dict(),
	req("unit", tStr, "unit of the values, e.g. ns, bytes, count").dict(),
	opt("self_value", tI64, "value with the frame as leaf"),
	opt("inclusive_value", tI64, "value with the frame anywhere on the stack (recursion counted once)"),
	opt("sample_count", tU64, "samples or slices contributing").count(),
	opt("thread", tStr, "thread name").dict(),
	opt("process", tStr, "process name").dict(),
	opt("phase", tStr, "phase, when unique for the samples").dict(),
	opt("rank", tI32, "1-based position among the artifact's frames of the same metric, thread and process: |self| descending, then function, |inclusive| descending, module, frame_id").since(1),
	opt("frame_index", tI32, "frames.frame_index of the frame in the same artifact and generation").since(1),
)

// CallEdges are aggregated caller -> callee edges.
// Version 1.1 adds the metric, its value and the thread/process split, so
// that profile edges can be weighted per sample type like pprof's peek.
var CallEdges = newTable("call_edges", 1, 1,
	"Aggregated parent -> child frame edges.",
	req("run_id", tStr, "run"),
	req("artifact_id", tStr, "profile or trace artifact"),
	req("parent_frame_id", tStr, "caller frame").digest(),
	req("child_frame_id", tStr, "callee frame").digest(),
	req("sample_count", tU64, "samples or slices on the edge").count(),
	req("duration_ns", tI64, "time attributed to the child on this edge (0 when the metric is not a time)").ns(),
	opt("metric", tStr, "profile sample type the value is in").dict().since(1),
	opt("unit", tStr, "unit of value").dict().since(1),
	opt("value", tI64, "sum of the samples' values in which the edge occurs (once per sample)").since(1),
	opt("thread", tStr, "thread name").dict().since(1),
	opt("process", tStr, "process name").dict().since(1),
)

// Stacks are representative stacks, root to leaf.
// Version 1.1 adds the metric, value, sample count and thread/process of
// aggregated profile stacks (which have no time span: start_ns and
// duration_ns are 0 and track_id is 0 for them).
var Stacks = newTable("stacks", 1, 1,
	"Representative stacks (root -> leaf frame ids) with their time span or weight.",
	req("stack_id", tStr, "digest of the stack identity").digest(),
	req("run_id", tStr, "run"),
	req("artifact_id", tStr, "artifact"),
	req("frame_ids", tStrList, "frame ids, root first").digest(),
	req("leaf_frame_id", tStr, "last element of frame_ids").digest(),
	req("start_ns", tI64, "start, relative to the trace origin").ns(),
	req("duration_ns", tI64, "duration").ns(),
	req("track_id", tU64, "trace track (thread) id"),
	opt("metric", tStr, "profile sample type the value is in").dict().since(1),
	opt("unit", tStr, "unit of value").dict().since(1),
	opt("value", tI64, "sum of the values of the samples with exactly this stack").since(1),
	opt("sample_count", tU64, "sample records with exactly this stack").count().since(1),
	opt("thread", tStr, "thread name").dict().since(1),
	opt("process", tStr, "process name").dict().since(1),
)

// Observations are non-numeric facts: line hits, branch arcs, annotations,
// configuration.
var Observations = newTable("observations", 1, 0,
	"Line hits, branch arcs, annotations and configuration facts.",
	req("observation_id", tStr, "digest of the observation identity"),
	req("run_id", tStr, "run"),
	opt("artifact_id", tStr, "artifact it was read from"),
	req("kind", tStr, "line_hit (coverage.line, coverage.block) | branch_arc (coverage.arc) | summary (coverage.file) | observation (SDK observe) | phase (SDK phase) | configuration (pyperf metadata) | annotation").dict(),
	req("name", tStr, "observation name, e.g. coverage.line, coverage.block, coverage.arc, coverage.file, pyperf.metadata.KEY, an SDK name.KEY, a phase path").dict(),
	req("value_json", tStr, "canonical JSON value: coverage.line {hits[, contexts, contexts_cut, contexts_total]}; coverage.block {hits, statements, start_col, end_col}; coverage.arc {executed}; coverage.file the collector's per-file summary; observation {value, count}; phase {count, total_ns, max_ns}"),
	opt("file", tStr, "project-relative file").dict(),
	opt("line_from", tI32, "line (or arc source)"),
	opt("line_to", tI32, "arc destination line"),
	opt("context", tStr, "coverage context or phase; pyperf metadata: suite, benchmark/NAME or run/N/NAME").dict(),
	req("evidence_level", tStr, "observed | derived | inferred").dict(),
)
