// Package provenance defines the `analysis` record: what an analysis
// computed, from which exact commit and inputs, with which parameters, and
// the digest of its result. pkg/analysis builds it (fox-analyze --record,
// flameox and MCP with --record); pkg/publish reads it and publishes it as
// an analyses row.
//
// It is its own package so that the writer reads analysis records without
// linking the analyses, and so DuckDB: fox-publish builds with
// CGO_ENABLED=0.
package provenance
