package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProposeNothingRunsBeforeApproval: propose_workload writes a pending
// proposal and nothing else; a proposed-only workload cannot be planned
// (so no token, no capture), a proposed change does not change what the
// declared workload runs; only the person's `flameox workload approve`
// (workload.Adopt) makes the proposal what runs.
func TestProposeNothingRunsBeforeApproval(t *testing.T) {
	toml := "schema_version = 1\n\n[workloads.old]\nargv = [\"/bin/true\"]\ntimeout_seconds = 10\n"
	dir := captureProject(t, toml, "old")
	c := connect(t, dir, nil)
	var res workload.ProposalResult
	c.ok("propose_workload", map[string]any{"name": "fresh", "description": "true with a count", "argv": []string{"/bin/true", "{n}"},
		"timeout_seconds": 10, "parameters": map[string]any{"n": map[string]any{"min": 1, "max": 5}}}, &res)
	if res.Status != workload.ProposalNew || res.File != ".diagnostics/proposals/fresh.toml" || !strings.HasPrefix(res.DefinitionID, "sha256:") {
		t.Fatalf("propose: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "flameox.toml")); string(b) != toml {
		t.Fatal("propose_workload changed flameox.toml")
	}
	env := c.fails("plan_capture", map[string]any{"adapter": "process", "workload": "fresh"}, "EXECUTION_REFUSED")
	if !strings.Contains(strings.Join(env.Error.Remediation, " "), "flameox workload approve fresh") || env.Error.Details["reason"] != "proposed" {
		t.Fatalf("plan of a proposed-only workload: %+v", env.Error)
	}
	var l struct {
		Workloads []struct{ Name string } `json:"workloads"`
	}
	c.ok("list_workloads", nil, &l)
	if len(l.Workloads) != 1 || l.Workloads[0].Name != "old" {
		t.Fatalf("list_workloads lists a proposal: %+v", l)
	}

	// A proposed change: the declared, approved definition is what plans.
	var before struct {
		Plan struct {
			Workload struct {
				DefinitionID string `json:"definition_id"`
				Approval     string `json:"approval"`
			} `json:"workload"`
		} `json:"plan"`
	}
	c.ok("plan_capture", map[string]any{"adapter": "process", "workload": "old"}, &before)
	c.ok("propose_workload", map[string]any{"name": "old", "argv": []string{"/bin/false"}}, &res)
	if res.Status != workload.ProposalChange || len(res.Changes) == 0 {
		t.Fatalf("propose a change: %+v", res)
	}
	var after = before
	c.ok("plan_capture", map[string]any{"adapter": "process", "workload": "old"}, &after)
	if after.Plan.Workload.DefinitionID != before.Plan.Workload.DefinitionID || after.Plan.Workload.Approval != "approved" {
		t.Fatalf("a proposal changed what runs: %+v → %+v", before, after)
	}

	// The person adopts fresh: now it plans, approved.
	ws, err := workspace.Open(filepath.Join(dir, workspace.DirName))
	if err != nil {
		t.Fatal(err)
	}
	p, err := workload.LoadProposal(ws, "fresh")
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := workload.PlanAdoption(ws, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workload.Adopt(context.Background(), ws, p, src, time.Now()); err != nil {
		t.Fatal(err)
	}
	c.ok("plan_capture", map[string]any{"adapter": "process", "workload": "fresh", "parameters": map[string]any{"n": 3}}, &after)
	if after.Plan.Workload.DefinitionID != res2ID(t, c, "fresh") || after.Plan.Workload.Approval != "approved" {
		t.Fatalf("after adoption: %+v", after)
	}

	// Invalid proposals are refused as flameox.toml would refuse them.
	c.fails("propose_workload", map[string]any{"name": "x", "argv": []string{"a", "{nope}"}}, "WORKSPACE_INVALID")
	c.fails("propose_workload", map[string]any{"name": "../x", "argv": []string{"a"}}, "INVALID_ARGUMENTS")

	tools, err := c.cs.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "propose_workload" && (tl.Annotations == nil || tl.Annotations.ReadOnlyHint) {
			t.Errorf("propose_workload annotations %+v: it writes a file, so it is not read-only", tl.Annotations)
		}
	}
}

func res2ID(t *testing.T, c *client, name string) string {
	t.Helper()
	var d struct {
		DefinitionID string `json:"definition_id"`
	}
	c.ok("get_workload", map[string]any{"name": name}, &d)
	return d.DefinitionID
}
