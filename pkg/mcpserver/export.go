package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addExportTools registers export_profile: it writes one file, inside the
// project root (never .diagnostics), and returns its path, not its body.
func (s *server) addExportTools() {
	addTool(s, &mcp.Tool{Name: "export_profile",
		Description: "Write a profile as pprof, collapsed, speedscope or an SVG flame graph to a project file; returns its path.",
		Annotations: &mcp.ToolAnnotations{Title: "Export profile", IdempotentHint: true, DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}},
		s.exportProfile)
}

// inProject refuses an output outside the project root: an agent writes
// only inside the project it serves.
func (s *server) inProject(output string) error {
	out := output
	if !filepath.IsAbs(out) {
		out = filepath.Join(s.opts.ProjectRoot, out)
	}
	if rel, err := filepath.Rel(s.opts.ProjectRoot, filepath.Clean(out)); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fault.New(fault.InvalidArguments, "output %s is outside the project root %s", output, s.opts.ProjectRoot).With("field", "output")
	}
	return nil
}

func (s *server) exportProfile(ctx context.Context, _ *mcp.CallToolRequest, in analysis.ExportRequest) (*analysis.ExportResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if err := s.inProject(in.Output); err != nil {
		return nil, "", err
	}
	res, err := analysis.Export(ctx, ws, in, s.opts.ProjectRoot)
	if err != nil {
		return nil, "", err
	}
	return res, fmt.Sprintf("wrote %s (%s, %d bytes, %d stacks)", res.Path, res.Format, res.Bytes, res.Stacks), nil
}
