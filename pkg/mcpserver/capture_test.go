package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/contain"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const napTOML = `schema_version = 1
[workloads.nap]
argv = ["/bin/sleep", "0.3"]
timeout_seconds = 10
[workloads.other]
argv = ["/bin/true"]
timeout_seconds = 5
`

// captureProject writes flameox.toml, approves the named workloads as a
// human would on the CLI, and keeps required_for_mcp containment when
// Bubblewrap is installed (it must be under CI).
func captureProject(t *testing.T, toml string, approve ...string) string {
	t.Helper()
	dir := project(t)
	if err := os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(filepath.Join(dir, ".diagnostics"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range approve {
		wl, _, err := workload.Lookup(ws, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := workload.Approve(context.Background(), ws, wl, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if contain.Bwrap() == "" {
		testenv.Degrade(t, "bwrap", "not installed", "MCP captures run uncontained")
		setContainment(t, dir, "preferred")
	}
	return dir
}

func setContainment(t *testing.T, dir, policy string) {
	t.Helper()
	path := filepath.Join(dir, ".diagnostics", "config.toml")
	b, _ := os.ReadFile(path)
	out := strings.Replace(string(b), `containment = "required_for_mcp"`, `containment = "`+policy+`"`, 1)
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

type planResult struct {
	PlanToken string   `json:"plan_token"`
	NextSteps []string `json:"next_steps"`
	Plan      struct {
		Argv     []string `json:"argv"`
		Workload struct {
			Approval string `json:"approval"`
		} `json:"workload"`
	} `json:"plan"`
}

func (c *client) plan(name string) planResult {
	c.t.Helper()
	var p planResult
	env := c.ok("plan_capture", map[string]any{"adapter": "process", "workload": name}, &p)
	if p.PlanToken == "" || len(p.Plan.Argv) != 0 || strings.Contains(string(env.raw), "/bin/") {
		c.t.Fatalf("plan leaks the command or has no token: %s", env.raw)
	}
	return p
}

// TestCaptureWithProgress: plan, execute with progress, then the token is
// spent; unknown tokens, edits after planning and unapproved workloads are
// refused before anything runs.
func TestCaptureWithProgress(t *testing.T) {
	dir := captureProject(t, napTOML, "nap")
	var mu sync.Mutex
	var progress []*mcp.ProgressNotificationParams
	c := connect(t, dir, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, r.Params)
	}})
	p := c.plan("nap")
	call := &mcp.CallToolParams{Name: "execute_capture_plan", Arguments: map[string]any{"plan_token": p.PlanToken}}
	call.SetProgressToken("capture-1")
	env := c.callCtx(context.Background(), call)
	var res struct {
		Run            run.Manifest `json:"run"`
		CorpusCommitID string       `json:"corpus_commit_id"`
	}
	if !env.OK || json.Unmarshal(env.Result, &res) != nil || res.Run.ExecutionStatus != run.ExecSucceeded || res.CorpusCommitID == "" {
		t.Fatalf("capture: %s", env.raw)
	}
	if strings.Contains(string(env.raw), "/bin/sleep") || strings.Contains(string(env.raw), `"PATH"`) || len(res.Run.Command.Argv) != 0 {
		t.Fatalf("the result leaks the command or environment names: %s", env.raw)
	}
	if contain.Bwrap() != "" && (res.Run.Containment == nil || res.Run.Containment.State != contain.Contained) {
		t.Fatalf("an MCP capture ran uncontained: %+v", res.Run.Containment)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		last := 0.0
		if n > 0 {
			last = progress[n-1].Progress
		}
		mu.Unlock()
		if last == 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	var phases []string
	for i, pr := range progress {
		if pr.Total != 5 || (i > 0 && pr.Progress <= progress[i-1].Progress) || pr.ProgressToken != "capture-1" {
			t.Errorf("progress %d not on one increasing 0..5 scale: %+v", i, pr)
		}
		// A phase is sent again while it lasts (Options.ProgressInterval).
		if ph := strings.SplitN(pr.Message, ":", 2)[0]; len(phases) == 0 || phases[len(phases)-1] != ph {
			phases = append(phases, ph)
		}
	}
	mu.Unlock()
	if got := strings.Join(phases, ","); got != "planning,capturing,registering,publishing,completed" {
		t.Fatalf("phases %s", got)
	}

	if env := c.fails("execute_capture_plan", map[string]any{"plan_token": p.PlanToken}, "INVALID_CAPTURE_PLAN"); !strings.Contains(env.Error.Message, "already used") {
		t.Fatalf("replay: %+v", env.Error)
	}
	c.fails("execute_capture_plan", map[string]any{"plan_token": "fxplan_0123"}, "INVALID_CAPTURE_PLAN")

	// Edited after planning: refused, and nothing ran.
	p = c.plan("nap")
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(strings.Replace(napTOML, "timeout_seconds = 10", "timeout_seconds = 11", 1)), 0o644)
	env = c.fails("execute_capture_plan", map[string]any{"plan_token": p.PlanToken}, "INVALID_CAPTURE_PLAN")
	if !strings.Contains(env.Error.Details["changed"], "workload definition") {
		t.Fatalf("edit: %+v", env.Error)
	}
	// Unapproved: the plan says how to get approval; execution is refused.
	p = c.plan("other")
	if p.Plan.Workload.Approval == workload.Approved || len(p.NextSteps) == 0 || !strings.Contains(p.NextSteps[0], "flameox workload approve other") {
		t.Fatalf("unapproved plan: %+v", p)
	}
	c.fails("execute_capture_plan", map[string]any{"plan_token": p.PlanToken}, "EXECUTION_REFUSED")
	var st struct {
		Runs struct{ Total int } `json:"runs"`
	}
	c.ok("workspace_status", nil, &st)
	if st.Runs.Total != 1 {
		t.Fatalf("refused captures created runs: %d", st.Runs.Total)
	}
}

// TestCancelKillsProcessTree: cancelling execute_capture_plan kills the
// workload, records a terminal cancelled run, publishes it and releases
// the locks. Containment is off here only because Bubblewrap's PID
// namespace would hide the host pid the test checks.
func TestCancelKillsProcessTree(t *testing.T) {
	toml := "schema_version = 1\n[workloads.hang]\nargv = [\"/bin/sh\", \"-c\", \"echo $$ > pid; exec sleep 30\"]\ntimeout_seconds = 60\n"
	dir := captureProject(t, toml, "hang")
	setContainment(t, dir, "never")
	c := connect(t, dir, nil)
	p := c.plan("hang")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_capture_plan", Arguments: map[string]any{"plan_token": p.PlanToken}})
		done <- err
	}()
	pid := 0
	for deadline := time.Now().Add(20 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the workload never wrote its pid")
		}
		b, _ := os.ReadFile(filepath.Join(dir, "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	ws, _ := workspace.Open(filepath.Join(dir, ".diagnostics"))
	store := &run.Store{Root: ws.Root}
	var m *run.Manifest
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ids, _ := store.IDs()
		if len(ids) == 1 {
			m, _ = store.Get(ids[0])
		}
		gone := syscall.Kill(pid, 0) == syscall.ESRCH
		if gone && m != nil && m.Terminal() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after cancel: process %d gone=%v, run %+v", pid, gone, m)
		}
	}
	if m.ExecutionStatus != run.ExecCancelled || m.Lease != nil {
		t.Fatalf("run after cancel: execution %s capture %s lease %v", m.ExecutionStatus, m.CaptureStatus, m.Lease)
	}
	lctx, lcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer lcancel()
	release, err := ws.Locks().Lock(lctx, lock.Write, false)
	if err != nil {
		t.Fatalf("the write lock was not released: %v", err)
	}
	release()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var runs struct {
			Runs []struct {
				RunID           string `json:"run_id"`
				ExecutionStatus string `json:"execution_status"`
			} `json:"runs"`
		}
		c.ok("list_runs", nil, &runs)
		if len(runs.Runs) == 1 && runs.Runs[0].ExecutionStatus == run.ExecCancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled run was not published: %+v", runs)
		}
	}
}
