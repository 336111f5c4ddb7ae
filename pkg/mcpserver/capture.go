package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type planInput struct {
	Adapter    string      `json:"adapter" jsonschema:"capture adapter (list_capabilities); process records the outcome only"`
	Workload   string      `json:"workload" jsonschema:"declared workload name from flameox.toml (list_workloads)"`
	Parameters ParamValues `json:"parameters,omitempty"`
}

// PlanResult is plan_capture's result: the plan without command lines,
// executable paths or environment names, and the token that runs it.
type PlanResult struct {
	SchemaVersion int                  `json:"schema_version"`
	Plan          *capture.CapturePlan `json:"plan"`
	PlanToken     string               `json:"plan_token"`
	ExpiresAt     time.Time            `json:"expires_at"`
	Redacted      []string             `json:"redacted_fields"`
	NextSteps     []string             `json:"next_steps"`
}

type executeInput struct {
	PlanToken string `json:"plan_token" jsonschema:"plan_capture's plan_token (single use, 5 minutes)"`
}

func (s *server) addCaptureTools() {
	var adapters []string
	for _, a := range all.Registry().All() {
		adapters = append(adapters, a.Name())
	}
	addTool(s, &mcp.Tool{Name: "plan_capture",
		Description: "First step of a capture: shows what would run (approval, containment, limits, artifacts) and returns a single-use plan_token; runs nothing.",
		Annotations: readOnly("Plan capture")}, s.planCapture, enum("adapter", adapters...), paramSchema)
	addTool(s, &mcp.Tool{Name: "execute_capture_plan",
		Description: "Run a planned capture and wait for its published run (progress every phase); prefer start_capture when the host times out calls.",
		Annotations: &mcp.ToolAnnotations{Title: "Execute capture plan", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.executePlan)
}

func (in planInput) request() capture.PlanRequest {
	return capture.PlanRequest{Adapter: in.Adapter, Workload: in.Workload, Parameters: in.Parameters.values(), ForMCP: true}
}

func (s *server) planCapture(ctx context.Context, _ *mcp.CallToolRequest, in planInput) (*PlanResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	req := in.request()
	p, err := s.captureService(ws).Plan(ctx, req)
	if err != nil {
		return nil, "", err
	}
	now := s.opts.Now()
	tok, err := s.tokens.issue(now, &planToken{expires: now.Add(s.opts.TokenTTL), workspaceID: ws.Meta.WorkspaceID, req: req, plan: p})
	if err != nil {
		return nil, "", err
	}
	res := &PlanResult{SchemaVersion: 1, Plan: redactPlan(p), PlanToken: tok, ExpiresAt: now.Add(s.opts.TokenTTL),
		Redacted: redactedPlanFields, NextSteps: []string{}}
	sum := fmt.Sprintf("plan for %s under %s: %s, containment %s", p.Workload.Name, p.Adapter, p.Workload.Approval, p.Containment.State)
	if p.Workload.Approval != workload.Approved {
		res.NextSteps = append(res.NextSteps, "Ask the human to review and run `flameox workload approve "+p.Workload.Name+"` in a terminal (agents cannot approve), then call plan_capture again: approval changes the plan.")
		sum += "; not approved, so execute_capture_plan would be refused"
	} else {
		res.NextSteps = append(res.NextSteps, "Call execute_capture_plan with plan_token before "+res.ExpiresAt.UTC().Format(time.RFC3339)+"; it runs once.")
	}
	return res, sum, nil
}

func (s *server) executePlan(ctx context.Context, req *mcp.CallToolRequest, in executeInput) (*capture.Result, string, error) {
	tok, ws, err := s.takePlan(in.PlanToken)
	if err != nil {
		return nil, "", err
	}
	pr := s.progressTo(ctx, req)
	defer pr.stop()
	return s.runPlan(ctx, ws, tok, pr.report, pr.run)
}

// takePlan spends a capture plan's token of this workspace.
func (s *server) takePlan(token string) (*planToken, *workspace.Workspace, error) {
	return s.takeToken(token, false)
}

// takeToken spends a plan token of this workspace, of the kind asked.
func (s *server) takeToken(token string, experiment bool) (*planToken, *workspace.Workspace, error) {
	tok, err := s.tokens.take(token, s.opts.Now(), experiment)
	if err != nil {
		return nil, nil, err
	}
	ws, err := s.workspace()
	if err != nil {
		return nil, nil, err
	}
	if ws.Meta.WorkspaceID != tok.workspaceID {
		return nil, nil, fault.New(fault.InvalidCapturePlan, "the plan was made for workspace %s, not %s", tok.workspaceID, ws.Meta.WorkspaceID).
			Fix("Call plan_capture again.")
	}
	return tok, ws, nil
}

// runPlan runs the capture of a spent plan token and publishes its run:
// execute_capture_plan in the request, start_capture in a job. progress
// hears each phase and onRun the run id once the run is recorded.
func (s *server) runPlan(ctx context.Context, ws *workspace.Workspace, tok *planToken, progress func(capture.Progress), onRun func(string)) (*capture.Result, string, error) {
	svc := s.captureService(ws)
	progress(capture.Progress{Phase: "planning", Step: 0, Message: "re-checking the plan"})
	cur, err := svc.Plan(ctx, tok.req)
	if err != nil {
		return nil, "", err
	}
	if cur.Digest != tok.plan.Digest {
		changed := planChanges(tok.plan, cur)
		return nil, "", fault.New(fault.InvalidCapturePlan, "the capture plan changed since plan_capture: %s", strings.Join(changed, ", ")).
			With("changed", strings.Join(changed, ",")).With("workload", tok.req.Workload).
			Fix("Call plan_capture again, review the new plan, and execute its token.")
	}
	svc.Progress, svc.OnRun = progress, onRun
	req2 := tok.req
	req2.ExpectedDigest = tok.plan.Digest
	res, err := svc.Execute(ctx, req2)
	var ab *capture.Abandoned
	if errors.As(err, &ab) {
		// The run is terminal; publish it so it is not hidden, then fail.
		s.publisher(ws).PublishRuns(context.WithoutCancel(ctx), []publish.RunRef{{RunID: ab.Run.RunID, Revision: ab.Run.Revision}})
		return nil, "", ab.Err
	}
	if err != nil {
		return nil, "", err
	}
	progress(capture.Progress{Phase: "publishing", Step: 4, Message: "publishing the run"})
	// Publication happens even after a cancellation: the run is terminal
	// and its artifacts are stored; leaving it unpublished would hide it.
	// An artifact that cannot be extracted quarantines the run, which is
	// published so, and the capture fails with that error.
	pub, err := svc.PublishQuarantining(context.WithoutCancel(ctx), publish.For(s.publisher(ws)),
		[]capture.RunRevision{{RunID: res.Run.RunID, Revision: res.Run.Revision}})
	if err != nil {
		fe := fault.As(err)
		if fe.RunID == "" {
			fe.RunID = res.Run.RunID
		}
		return nil, "", fe
	}
	if len(pub.Quarantined) > 0 {
		return nil, "", pub.Errors[res.Run.RunID]
	}
	res.CorpusCommitID = pub.CommitID
	progress(capture.Progress{Phase: "completed", Step: 5, Message: res.Run.ExecutionStatus})
	m := res.Run
	sum := fmt.Sprintf("run %s: execution %s, capture %s, validation %s; %d artifact(s); published commit %s", m.RunID,
		m.ExecutionStatus, m.CaptureStatus, m.ValidationStatus, len(res.ArtifactIDs), corpus.Short(pub.CommitID))
	return redactResult(res), sum, runFailure(m)
}

// runFailure is the error of a recorded capture that did not succeed (the
// result is returned with it), or nil.
func runFailure(m *run.Manifest) error {
	if m.ExecutionStatus == run.ExecSucceeded && m.CaptureStatus == run.CaptureRegistered {
		return nil
	}
	var fe *fault.Error
	if m.Error != nil {
		c := *m.Error
		fe = &c
	} else {
		fe = fault.New(fault.ProcessFailed, "the capture ended with execution %s and capture %s", m.ExecutionStatus, m.CaptureStatus)
	}
	fe.RunID = m.RunID
	return fe
}

// progressReporter sends capture progress as MCP progress notifications
// when the client asked for them, on one strictly increasing 0..5 scale
// (the step of each phase). Every Options.ProgressInterval it sends the
// current phase again with the time elapsed, a little further along
// within the phase, so that a client which resets its request timeout on
// progress (the TypeScript SDK's resetTimeoutOnProgress) keeps waiting
// through a long capturing phase. Once the run is recorded the message
// names its id, so a client that gives up still knows which run to look
// for (list_runs).
type progressReporter struct {
	ctx   context.Context
	req   *mcp.CallToolRequest
	tok   any
	now   func() time.Time
	began time.Time

	mu    sync.Mutex
	cur   *capture.Progress
	runID string
	ticks int // re-sends of cur
	last  float64
	quit  chan struct{}
	done  chan struct{}
}

func (s *server) progressTo(ctx context.Context, req *mcp.CallToolRequest) *progressReporter {
	r := &progressReporter{ctx: ctx, req: req, now: s.opts.Now, began: s.opts.Now(), last: -1}
	if req != nil && req.Session != nil {
		r.tok = req.Params.GetProgressToken()
	}
	if r.tok == nil {
		return r
	}
	r.quit, r.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTicker(s.opts.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-r.quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				r.tick()
			}
		}
	}()
	return r
}

// report sends a new phase; a phase not after the current one is ignored.
func (r *progressReporter) report(p capture.Progress) {
	if r.tok == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil && p.Step <= r.cur.Step {
		return
	}
	r.cur, r.ticks = &p, 0
	r.send(float64(p.Step))
}

// run hears the run id.
func (r *progressReporter) run(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runID = id
}

// tick sends the current phase again, between its step and the next.
func (r *progressReporter) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil || r.cur.Phase == "completed" {
		return
	}
	r.ticks++
	r.send(float64(r.cur.Step) + float64(r.ticks)/float64(r.ticks+1))
}

// send notifies; the caller holds mu.
func (r *progressReporter) send(at float64) {
	if at <= r.last {
		return
	}
	r.last = at
	msg := r.cur.Phase + ": " + cli.Safe(r.cur.Message)
	var extra []string
	if r.runID != "" {
		extra = append(extra, "run "+r.runID)
	}
	extra = append(extra, capture.Elapsed(r.now().Sub(r.began))+" elapsed")
	msg += " (" + strings.Join(extra, ", ") + ")"
	_ = r.req.Session.NotifyProgress(r.ctx, &mcp.ProgressNotificationParams{ProgressToken: r.tok,
		Progress: at, Total: float64(len(capture.Phases) - 1), Message: msg})
}

// stop ends the re-sending.
func (r *progressReporter) stop() {
	if r.quit != nil {
		close(r.quit)
		<-r.done
	}
}
