// Package mcpserver is flameox's MCP server: the same service packages the
// `flameox` porcelain calls (status, capture, publish, query, catalog,
// workload, analysis), offered to coding agents as typed tools and resource
// templates over stdio.
//
// Why a separate surface at all: an agent must never be handed a shell. So
// no tool takes argv, a cwd, a shell string, SQL or an arbitrary absolute
// path; a capture is a two-step plan → execute bound by a single-use,
// short-lived token; approving a workload stays a human decision on the CLI;
// and no result carries raw artifact bytes, process output, argv, executable
// paths or environment names.
//
// Every tool answers with one envelope {schema_version, ok, result, error}
// as structured content (result is the exact Go type `flameox … --json`
// prints, error is a *fault.Error), plus a text of one terminal-safe
// summary line and the same envelope as escaped JSON, and isError on
// failure. Next steps and remediations name tools and their arguments
// (fault.Step's MCP form), never CLI commands. Output schemas are compact
// (schema.go) and concrete (no `any`), because TypeScript-SDK hosts reject
// a `true` sub-schema and then see no tools at all. Reading tools are
// read-only; recording an analysis is its own tool (record_analysis).
package mcpserver
