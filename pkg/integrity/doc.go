// Package integrity proves a workspace intact, or says exactly what is
// not: HEAD, commits and manifests (quick), every reference between runs,
// artifacts, generations, analyses, run sets and findings and the
// catalog's freshness (standard), every payload and Parquet file
// re-hashed (full); and plans repairs that lose nothing they need not.
package integrity
