package mcpserver

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// executionLimit is analyze_execution's default rows per list, the CLI's.
const executionLimit = 20

// addExecutionTools registers analyze_execution.
func (s *server) addExecutionTools() {
	addTool(s, &mcp.Tool{Name: "analyze_execution",
		Description: "What ran: coverage per file, SDK observations, configuration facts and phases; with against, what was added, removed or changed.",
		Annotations: readOnly("Analyze execution")}, s.analyzeExecution, limitSchema(executionLimit))
}

func (s *server) analyzeExecution(ctx context.Context, _ *mcp.CallToolRequest, in analysis.ExecutionRequest) (*analysis.ExecutionOutput, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = executionLimit
	}
	res, err := analysis.Execution(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	sum := fmt.Sprintf("run %s: %d fact(s)", res.Base.RunID, res.Base.FactsTotal)
	if res.Changes != nil {
		sum += fmt.Sprintf("; against %s: %d fact change(s), %d file change(s)", res.Candidate.RunID, res.Changes.FactsTotal, res.Changes.FilesTotal)
		for i, f := range res.Changes.Facts {
			if i == 3 {
				break
			}
			sum += fmt.Sprintf("; %s %s", f.Status, f.Name)
		}
	}
	return &analysis.ExecutionOutput{ExecutionResult: res}, sum, nil
}
