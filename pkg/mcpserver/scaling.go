package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/stats"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scalingLimit is analyze_scaling's default count of correlated frames,
// the CLI's, so the two give the same result.
const scalingLimit = 20

// addScalingTools registers analyze_scaling.
func (s *server) addScalingTools() {
	addTool(s, &mcp.Tool{Name: "analyze_scaling",
		Description: "How an experiment's cost grows with input size: per-input medians, constant/log/linear/n_log_n/quadratic fits (AICc), a model only by a clear margin; correlated frames.",
		Annotations: readOnly("Analyze scaling")}, s.analyzeScaling, limitSchema(scalingLimit))
}

func (s *server) analyzeScaling(ctx context.Context, _ *mcp.CallToolRequest, in analysis.ScalingRequest) (*analysis.ScalingOutput, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = scalingLimit
	}
	res, err := analysis.Scaling(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	var parts []string
	for _, sr := range res.Series {
		v := sr.Choice.Decision
		switch sr.Choice.Decision {
		case stats.Chosen:
			v += " " + sr.Choice.Model
		case stats.Indistinguishable:
			v += " (" + strings.Join(sr.Choice.Candidates, ", ") + ")"
		}
		parts = append(parts, fmt.Sprintf("%s: %s over %g..%g", sr.Variant, v, sr.MeasuredMin, sr.MeasuredMax))
	}
	sum := fmt.Sprintf("%s over %s, %d attempted / %d succeeded trials; %s; %s", res.Parameters.Metric, res.Parameters.Parameter,
		res.AttemptedTrials, res.SucceededTrials, strings.Join(parts, "; "), pageText("correlated frame(s)", res.Returned, res.Total, res.Truncated, res.Cursor))
	return &analysis.ScalingOutput{ScalingResult: res}, sum, nil
}
