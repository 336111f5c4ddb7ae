package mcpserver

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/investigate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addComparisonRecordTools registers record_comparison: compare_run_sets's
// request, recorded. Recording the same comparison again publishes
// nothing and says it was already recorded, hence idempotent.
func (s *server) addComparisonRecordTools() {
	addTool(s, &mcp.Tool{Name: "record_comparison",
		Description: "compare_run_sets, then persist the comparison with the commit it read; the same one again is reported, an invalid one recorded and returned as COMPARISON_INVALID.",
		Annotations: &mcp.ToolAnnotations{Title: "Record comparison", IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, s.recordComparison, enum("polarity", inquiry.LowerIsBetter, inquiry.HigherIsBetter, inquiry.Neutral))
}

func (s *server) recordComparison(ctx context.Context, _ *mcp.CallToolRequest, in compare.ConfirmRequest) (*investigate.ComparisonRecorded, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := investigate.RecordComparison(ctx, s.publisher(ws), in)
	if err != nil {
		return nil, "", err
	}
	r, c := res.Recorded, res.Comparison
	how := "recorded"
	if r.AlreadyRecorded {
		how = "already recorded"
	}
	sum := fmt.Sprintf("%s: %s, %s, %d paired blocks; %s as %s in commit %s", c.Metric, c.Decision, c.Validity, c.Pairs, how, r.ComparisonID, corpus.Short(r.CorpusCommitID))
	return res, sum, compare.Exit(c)
}
