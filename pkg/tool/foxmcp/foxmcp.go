// Package foxmcp is fox-mcp, flameox's MCP server for coding agents, and
// its inspector. The server and its command line live in pkg/mcpserver
// (mcpserver.Command), so `fox-mcp serve` and `flameox mcp serve` are the
// same program.
//
// Usage:
//
//	fox-mcp serve [--project-root DIR] [--init]
//	fox-mcp inspect [--project-root DIR] [--json]
//
// serve speaks MCP over stdio: JSON-RPC on stdout and nothing else; logs
// go to stderr. A line on stdin that is not a JSON-RPC 2.0 message gets a
// -32700 or -32600 reply and the server reads on (docs/mcp.md, "The
// wire"). The workspace is exactly DIR/.diagnostics (DIR defaults to
// the working directory; no walk up to parents); without one every tool
// but initialize_workspace and list_capabilities fails WORKSPACE_NOT_FOUND,
// unless --init creates it at startup. inspect prints every tool's exact
// input and output schema, its annotations, the resource templates and the
// server instructions, as a host would see them.
package foxmcp

import (
	"context"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/mcpserver"
)

// Run is fox-mcp's entry point.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	return mcpserver.Command(ctx, env, args)
}
