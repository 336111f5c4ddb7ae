package mcpserver

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/status"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (s *server) addWorkspaceTools() {
	addTool(s, &mcp.Tool{Name: "initialize_workspace",
		Description: "Create the .diagnostics workspace in the project root (idempotent); needed once before other tools.",
		Annotations: &mcp.ToolAnnotations{Title: "Initialize workspace", IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, s.initWorkspace)
	addTool(s, &mcp.Tool{Name: "workspace_status",
		Description: "Workspace identity, published corpus head, run and artifact counts, catalog freshness, stale runs and warnings. Call first.",
		Annotations: readOnly("Workspace status")}, s.workspaceStatus)
	s.addImportTool()
	addTool(s, &mcp.Tool{Name: "list_capabilities",
		Description: "Every capture adapter's status, version and remediation, and Bubblewrap containment. Needs no workspace.",
		Annotations: readOnly("List capabilities")}, s.listCapabilities)
	addTool(s, &mcp.Tool{Name: "list_workloads",
		Description: "Workloads declared in the project's flameox.toml, with their approval state (approved, unapproved, changed).",
		Annotations: readOnly("List workloads")}, s.listWorkloads)
	addTool(s, &mcp.Tool{Name: "get_workload",
		Description: "One declared workload: description, canonical definition (secrets redacted), digest, approval state and changes since approval.",
		Annotations: readOnly("Get workload")}, s.getWorkload)
	addTool(s, &mcp.Tool{Name: "validate_catalog",
		Description: "Check that catalog.duckdb holds only what flameox puts there. valid:false lists the problems; queries never depend on the catalog.",
		Annotations: readOnly("Validate catalog")}, s.validateCatalog)
	addTool(s, &mcp.Tool{Name: "catalog_status",
		Description: "When catalog.duckdb was built, from which commit, and whether it matches the published head.",
		Annotations: readOnly("Catalog status")}, s.catalogStatus)
}

func (s *server) initWorkspace(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*status.InitResult, string, error) {
	res, ws, err := status.Init(ctx, s.opts.ProjectRoot, s.opts.Now(), publish.FirstCommit)
	if err != nil {
		return nil, "", err
	}
	if len(res.Created) == 0 {
		return res, fmt.Sprintf("workspace %s already initialized in %s; nothing changed", ws.Meta.WorkspaceID, ws.Root), nil
	}
	return res, fmt.Sprintf("initialized workspace %s in %s", ws.Meta.WorkspaceID, ws.Root), nil
}

func (s *server) workspaceStatus(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*status.Status, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	st, err := status.Collect(ctx, ws)
	if err != nil {
		return nil, "", err
	}
	sum := fmt.Sprintf("workspace %s: head %s, %d run(s) (%d unpublished), %d artifact object(s)",
		st.Workspace.WorkspaceID, corpus.Short(st.Head.CommitID), st.Runs.Total, st.Runs.Unpublished, st.Artifacts.Objects)
	if n := len(st.StaleRuns); n > 0 {
		sum += fmt.Sprintf("; %d stale run(s) (a human can run `flameox recover`)", n)
	}
	if n := len(st.Warnings); n > 0 {
		sum += fmt.Sprintf("; %d warning(s)", n)
	}
	return st, sum, nil
}

func (s *server) listCapabilities(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*all.CapabilityList, string, error) {
	res := all.Capabilities(ctx)
	parts := make([]string, 0, len(res.Adapters)+1)
	for _, a := range append(res.Adapters, res.Containment) {
		parts = append(parts, a.Adapter+" "+string(a.Status))
	}
	return res, "capabilities: " + strings.Join(parts, ", "), nil
}

func (s *server) listWorkloads(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*workload.List, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := workload.ListFor(ws)
	if err != nil {
		return nil, "", err
	}
	if len(res.Workloads) == 0 {
		return res, "no workloads declared in " + workload.FileName, nil
	}
	parts := make([]string, len(res.Workloads))
	for i, w := range res.Workloads {
		parts[i] = w.Name + " (" + w.Approval + ")"
	}
	sort.Strings(parts)
	return res, fmt.Sprintf("%d workload(s): %s", len(parts), strings.Join(parts, ", ")), nil
}

type workloadInput struct {
	Name string `json:"name" jsonschema:"declared workload name (see list_workloads)"`
}

func (s *server) getWorkload(ctx context.Context, _ *mcp.CallToolRequest, in workloadInput) (*workload.Detail, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	d, err := workload.ShowFor(ws, in.Name)
	if err != nil {
		return nil, "", err
	}
	// Secrets are redacted by the broker's sensitivity rule (redact.go);
	// `flameox workload show` prints everything for a person.
	d.Definition = redactDefinition(d.Definition)
	sum := fmt.Sprintf("workload %s: %s at definition %s", d.Name, d.Approval, corpus.Short(d.DefinitionID))
	if len(d.Changes) > 0 {
		sum += "; changed since approval: " + strings.Join(d.Changes, "; ")
	}
	return d, sum, nil
}

func (s *server) validateCatalog(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*catalog.ValidateResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := catalog.Validate(ctx, ws.Root)
	if err != nil {
		return nil, "", err
	}
	if res.Note != "" {
		return res, res.Note, nil
	}
	if res.Valid {
		return res, "catalog.duckdb is valid", nil
	}
	return res, fmt.Sprintf("catalog.duckdb has %d problem(s); a human can replace it with `flameox catalog rebuild`", len(res.Problems)), nil
}

func (s *server) catalogStatus(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*catalog.Status, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	st, err := catalog.ReadStatus(ws.Root)
	if err != nil {
		return nil, "", err
	}
	switch {
	case !st.Exists:
		return st, "catalog.duckdb does not exist (queries do not need it)", nil
	case !st.Fresh:
		return st, "catalog.duckdb is stale: built at " + corpus.Short(st.CommitID) + ", head is " + corpus.Short(st.Head), nil
	}
	return st, "catalog.duckdb is fresh at " + corpus.Short(st.Head), nil
}
