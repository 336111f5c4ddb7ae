// Package investigate holds the writing half of investigations (SPEC §7)
// that flameox and the MCP server share: create an investigation, record a
// hypothesis revision by compare-and-swap, freeze and publish a run set,
// compare two run sets and record the comparison. Each builds its record,
// publishes it in process through pkg/publish and returns the one result
// type the CLI's --json and the MCP result share. Reading them back is
// pkg/query's.
package investigate
