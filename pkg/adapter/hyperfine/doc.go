// Package hyperfine reads the file `hyperfine --export-json` writes into
// benchmark measurements: every run's wall time, its exit code and (from
// hyperfine 1.20) its peak memory, each with its run index, the command's
// user and system time, and the command's parameters as dimensions.
//
// The format is the serde serialisation of hyperfine's BenchmarkResult
// (src/benchmark/benchmark_result.rs, src/export/json.rs): an object
// {"results": [...]} with one entry per command. The entry's mean, stddev,
// median, min and max are hyperfine's own summaries of times; they are
// checked against the samples, never stored as samples.
//
// The decoder walks the JSON tokens itself (encoding/json's Decoder)
// rather than unmarshalling into structs, so it counts every value, string
// and nesting level against the workspace's [limits] before keeping it,
// and refuses a file with a duplicated key, a non-finite or negative time
// or arrays of different lengths; nothing is written until the whole file
// has been read and checked.
//
// hyperfine is imported (`flameox import results.json`); flameox does not
// run hyperfine itself, so there is an extractor and no capture adapter.
package hyperfine
