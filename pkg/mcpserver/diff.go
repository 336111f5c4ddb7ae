package mcpserver

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// diffLimit is analyze_diff's default page.
const diffLimit = 10

// addDiffTools registers the profile-diff tools.
func (s *server) addDiffTools() {
	addTool(s, &mcp.Tool{Name: "analyze_diff",
		Description: "What changed between two profiles (run or artifact ids): functions by self-value change, with inclusive change, as go tool pprof -top -diff_base.",
		Annotations: readOnly("Analyze profile diff")}, s.analyzeDiff, limitSchema(diffLimit))
}

// analyzeDiff is `flameox analyze diff --json`.
func (s *server) analyzeDiff(ctx context.Context, _ *mcp.CallToolRequest, in analysis.DiffRequest) (*analysis.DiffResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = diffLimit
	}
	res, err := analysis.Diff(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	sum := fmt.Sprintf("%s diff of %s against base %s: %s; total %+d (%s), %d new, %d gone, not normalised",
		res.Parameters.SampleType, res.Candidate.Source.ArtifactID, res.Base.Source.ArtifactID,
		pageText("changed frame(s)", res.Returned, res.Total, res.Truncated, res.Cursor), res.TotalDelta, res.Base.SampleType.Unit, res.Added, res.Removed)
	if res.Parameters.Focus != "" || res.Parameters.Ignore != "" {
		sum += "; filtered by focus/ignore as go tool pprof does"
	}
	if len(res.Rows) > 0 {
		// Names come from the artifacts: they stay in the structured
		// result, never in the text an agent reads as prose.
		r := res.Rows[0]
		sum += fmt.Sprintf("; top change: frame %s, self %+.1f%% of the base total", r.FrameID, 100*r.SelfDeltaFraction)
	}
	return res, sum, nil
}
