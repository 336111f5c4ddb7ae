// Package foxanalyze is fox-analyze: read-only analyses over the published
// corpus, one record per invocation on stdout.
//
// Usage:
//
//	fox-analyze hotspots INPUT [--limit N] [--sample-type T] [--focus RE] [--ignore RE] [--thread T] [--process P] [--record]
//	fox-analyze callers|callees|examples INPUT FRAME_ID|REGEXP [--limit N] [--sample-type T] ...
//	fox-analyze diff BASE CANDIDATE [--limit N] [--sample-type T] [--focus RE] [--ignore RE]
//	fox-analyze scaling EXPERIMENT_ID [--metric M] [--variant V] [--parameter P] [--limit N] [--record]
//	fox-analyze memory RUN_ARTIFACT_OR_RUN_SET [--against CANDIDATE] [--limit N] [--points N] [--metric M] [--threshold T] [--record]
//	fox-analyze execution RUN [--against RUN2] [--limit N] [--record]
//	fox-analyze pytorch RUN_OR_ARTIFACT [--sort self|total|device|count] [--limit N] [--record]
//	fox-analyze failures [--since TIME] [--workload W] [--limit N] [--record]
//
// INPUT is a run id, an artifact id, or "-": read records from stdin and
// analyze the last run they name (a `run` record, or the first input run of
// a `generation` record), so that
//
//	fox-capture import cpu.pb.gz | fox-publish | fox-analyze hotspots -
//
// works. The result is written as an `analysis_result` record; with
// --record an `analysis` record is written instead, which fox-publish
// persists (with the exact commit and inputs). fox-analyze never takes the
// write lock and never publishes by itself.
package foxanalyze
