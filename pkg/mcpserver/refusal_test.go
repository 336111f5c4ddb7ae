package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestImportRefusals(t *testing.T) {
	dir := project(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link.txt"))
	os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("fine"), 0o644)
	c := connect(t, dir, nil)
	for _, p := range []string{outside, "/etc/hostname", "../x", "a/../../x", "a\x00b", "link.txt", ".diagnostics/config.toml", "./.diagnostics/workspace.json"} {
		env := c.fails("import_artifact", map[string]any{"path": p}, "EXECUTION_REFUSED")
		if strings.ContainsRune(env.text, 0) {
			t.Errorf("%q: raw NUL in the text", p)
		}
	}
	c.fails("import_artifact", map[string]any{"path": "missing.txt"}, "NOT_FOUND")
	c.fails("import_artifact", map[string]any{"path": "ok.txt", "kind": "nonsense"}, "INVALID_ARGUMENTS")
	c.importedRun("ok.txt")
	var st struct {
		Runs struct{ Total int } `json:"runs"`
	}
	c.ok("workspace_status", nil, &st)
	if st.Runs.Total != 1 {
		t.Fatalf("refused imports created runs: %d", st.Runs.Total)
	}
}

func TestInvalidArguments(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	env := c.fails("workspace_status", map[string]any{"bogus": 1}, "INVALID_ARGUMENTS")
	if env.Error.Details["unknown_fields"] != "bogus" {
		t.Fatalf("unknown field not named: %+v", env.Error)
	}
	env = c.fails("list_runs", map[string]any{"limit": 5, "argv": []string{"sh"}, "cwd": "/"}, "INVALID_ARGUMENTS")
	if env.Error.Details["unknown_fields"] != "argv,cwd" || !strings.Contains(env.Error.Message, "argv") {
		t.Fatalf("unknown fields: %+v", env.Error)
	}
	c.fails("list_runs", map[string]any{"limit": 5000}, "INVALID_ARGUMENTS")
	c.fails("list_runs", map[string]any{"limit": "ten"}, "INVALID_ARGUMENTS")
	c.fails("get_run", map[string]any{}, "INVALID_ARGUMENTS")
	c.fails("get_evidence", map[string]any{"type": "passwords", "id": "x"}, "INVALID_ARGUMENTS")
	c.fails("plan_capture", map[string]any{"adapter": "bash", "workload": "x"}, "INVALID_ARGUMENTS")
}

// TestNoWorkspace: the server starts without a workspace; tools say
// WORKSPACE_NOT_FOUND until initialize_workspace creates it.
func TestNoWorkspace(t *testing.T) {
	dir := t.TempDir()
	c := connect(t, dir, nil)
	env := c.fails("workspace_status", nil, "WORKSPACE_NOT_FOUND")
	if !strings.Contains(env.text, "initialize_workspace") {
		t.Fatalf("no hint: %s", env.text)
	}
	c.fails("list_runs", nil, "WORKSPACE_NOT_FOUND")
	c.ok("list_capabilities", nil, nil)
	c.ok("initialize_workspace", nil, nil)
	c.ok("initialize_workspace", nil, nil) // idempotent
	c.ok("workspace_status", nil, nil)
	if _, err := os.Stat(filepath.Join(dir, ".diagnostics", "workspace.json")); err != nil {
		t.Fatal(err)
	}
}

// TestExpiredPlanToken runs in process with a 1 ms token lifetime.
func TestExpiredPlanToken(t *testing.T) {
	dir := captureProject(t, napTOML, "nap")
	ctx := context.Background()
	srv := mcpserver.New(mcpserver.Options{ProjectRoot: dir, TokenTTL: time.Millisecond})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	c := &client{t: t, cs: cs}
	p := c.plan("nap")
	time.Sleep(5 * time.Millisecond)
	if env := c.fails("execute_capture_plan", map[string]any{"plan_token": p.PlanToken}, "INVALID_CAPTURE_PLAN"); !strings.Contains(env.Error.Message, "expired") {
		t.Fatalf("expired: %+v", env.Error)
	}
}
