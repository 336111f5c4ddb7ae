// Package repocheck holds repository-wide checks that run as ordinary tests:
// documented record examples match the code, mains stay thin, DuckDB stays
// inside pkg/catalog, and the tree is gofmt-clean; processes start only in
// pkg/broker, os.Exit is called only in pkg/cli, and no import keeper
// (var _ = pkg.X) hides dead code (hygiene_test.go); no tool package
// imports another, and publishers and capture services are built only by
// their constructors, which pkg/services calls (root_test.go). It has no
// non-test code.
package repocheck
