package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flameox/flameox/pkg/workload"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// propose_workload is how an agent drafts a workload: it writes a pending
// proposal (workload.Propose, .diagnostics/proposals/NAME.toml) and
// nothing else. It implies no approval, changes neither flameox.toml nor
// approvals.json, and nothing proposed runs: plan_capture refuses a name
// that is only proposed, and runs a declared one as declared, until a
// person runs `flameox workload approve NAME`, which shows the diff,
// adopts it into flameox.toml and approves it.

type proposeInput struct {
	Name           string                   `json:"name" jsonschema:"workload name: [a-z0-9][a-z0-9_-]*; an existing name proposes a change to it"`
	Description    string                   `json:"description,omitempty" jsonschema:"what the workload measures, one line"`
	Argv           []string                 `json:"argv" jsonschema:"the command as an array (no shell); {param} renders a declared parameter"`
	Cwd            string                   `json:"cwd,omitempty" jsonschema:"project-relative directory (default .)"`
	TimeoutSeconds float64                  `json:"timeout_seconds,omitempty" jsonschema:"seconds (default 300)"`
	Env            map[string]string        `json:"env,omitempty" jsonschema:"variables the workload sets (values are templates)"`
	AllowEnv       []string                 `json:"allow_env,omitempty" jsonschema:"secret-looking variable names it may inherit"`
	Options        map[string]string        `json:"options,omitempty" jsonschema:"adapter options, e.g. {\"profiles\": \"cpu\"} for gotest"`
	Parameters     map[string]proposedParam `json:"parameters,omitempty" jsonschema:"name → {choices: [...]} (the first is the default) or {min, max, default}"`
	Oracle         *workload.Oracle         `json:"oracle,omitempty" jsonschema:"validation command run after a successful capture"`
}

type proposedParam struct {
	Choices []json.RawMessage `json:"choices,omitempty"`
	Min     json.RawMessage   `json:"min,omitempty"`
	Max     json.RawMessage   `json:"max,omitempty"`
	Default json.RawMessage   `json:"default,omitempty"`
}

func (s *server) addProposeTool() {
	addTool(s, &mcp.Tool{Name: "propose_workload",
		Description: "Draft a workload for flameox.toml as a proposal a person adopts with `flameox workload approve NAME`; nothing runs before that.",
		Annotations: &mcp.ToolAnnotations{Title: "Propose workload", IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, s.proposeWorkload, proposeSchema)
}

// proposeSchema types the JSON scalars of a proposed parameter.
func proposeSchema(sch *jsonschema.Schema) {
	params := sch.Properties["parameters"]
	if params == nil || params.AdditionalProperties == nil {
		return
	}
	p := params.AdditionalProperties
	scalar := func() *jsonschema.Schema { return &jsonschema.Schema{Types: []string{"string", "number", "boolean"}} }
	number := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "number"} }
	p.Properties = map[string]*jsonschema.Schema{
		"choices": {Type: "array", Items: scalar(), Description: "declared values (strings, numbers or booleans of one type); the first is the default"},
		"min":     number(), "max": number(), "default": number(),
	}
}

func (s *server) proposeWorkload(ctx context.Context, _ *mcp.CallToolRequest, in proposeInput) (*workload.ProposalResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	p := workload.Proposal{Name: in.Name, Description: in.Description, Argv: in.Argv, Cwd: in.Cwd, TimeoutSeconds: in.TimeoutSeconds,
		Env: in.Env, AllowEnv: in.AllowEnv, Options: in.Options, Oracle: in.Oracle, Parameters: map[string]workload.ProposedParameter{}}
	for k, v := range in.Parameters {
		p.Parameters[k] = workload.ProposedParameter{Choices: v.Choices, Min: v.Min, Max: v.Max, Default: v.Default}
	}
	res, err := workload.Propose(ctx, ws, p, s.opts.Now())
	if err != nil {
		return nil, "", err
	}
	sum := fmt.Sprintf("proposed workload %s (%s) at definition %s in %s; a person adopts it with `flameox workload approve %s`", res.Name, res.Status, res.DefinitionID, res.File, res.Name)
	if len(res.Changes) > 0 {
		sum += "; changes: " + strings.Join(res.Changes, "; ")
	}
	return res, sum, nil
}
