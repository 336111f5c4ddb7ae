package mcpserver

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/query"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type summarizeInput struct {
	InvestigationID string `json:"investigation_id" jsonschema:"the investigation (list_investigations)"`
}

// addReportTools registers summarize_investigation.
func (s *server) addReportTools() {
	addTool(s, &mcp.Tool{Name: "summarize_investigation",
		Description: "An investigation as one report: question, hypotheses, experiments and trial outcomes (first 500), comparisons, analyses and findings, with the ids behind every number.",
		Annotations: readOnly("Summarize investigation")}, s.summarizeInvestigation)
}

func (s *server) summarizeInvestigation(ctx context.Context, _ *mcp.CallToolRequest, in summarizeInput) (*query.InvestigationReport, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := query.SummarizeInvestigation(ctx, ws, in.InvestigationID)
	if err != nil {
		return nil, "", err
	}
	return res, fmt.Sprintf("investigation %s: %d experiments, %d comparisons, %d analyses, %d findings", in.InvestigationID,
		len(res.Experiments), len(res.Comparisons), len(res.Analyses), len(res.Findings)), nil
}
