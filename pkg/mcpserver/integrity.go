package mcpserver

import (
	"context"

	"github.com/flameox/flameox/pkg/integrity"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addIntegrityTools registers the read-only validation tool
// (pkg/integrity); repair, gc and purge stay CLI-only (SPEC §8).
//
// validate_workspace runs quick or standard validation (the default):
// both read manifests and Parquet footers only. Full validation re-hashes
// every file and can take minutes on a large workspace, longer than a
// host's tool timeout: it stays `flameox validate --level full`. The tool
// is lean because tools/list is near its budget (surface_test.go): one
// argument, and the output schema does not repeat the result's required
// fields (docs/integrity.md describes the result).
func (s *server) addIntegrityTools() {
	out := outputSchema[integrity.IntegrityResult]("validate_workspace")
	out.Properties["result"].Required = nil
	addTool(s, &mcp.Tool{Name: "validate_workspace",
		Description: "Corpus integrity check (standard level).",
		Annotations: readOnly("Validate workspace"), OutputSchema: out}, s.validateWorkspace,
		enum("level", string(integrity.Quick), string(integrity.Standard)))
}

type validateInput struct {
	Level string `json:"level,omitempty" jsonschema:"default standard"`
}

func (s *server) validateWorkspace(ctx context.Context, _ *mcp.CallToolRequest, in validateInput) (*integrity.IntegrityResult, string, error) {
	level := integrity.Standard
	if in.Level == string(integrity.Quick) {
		level = integrity.Quick
	}
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	// Bounded to stay within a default result's size; the CLI lists more.
	res, err := integrity.ValidateWith(ctx, ws, level, integrity.Options{MaxProblems: 10, MaxDependents: 3})
	if err != nil {
		return nil, "", err
	}
	sum := res.Summary()
	if !res.Valid {
		sum += "; a person runs `flameox repair` (CLI-only) to plan the repair"
	}
	return res, sum, nil
}
