package mcpserver

import (
	"context"

	"github.com/flameox/flameox/pkg/integrity"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addIntegrityTools registers the read-only validation tool
// (pkg/integrity); repair, gc and purge stay CLI-only (SPEC §8).
//
// validate_workspace runs standard validation, which includes quick: both
// read manifests and Parquet footers only. Full validation re-hashes every
// file and can take minutes on a large workspace, longer than a host's
// tool timeout: it stays `flameox validate --level full`. The tool is lean
// because tools/list is at its budget (surface_test.go): no arguments (a
// level argument would cost the bytes there are not), and the output
// schema does not repeat the result's required fields (docs/integrity.md
// describes the result).
func (s *server) addIntegrityTools() {
	out := outputSchema[integrity.IntegrityResult]("validate_workspace")
	out.Properties["result"].Required = nil
	addTool(s, &mcp.Tool{Name: "validate_workspace",
		Description: "Corpus integrity check (standard level).",
		Annotations: readOnly("Validate workspace"), OutputSchema: out}, s.validateWorkspace)
}

func (s *server) validateWorkspace(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*integrity.IntegrityResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	// Bounded to stay within a default result's size; the CLI lists more.
	res, err := integrity.ValidateWith(ctx, ws, integrity.Standard, integrity.Options{MaxProblems: 10, MaxDependents: 3})
	if err != nil {
		return nil, "", err
	}
	sum := res.Summary()
	if !res.Valid {
		sum += "; a person runs `flameox repair` (CLI-only) to plan the repair"
	}
	return res, sum, nil
}
