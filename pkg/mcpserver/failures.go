package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// failuresLimit is analyze_failures's default count of groups, the CLI's,
// so the two give the same result.
const failuresLimit = 8

// addFailuresTools registers analyze_failures.
func (s *server) addFailuresTools() {
	addTool(s, &mcp.Tool{Name: "analyze_failures",
		Description: "Whether failures cluster: failures grouped by collector, workload, parameter, environment, source state, outcome and error, with rates and competing explanations.",
		Annotations: readOnly("Analyze failures")}, s.analyzeFailures, limitSchema(failuresLimit))
}

func (s *server) analyzeFailures(ctx context.Context, _ *mcp.CallToolRequest, in analysis.FailuresRequest) (*analysis.FailuresOutput, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = failuresLimit
	}
	res, err := analysis.Failures(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return &analysis.FailuresOutput{FailuresResult: res}, failuresSummary(res), nil
}

// failuresSummary is the short text of an analyze_failures answer.
func failuresSummary(r *analysis.FailuresResult) string {
	out := r.Summary.Answer
	var parts []string
	for _, e := range r.Explanations {
		if len(parts) == 3 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s, %d failed / %d succeeded)", e.Dimension, clipText(e.Value), e.Strength, e.Failures, e.Succeeded))
	}
	if len(parts) > 0 {
		out += "; candidates: " + strings.Join(parts, "; ")
	}
	out += fmt.Sprintf("; %d of %d group(s)", r.Returned, r.Total)
	if r.Truncated {
		out += "; more with a larger limit"
	}
	return out
}
