// Package pyperf reads pyperf's JSON files (plain or gzipped) into
// measurements and observations, and captures `python3 -m pyperf command`
// runs of an approved workload.
//
// Why it is shaped this way:
//   - Every value is kept with its place in pyperf's hierarchy (benchmark,
//     run, worker process, warm-up or value, loops and inner loops, and the
//     calibration runs that have no values), because a comparison needs the
//     spread between worker processes, not only a mean.
//   - The reader follows pyperf's own loader (pyperf/_bench.py) and refuses
//     what it refuses, plus what no benchmark value can be (NaN, infinite,
//     zero, negative) and what JSON leaves ambiguous (a key given twice).
//     The whole file is decoded and checked before a row is written, so a
//     refused file publishes nothing; what it may allocate is capped
//     before it is allocated (MaxValues, MaxMetadata and config.Limits).
//   - pyperf's metadata (suite, benchmark and run levels) is kept as
//     observations at the level the file gives it, never merged away.
//   - The probe never imports pyperf: python3 reports where the module
//     would be imported from and the installed version from its metadata.
package pyperf
