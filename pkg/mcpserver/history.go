package mcpserver

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/fleet"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addHistoryTools registers query_fleet (issue 23): the fleet's named
// questions and, as metric_changes, `flameox history` in one tool, so
// tools/list grows by one. It only reads: the export directories an
// agent names are read, never written, and every result is bounded.
func (s *server) addHistoryTools() {
	names := make([]string, 0, len(fleet.Queries()))
	for _, q := range fleet.Queries() {
		names = append(names, q.Name)
	}
	addTool(s, &mcp.Tool{Name: "query_fleet",
		Description: "Ask a named question over exported corpora, or metric_changes (history with change points) of the workspace.",
		Annotations: readOnly("Query fleet")}, s.queryFleet, enum("name", names...))
}

func (s *server) queryFleet(ctx context.Context, _ *mcp.CallToolRequest, in fleet.QueryRequest) (*fleet.QueryResult, string, error) {
	in.Repo = s.opts.ProjectRoot
	if len(in.From) == 0 {
		if ws, err := s.workspace(); err == nil {
			in.Workspace = ws
		} else if in.Name == "metric_changes" {
			return nil, "", err
		}
	}
	res, err := fleet.Query(ctx, in)
	if err != nil {
		return nil, "", err
	}
	sum := fmt.Sprintf("%s@%s over %d corpora: %d of %d rows", res.Query, res.Version, len(res.Corpora), res.Returned, res.Total)
	return res, sum, nil
}
