// Package oplog appends one line per mutating command to
// .diagnostics/operations.jsonl: which binary and version, what, which
// ids, and the result, never secrets.
package oplog
