// Package repocheck holds repository-wide checks that run as ordinary tests:
// documented record examples match the code, mains stay thin, DuckDB stays
// inside pkg/catalog, and the tree is gofmt-clean. It has no non-test code.
package repocheck
