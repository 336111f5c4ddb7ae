// Command fox-mcp is flameox's MCP server (stdio); see pkg/tool/foxmcp.
package main

import (
	"os"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/tool/foxmcp"
)

func main() { os.Exit(cli.Main("fox-mcp", foxmcp.Run)) }
