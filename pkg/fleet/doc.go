// Package fleet carries the evidence beyond one machine: it exports a
// workspace's pinned commit as a Hive-partitioned Parquet dataset that
// DuckDB, Spark and Trino read unchanged, and answers a small set of
// named, versioned questions over several such exports at once.
package fleet
