// Package flameox is the `flameox` porcelain: one command for people and
// CI that runs the documented workflows by calling the same packages as the
// fox-* plumbing tools, in process. It renders readable text by default and
// the domain result as JSON with --json (the same Go type the MCP server
// returns). A verb it does not know runs `fox-<verb>` from next to the
// flameox binary or from PATH, git-style.
package flameox
