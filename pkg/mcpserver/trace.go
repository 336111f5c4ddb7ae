package mcpserver

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// traceWindowLimit is get_trace_window's default page: an agent reads a
// few dozen slices at a time and continues with the cursor.
const traceWindowLimit = 50

// addTraceTools registers get_trace_window.
func (s *server) addTraceTools() {
	addTool(s, &mcp.Tool{Name: "get_trace_window",
		Description: "The slices of an imported Chrome/Kineto trace overlapping [start_ns, end_ns), in start order, keyset-paged.",
		Annotations: readOnly("Trace window")}, s.traceWindow, limitSchema(traceWindowLimit))
}

func (s *server) traceWindow(ctx context.Context, _ *mcp.CallToolRequest, in analysis.TraceWindowRequest) (*analysis.TraceWindowResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = traceWindowLimit
	}
	res, err := analysis.TraceWindow(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	sum := fmt.Sprintf("trace %s, window [%d, %d) ns of %d ns: %s", res.Source.ArtifactID, res.Parameters.StartNS, res.Parameters.EndNS, res.SpanNS,
		pageText("slice(s)", res.Returned, res.Total, res.Truncated, res.Cursor))
	return res, sum, nil
}
