// Package gotest is the adapter for `go test` workloads. Go developers
// already measure with `go test -bench`, profile with -cpuprofile and
// -memprofile, and measure coverage with -coverprofile; flameox does not
// invent another harness. It keeps the user's approved `go test` command
// and inserts -json (and -benchmem for benchmarks) and nothing else by
// default, so benchmark timings are those of plain `go test -bench`:
//
//	go test -json [-benchmem] <the workload argv after "go test">
//
// Profiles and coverage perturb what a benchmark times, so a workload asks
// for them in its options (ParseOptions: profiles = "cpu,mem,block,mutex",
// coverage = "true"); then the toolchain writes its native artifacts into
// the capture's output directory, and the plan's first limitation says the
// timings are perturbed and by what:
//
//	go test -o=OUT/gotest.test -cpuprofile=OUT/cpu.pprof -memprofile=OUT/mem.pprof
//	        -coverprofile=OUT/cover.out -json [-benchmem] <the workload argv>
//
// The pprof profiles and the coverage profile are declared artifacts; -json
// turns stdout (registered by every capture as process_output) into the
// test2json event stream. The extractor (BenchExtractor, "gobench") reads
// that stream, or plain `go test -bench` text, with golang.org/x/perf/benchfmt
// — the parser benchstat uses — so values and units are exactly what
// benchstat would compare. The coverage extractor (CoverExtractor,
// "gocover") reads cover.out with golang.org/x/tools/cover — the parser
// `go tool cover` uses — so its totals are `go tool cover -func`'s; see
// docs/gocover.md.
package gotest
