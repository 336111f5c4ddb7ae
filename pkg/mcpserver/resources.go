package mcpserver

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource not found, by protocol version. The MCP specification up to
// 2025-11-25 suggests -32002 for resources/read of a URI that names
// nothing, and the hosts in use today speak 2025-06-18; SEP-2164 (protocol
// 2026-07-28, the go-sdk's default) moved it to -32602 (invalid params).
const (
	codeResourceNotFound       = -32002
	resourceNotFoundSEP2164    = "2026-07-28"
	resourceNotFoundMessageSDK = "Resource not found"
)

// resourceErrors gives a missing resource the code the session's protocol
// version expects: the SDK's own answer (a URI no template matches) and
// resourceNotFound (a template matched, the id names nothing) alike.
func (s *server) resourceErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "resources/read" || err == nil {
			return res, err
		}
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Message != resourceNotFoundMessageSDK || je.Code != jsonrpc.CodeInvalidParams {
			return res, err
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion < resourceNotFoundSEP2164 {
				c := *je
				c.Code = codeResourceNotFound
				return res, &c
			}
		}
		return res, err
	}
}
