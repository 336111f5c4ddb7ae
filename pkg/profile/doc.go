// Package profile imports CPU profiles from the collectors people already use
// (pprof protobuf, the legacy formats `go tool pprof` also reads, `perf
// script` text, speedscope JSON and folded/collapsed stacks) into one data
// model: pprof's own, github.com/google/pprof/profile. The legacy formats
// (heap, growth, contention, thread and count text, Java profiles, the
// gperftools binary CPU profile) are read by that package's Parse itself,
// after a bounded pre-pass (legacy.go).
//
// Why one model, and why pprof's: flameox must agree exactly with
// `go tool pprof` on the same data. Converting every format into a
// *profile.Profile means there is a single set of flat/cumulative rules
// (pprof's, implemented by [Top]) instead of one per format, and any
// converted profile can be written out and checked with the real tool.
//
// Formats are recognised by content, never by file name ([Detect]). Gzip is
// unwrapped first. A file that cannot be identified, or that is empty,
// truncated or malformed, fails with a *[ParseError]; nothing is guessed.
//
// Conventions of the conversion:
//   - perf script: one sample type per event name ("cycles/count",
//     "task-clock/nanoseconds" when perf printed the period column; the value
//     is then the period, otherwise 1 per sample). A sample carries its value
//     only in its own event's column and zero elsewhere, so events are never
//     summed together. Labels: string "thread" (comm); numeric "thread_id"
//     and "pid" (pid only when perf printed pid/tid).
//   - speedscope: "samples/count" (1 per sample, sampled profiles only) and a
//     weight type per unit family ("time/nanoseconds", "space/bytes",
//     "weight/count"); time is converted to integer nanoseconds. Evented
//     profiles become one sample per distinct open stack, weighted by the time
//     it was open. Labels: string "thread" (profile name); numeric
//     "profile_index", and "thread_id" and "pid" when the name carries them
//     (py-spy).
//   - collapsed: "samples/count", one sample per line, names kept verbatim
//     (including _[k]/_[j] annotations and comm-PID roots).
//
// A pprof input is kept as it is, labels included (parca-agent, for one,
// writes string labels "thread_id" and "thread_name").
//
// Unsymbolized frames are locations without Line entries; native frames keep
// their address and their module as the location's Mapping.
package profile
