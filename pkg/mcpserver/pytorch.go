package mcpserver

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pytorchLimit is analyze_pytorch's default rows per list, the CLI's.
const pytorchLimit = 20

// addPyTorchTools registers analyze_pytorch.
func (s *server) addPyTorchTools() {
	addTool(s, &mcp.Tool{Name: "analyze_pytorch",
		Description: "A torch.profiler trace: operators (CPU, device, shapes), sync, device idle gaps, warm-up vs steady steps, small ops, memory.",
		Annotations: readOnly("Analyze PyTorch trace")}, s.analyzePyTorch, limitSchema(pytorchLimit))
}

func (s *server) analyzePyTorch(ctx context.Context, _ *mcp.CallToolRequest, in analysis.PyTorchRequest) (*analysis.PyTorchOutput, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = pytorchLimit
	}
	res, err := analysis.PyTorch(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	sum := fmt.Sprintf("trace %s: %d operator(s), %d kind(s) of device work", res.Source.ArtifactID, res.OperatorsTotal, res.KernelsTotal)
	for i, o := range res.Observations {
		if i == 3 {
			break
		}
		sum += "; " + o
	}
	return &analysis.PyTorchOutput{PyTorchResult: res}, sum, nil
}
