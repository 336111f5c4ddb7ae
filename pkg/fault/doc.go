// Package fault holds flameox's one error type and the single table that maps
// its codes to process exit codes.
//
// Every failure a user or agent can act on is a *Error: a stable code from the
// product contract, a one-line message, whether repeating the same call may
// succeed, string details, remediation steps and the run it concerns. The CLI
// prints it as "CODE: message" on stderr (or as JSON with --json), the MCP
// server returns it inside its envelope, and plumbing tools emit it as an
// "error" record. A full file system or quota anywhere in an error's chain
// becomes STORAGE_FULL (see As); any other error reaching the top is a bug
// and becomes INTERNAL_ERROR.
package fault
