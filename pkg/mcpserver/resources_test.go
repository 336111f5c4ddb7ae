package mcpserver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResourceNotFoundCode: a missing resource is -32002 at the protocol
// versions hosts speak (2025-06-18, 2025-11-25), as the specification
// suggests, and -32602 at 2026-07-28 (SEP-2164), whether a template
// matched (the id names nothing) or none did. Before, it was -32602 always.
func TestResourceNotFoundCode(t *testing.T) {
	dir := project(t)
	ctx := context.Background()
	for _, tt := range []struct {
		version string
		code    int64
	}{{"2025-06-18", -32002}, {"2025-11-25", -32002}, {"", jsonrpc.CodeInvalidParams}} {
		opts := &mcp.ClientSessionOptions{ProtocolVersion: tt.version}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "flameox-test", Version: "1"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: serverCmd(dir)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, uri := range []string{"flameox://runs/00000000-0000-4000-8000-000000000000", "flameox://findings/f-1", "flameox://nothing/x"} {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != tt.code {
				t.Errorf("protocol %q, %s: want code %d, got %v", tt.version, uri, tt.code, err)
			}
		}
		cs.Close()
	}
}
