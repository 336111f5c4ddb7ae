// Package runset freezes run sets: a sorted, digest-checked list of runs
// pinned at one corpus commit, with a record of how it was chosen. A
// comparison reads run sets, never live queries, so the evidence it
// judged cannot change under it.
//
// Freeze only builds the record (inquiry.RunSet); the caller publishes it
// (flameox in process, or fox-publish from fox-capture's stream). It reads
// the pinned commit's runs table from its Parquet files, without DuckDB,
// so fox-capture's experiment runner freezes one set per variant with it
// and still builds without cgo and without the writer.
package runset
