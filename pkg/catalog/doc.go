// Package catalog answers read questions over a pinned corpus commit with
// embedded DuckDB, and keeps the small rebuildable catalog.duckdb. It is the
// only package in flameox that imports DuckDB.
//
// # One DuckDB instance per Reader
//
// DuckDB's security settings (allowed_paths, enable_external_access,
// lock_configuration) are global to a database instance and cannot be
// changed once locked. A Reader therefore owns a fresh in-memory instance
// whose allow-list is exactly the files of one commit: nothing opened for one
// snapshot can ever see the files of another, a concurrent publication
// cannot change an answer, and closing the Reader frees everything. The
// instance is cheap (a few milliseconds) because views are lazy: opening it
// reads only the anchors' footers, never the data.
//
// # Exact file lists, never globs
//
// Views are defined over read_parquet([anchor, file, ...]) with the exact
// paths a commit's generation manifests list (minus generations a later
// generation supersedes). A glob would pick up orphans of a crashed
// publication, files of a commit not yet published, or a file dropped by
// hand; DuckDB also refuses globs once allowed_paths holds only files.
// allowed_paths does not resolve symlinks, so every listed path is an
// Lstat-checked regular file inside the workspace. Every view starts with
// the table's typed empty anchor (evidence/<table>/_anchor-v<maj>.<min>.parquet)
// so that an empty table still has its full typed schema. The views live in
// the instance's in-memory catalog, not as TEMP views: DuckDB temp objects
// belong to one connection, and database/sql may replace a connection (for
// example after an interrupted query), which would drop them.
//
// allowed_paths is not read-only (COPY … TO a listed file can overwrite it),
// so the SQL a Reader runs is always curated code (Query values written in
// this repository, parameterized with $1…); users and agents never supply
// SQL. Protection of the Parquet files comes from their immutability and
// from that rule, not from DuckDB.
//
// # Current views
//
// Tables with revisions or repeated identities are read through *_current
// views, which keep one row per identity and so never double-count:
// runs_current (latest revision per run_id), artifacts_current (one row per
// registration_id), environments_current and source_states_current (one row
// per content id). Append-only fact tables (measurements, frames, …) are read
// directly.
//
// # Budgets
//
// Every query runs on one connection of the Reader's pool (capped at one
// open connection) under a time budget (Options.QueryTimeout); a timeout
// interrupts DuckDB and returns QUERY_BUDGET_EXCEEDED naming the query, and a
// cancelled context returns PROCESS_CANCELLED. Memory and threads are bounded
// per instance. Callers cap rows by asking for limit+1 rows (Reader.RowCap)
// and clip text cells with Clip. Page cursors live in pkg/cursor: opaque,
// and bound to query, version, filters, order and commit.
//
// # catalog.duckdb holds no data
//
// catalog.duckdb records only which commit it was built from, when, and the
// table registry (schema versions, row and file counts from the manifests).
// All answers come from the pinned commit's Parquet files, so deleting
// catalog.duckdb loses nothing and Readers never depend on it. Rebuild writes
// a fresh file beside it without holding any lock, validates it, then takes
// the write and catalog locks only to check HEAD did not move and rename it
// into place. Validate rejects anything but the two known tables: a
// catalog.duckdb is a DuckDB database someone could edit, and views, macros,
// attachments, extensions or secrets in it must never be trusted.
package catalog
