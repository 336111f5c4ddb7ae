// Package inquiry defines the records of an investigation: the
// investigation itself, its hypotheses, the experiments that test them,
// their variants and trials, and the frozen run sets comparisons read.
//
// Each type is one row of the Parquet table of the same name
// (pkg/evidence/schema) and, with a record.Header and the workspace, one
// line of fox-publish's input: fox-capture's experiment runner writes
// experiment, variant, trial and run_set records; flameox and the MCP
// server write investigation and hypothesis records; pkg/publish reads
// them all. The package sits below both, so the writer publishes them
// without linking the runner, and the runner emits them without linking
// the writer (fox-capture and fox-publish build with CGO_ENABLED=0).
//
// Field names are the table's column names; times are UTC; the *_json
// fields hold canonical JSON (sorted keys, no spaces).
package inquiry
