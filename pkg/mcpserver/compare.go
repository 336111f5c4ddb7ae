package mcpserver

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/compare"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addCompareTools registers the comparison tools.
func (s *server) addCompareTools() {
	addTool(s, &mcp.Tool{Name: "compare_runs",
		Description: "benchstat on two runs' go test/pyperf values: old, new median ± CI, delta (~ if not significant), p, decision, validity.",
		Annotations: readOnly("Compare two runs (benchstat)")}, s.compareRuns, limitSchema(listLimit))
}

func (s *server) compareRuns(ctx context.Context, _ *mcp.CallToolRequest, in compare.BenchRequest) (*compare.BenchView, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := compare.CompareRuns(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	counts := map[string]int{}
	for _, r := range res.Rows {
		counts[r.Decision]++
	}
	text := fmt.Sprintf("%d of %d rows, %s; %d meaningful regressions, %d meaningful improvements, %d inconclusive",
		res.Returned, res.Total, res.Validity.Status, counts["meaningful_regression"], counts["meaningful_improvement"], counts["inconclusive"])
	if res.Truncated {
		text += "; more rows: raise limit or narrow with filter"
	}
	return res, text, nil
}
