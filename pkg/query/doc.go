// Package query answers the curated read questions of the CLI and the MCP
// server (runs, artifacts, measurements, evidence) from DuckDB over one
// pinned corpus commit. Results are bounded (a default and a maximum row
// count), say how many rows exist (total), how many came back (returned),
// whether more exist (truncated) and how to continue (an opaque cursor bound
// to the query, its filters and the commit). They are the same Go types for
// `flameox … --json` and for MCP. Read-only work never takes the write lock.
package query
