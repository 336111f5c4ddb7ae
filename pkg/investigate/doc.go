// Package investigate holds the writing half of investigations (SPEC §7)
// that flameox and the MCP server share: create an investigation, record a
// hypothesis revision by compare-and-swap, freeze and publish a run set,
// compare two run sets and record the comparison, record a finding (its
// references checked at HEAD, `supported` only under SPEC §7's rule:
// finding_rule.go). Each builds its record,
// publishes it in process through pkg/publish and returns the one result
// type the CLI's --json and the MCP result share. Reading them back is
// pkg/query's.
package investigate
