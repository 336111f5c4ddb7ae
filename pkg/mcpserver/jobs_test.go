package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/mcpserver"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gateTOML declares workloads that wait until the test creates a file in
// the project root (so the tests wait on behaviour, not on time), and one
// that sleeps far longer than any test.
const gateTOML = `schema_version = 1
[workloads.gated]
argv = ["/bin/sh", "-c", "while [ ! -e gate ]; do sleep 0.05; done"]
timeout_seconds = 120
[workloads.long]
argv = ["/bin/sleep", "300"]
timeout_seconds = 600
`

// job is the part of a Job the tests read.
type job struct {
	JobID     string `json:"job_id"`
	Kind      string `json:"kind"`
	Status    string `json:"status"`
	Terminal  bool   `json:"terminal"`
	Phase     string `json:"phase"`
	Message   string `json:"message"`
	ElapsedMs int64  `json:"elapsed_ms"`
	RunID     string `json:"run_id"`
	Capture   *struct {
		Run            run.Manifest `json:"run"`
		CorpusCommitID string       `json:"corpus_commit_id"`
	} `json:"capture"`
	Error *struct {
		Code  string `json:"code"`
		RunID string `json:"run_id"`
	} `json:"error"`
	NextSteps []string `json:"next_steps"`
	NextTools []struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	} `json:"next_tools"`
}

// connectInProcess runs mcpserver.Serve with opts on pipes (the real
// stdio transport, in this process) and connects the go-sdk client.
func connectInProcess(t *testing.T, dir string, opts mcpserver.Options, copts *mcp.ClientOptions) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	opts.ProjectRoot = dir
	done := make(chan error, 1)
	go func() {
		err := mcpserver.Serve(context.Background(), opts, inR, outW)
		outW.Close()
		done <- err
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "flameox-test", Version: "1"}, copts).
		Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(90 * time.Second):
			t.Error("the server did not end after stdin closed")
		}
	})
	return &client{t: t, cs: cs}
}

// pollJob calls get_job until until(job) holds, or fails after a generous
// deadline.
func (c *client) pollJob(id string, what string, until func(job) bool) job {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var j job
		c.ok("get_job", map[string]any{"job_id": id}, &j)
		if until(j) {
			return j
		}
		if j.Terminal || time.Now().After(deadline) {
			c.t.Fatalf("job never %s: %+v", what, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCaptureJob: start_capture returns at once with a job; get_job names
// the run while the workload still runs, and the capture result once it
// ends; the run is published.
func TestCaptureJob(t *testing.T) {
	dir := captureProject(t, gateTOML, "gated")
	c := connect(t, dir, nil)
	var started job
	env := c.ok("start_capture", map[string]any{"plan_token": c.plan("gated").PlanToken}, &started)
	if started.JobID == "" || started.Kind != "capture" || started.Terminal || !strings.Contains(env.text, started.JobID) {
		t.Fatalf("start_capture: %s", env.raw)
	}
	// The workload waits for the gate, so the job is running here.
	running := c.pollJob(started.JobID, "named its run", func(j job) bool { return j.RunID != "" && j.Phase == "capturing" })
	if running.Status != "running" || running.Capture != nil || len(running.NextTools) != 2 || running.NextTools[0].Tool != "get_job" || running.NextTools[0].Arguments["job_id"] != started.JobID {
		t.Fatalf("running job: %+v", running)
	}
	if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var done job
	for deadline := time.Now().Add(90 * time.Second); !done.Terminal; {
		if time.Now().After(deadline) {
			t.Fatalf("the job did not end: %+v", done)
		}
		c.ok("get_job", map[string]any{"job_id": started.JobID, "wait_seconds": 5}, &done)
	}
	if done.Status != "succeeded" || done.Error != nil || done.Capture == nil || done.Capture.Run.RunID != running.RunID ||
		done.Capture.Run.ExecutionStatus != run.ExecSucceeded || done.Capture.CorpusCommitID == "" || done.RunID != running.RunID ||
		len(done.NextTools) == 0 || done.NextTools[0].Tool != "analyze_hotspots" || done.NextTools[0].Arguments["input"] != done.RunID {
		t.Fatalf("finished job: %+v", done)
	}
	var runs struct {
		Runs []struct {
			RunID string `json:"run_id"`
		} `json:"runs"`
	}
	c.ok("list_runs", nil, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].RunID != done.RunID {
		t.Fatalf("list_runs after the job: %+v", runs)
	}
	c.fails("get_job", map[string]any{"job_id": "job_0000"}, "NOT_FOUND")
}

// TestCancelJob: cancel_job on a long capture returns the job terminal
// and cancelled, with the run id, and the run is recorded as cancelled.
func TestCancelJob(t *testing.T) {
	dir := captureProject(t, gateTOML, "long")
	c := connect(t, dir, nil)
	var started job
	c.ok("start_capture", map[string]any{"plan_token": c.plan("long").PlanToken}, &started)
	running := c.pollJob(started.JobID, "started capturing", func(j job) bool { return j.Phase == "capturing" })
	var cancelled job
	c.ok("cancel_job", map[string]any{"job_id": started.JobID}, &cancelled)
	if !cancelled.Terminal || cancelled.Status != "cancelled" || cancelled.RunID == "" || cancelled.RunID != running.RunID ||
		cancelled.Error == nil || cancelled.Error.RunID != cancelled.RunID {
		t.Fatalf("cancel_job: %+v", cancelled)
	}
	if cancelled.Capture == nil || cancelled.Capture.Run.ExecutionStatus != run.ExecCancelled {
		t.Fatalf("cancelled job's capture: %+v", cancelled.Capture)
	}
	var again job
	c.ok("get_job", map[string]any{"job_id": started.JobID}, &again)
	if again.Status != "cancelled" || again.RunID != cancelled.RunID {
		t.Fatalf("get_job after cancel: %+v", again)
	}
	var got struct {
		Run run.Manifest `json:"run"`
	}
	c.ok("get_run", map[string]any{"run_id": cancelled.RunID}, &got)
	if got.Run.ExecutionStatus != run.ExecCancelled || !got.Run.Terminal() {
		t.Fatalf("the cancelled job's run: %+v", got.Run)
	}
}

// TestJobLimit: beyond Options.MaxRunningJobs start_capture refuses,
// retryably, without spending the plan token.
func TestJobLimit(t *testing.T) {
	dir := captureProject(t, gateTOML, "gated")
	c := connectInProcess(t, dir, mcpserver.Options{MaxRunningJobs: 1}, nil)
	var first job
	c.ok("start_capture", map[string]any{"plan_token": c.plan("gated").PlanToken}, &first)
	tok := c.plan("gated").PlanToken
	env := c.fails("start_capture", map[string]any{"plan_token": tok}, "EXECUTION_REFUSED")
	if !strings.Contains(string(env.raw), `"retryable":true`) || len(env.Error.Remediation) == 0 || !strings.Contains(env.Error.Remediation[0], "cancel_job") {
		t.Fatalf("refusal: %s", env.raw)
	}
	c.ok("cancel_job", map[string]any{"job_id": first.JobID}, nil)
	var second job
	c.ok("start_capture", map[string]any{"plan_token": tok}, &second)
	if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.pollJob(second.JobID, "ended", func(j job) bool { return j.Terminal })
}

// TestProgressDuringCapturing: execute_capture_plan repeats the capturing
// phase while the workload runs (here every few milliseconds), on the
// same increasing scale, so a client that resets its timeout on progress
// keeps waiting.
func TestProgressDuringCapturing(t *testing.T) {
	dir := captureProject(t, gateTOML, "gated")
	var mu sync.Mutex
	var progress []*mcp.ProgressNotificationParams
	c := connectInProcess(t, dir, mcpserver.Options{ProgressInterval: 20 * time.Millisecond},
		&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, r.Params)
		}})
	call := &mcp.CallToolParams{Name: "execute_capture_plan", Arguments: map[string]any{"plan_token": c.plan("gated").PlanToken}}
	call.SetProgressToken("p")
	done := make(chan envelope, 1)
	go func() { done <- c.callCtx(context.Background(), call) }()
	capturing := func() (n int, msg string) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range progress {
			if strings.HasPrefix(p.Message, "capturing:") {
				n, msg = n+1, p.Message
			}
		}
		return n, msg
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if n, _ := capturing(); n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no repeated capturing progress: %d", len(progress))
		}
	}
	if _, msg := capturing(); !strings.Contains(msg, "run ") || !strings.Contains(msg, "elapsed") {
		t.Fatalf("capturing progress does not name the run and the time: %q", msg)
	}
	if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if env := <-done; !env.OK {
		t.Fatalf("capture: %s", env.raw)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, p := range progress {
		if p.Total != 5 || i > 0 && p.Progress <= progress[i-1].Progress {
			t.Fatalf("progress %d not on one increasing 0..5 scale: %+v", i, p)
		}
	}
}

// TestNoReplyAfterCancel: after notifications/cancelled for a running
// execute_capture_plan, the server sends no reply for that call (the MCP
// spec: the receiver should not respond), and the cancelled run is
// terminal, published and listed. Raw JSON-RPC lines, because a client
// SDK silently drops a late reply.
func TestNoReplyAfterCancel(t *testing.T) {
	dir := captureProject(t, gateTOML, "long")
	cmd := serverCmd(dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<22)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	reply := func(id int) map[string]any {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("no reply %d", id)
				}
				var m map[string]any
				if json.Unmarshal([]byte(l), &m) == nil && m["id"] == float64(id) {
					return m
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("no reply %d", id)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	reply(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plan_capture","arguments":{"adapter":"process","workload":"long"}}}`)
	var plan struct {
		Result struct {
			StructuredContent struct {
				Result struct {
					PlanToken string `json:"plan_token"`
				} `json:"result"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	b, _ := json.Marshal(reply(2))
	if json.Unmarshal(b, &plan) != nil || plan.Result.StructuredContent.Result.PlanToken == "" {
		t.Fatalf("plan_capture: %s", b)
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_capture_plan","arguments":{"plan_token":%q}}}`,
		plan.Result.StructuredContent.Result.PlanToken))
	ws, err := workspace.Open(filepath.Join(dir, ".diagnostics"))
	if err != nil {
		t.Fatal(err)
	}
	store := &run.Store{Root: ws.Root}
	runState := func() *run.Manifest {
		ids, _ := store.IDs()
		if len(ids) != 1 {
			return nil
		}
		m, _ := store.Get(ids[0])
		return m
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := runState(); m != nil && m.ExecutionStatus == run.ExecRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the capture never ran: %+v", runState())
		}
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"test"}}`)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := runState(); m != nil && m.Terminal() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled run is not terminal: %+v", runState())
		}
	}
	// At the end of input the server answers every call it still owes a
	// reply, then exits: whatever it would send for id 3 is sent by then.
	stdin.Close()
	for l := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["id"] == float64(3) {
			t.Fatalf("a reply was sent for the cancelled call: %.300s", l)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server: %v", err)
	}
	if m := runState(); m.ExecutionStatus != run.ExecCancelled {
		t.Fatalf("run after cancel: %+v", m)
	}
	c := connect(t, dir, nil)
	var runs struct {
		Runs []struct {
			RunID           string `json:"run_id"`
			ExecutionStatus string `json:"execution_status"`
		} `json:"runs"`
	}
	c.ok("list_runs", nil, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].ExecutionStatus != run.ExecCancelled {
		t.Fatalf("list_runs does not show the cancelled run: %+v", runs)
	}
}
