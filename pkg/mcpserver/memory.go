package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memoryLimit is analyze_memory's default count of stacks per list, the
// CLI's, so the two give the same result.
const memoryLimit = 5

// addMemoryTools registers analyze_memory.
func (s *server) addMemoryTools() {
	addTool(s, &mcp.Tool{Name: "analyze_memory",
		Description: "Why memory grows (memray, massif, heaptrack, Go heap): figures, top retained/peak/allocating stacks, heap over time; with against, what grew, and for run sets the decision.",
		Annotations: readOnly("Analyze memory")}, s.analyzeMemory, limitSchema(memoryLimit))
}

func (s *server) analyzeMemory(ctx context.Context, _ *mcp.CallToolRequest, in compare.MemoryRequest) (*compare.MemoryReport, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = memoryLimit
	}
	res, err := compare.Memory(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, memorySummary(res), nil
}

// memorySummary is the short text of an analyze_memory answer.
func memorySummary(r *compare.MemoryReport) string {
	fig := func(side analysis.MemorySide) string {
		var parts []string
		for _, f := range side.Figures {
			if strings.HasPrefix(f.Name, "memory.peak_heap") && f.Name != "memory.peak_heap" {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %d %s", f.Name, f.Value, f.Unit))
			if len(parts) == 4 {
				break
			}
		}
		return side.Kind + " " + side.Input + ": " + strings.Join(parts, ", ")
	}
	out := fig(r.Base)
	if r.Candidate != nil {
		out += "; against " + fig(*r.Candidate)
	}
	if g := r.Growth; g != nil {
		out += fmt.Sprintf("; %s grew by %d %s (%d stacks grew, %d new)", g.SampleType, g.Delta, g.Unit, g.Grew, g.New)
	}
	if c := r.Comparison; c != nil {
		out += fmt.Sprintf("; %s: %s, %s", c.Metric, c.Decision, c.Validity)
	}
	return out
}
