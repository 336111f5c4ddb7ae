package flameox

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
)

// adoptResult is `flameox workload approve NAME --json` for a proposal.
type adoptResult struct {
	SchemaVersion int                `json:"schema_version"`
	Name          string             `json:"name"`
	Proposal      string             `json:"proposal"`
	DryRun        bool               `json:"dry_run"`
	Adoption      *workload.Adoption `json:"adoption"`
	Approval      *workload.Approval `json:"approval,omitempty"`
}

// approveProposal shows the exact diff a pending proposal makes to
// flameox.toml and, unless dryRun, writes it and approves the workload.
func approveProposal(ctx context.Context, c *Context, ws *workspace.Workspace, p *workload.Pending, dryRun bool) error {
	newSrc, a, err := workload.PlanAdoption(ws, p)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(ws.ProjectRoot, p.Path)
	if err != nil {
		rel = p.Path
	}
	res := &adoptResult{SchemaVersion: 1, Name: p.Name, Proposal: filepath.ToSlash(rel), DryRun: dryRun, Adoption: a}
	if !dryRun {
		if res.Approval, err = workload.Adopt(ctx, ws, p, newSrc, c.Env.Now()); err != nil {
			return err
		}
	}
	return c.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "proposal %s for workload %s, as a diff to %s:\n", cli.Safe(res.Proposal), cli.Name(p.Name), workload.FileName)
		for _, ln := range strings.SplitAfter(strings.TrimSuffix(a.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", cli.Safe(strings.TrimSuffix(ln, "\n")))
		}
		for _, ch := range a.Changes {
			fmt.Fprintf(w, "changed: %s\n", cli.Safe(ch))
		}
		if dryRun {
			fmt.Fprintf(w, "dry run: nothing written; `flameox workload approve %s` adopts and approves it\n", cli.Name(p.Name))
			return
		}
		fmt.Fprintf(w, "adopted into %s and approved %s at definition %s\n", workload.FileName, cli.Name(p.Name), res.Approval.DefinitionID)
	})
}

// pendingProposal is name's pending proposal, or nil when it has none.
func pendingProposal(ws *workspace.Workspace, name string) (*workload.Pending, error) {
	p, err := workload.LoadProposal(ws, name)
	if fault.Is(err, fault.NotFound) || fault.Is(err, fault.InvalidArguments) {
		return nil, nil
	}
	return p, err
}
