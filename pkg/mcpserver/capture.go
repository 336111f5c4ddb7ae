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
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type planInput struct {
	Adapter    string            `json:"adapter" jsonschema:"capture adapter (list_capabilities says which are available); process records the process outcome only"`
	Workload   string            `json:"workload" jsonschema:"declared workload name from flameox.toml (list_workloads)"`
	Parameters map[string]string `json:"parameters,omitempty" jsonschema:"values of the workload's declared parameters, as text (numbers too); omitted ones take their default"`
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
	PlanToken string `json:"plan_token" jsonschema:"the plan_token returned by plan_capture (single use, expires after 5 minutes)"`
}

func (s *server) addCaptureTools() {
	var adapters []string
	for _, a := range all.Registry().All() {
		adapters = append(adapters, a.Name())
	}
	addTool(s, &mcp.Tool{Name: "plan_capture",
		Description: "Plan a capture of a declared workload under an adapter without running anything: approval state, containment, limits, artifacts, warnings. Returns a single-use plan_token for execute_capture_plan.",
		Annotations: readOnly("Plan capture")}, s.planCapture, enum("adapter", adapters...))
	addTool(s, &mcp.Tool{Name: "execute_capture_plan",
		Description: "Run the capture a plan_token names (the workload must be approved by a human on the CLI), record a terminal run with its artifacts, and publish it. Sends progress (planning, capturing, validating, registering, publishing, completed); cancelling kills the process tree and records a cancelled run.",
		Annotations: &mcp.ToolAnnotations{Title: "Execute capture plan", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.executePlan)
}

func (in planInput) request() capture.PlanRequest {
	params := map[string]any{}
	for k, v := range in.Parameters {
		params[k] = v
	}
	return capture.PlanRequest{Adapter: in.Adapter, Workload: in.Workload, Parameters: params, ForMCP: true}
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
	tok, err := s.tokens.take(in.PlanToken, s.opts.Now())
	if err != nil {
		return nil, "", err
	}
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if ws.Meta.WorkspaceID != tok.workspaceID {
		return nil, "", fault.New(fault.InvalidCapturePlan, "the plan was made for workspace %s, not %s", tok.workspaceID, ws.Meta.WorkspaceID).
			Fix("Call plan_capture again.")
	}
	svc := s.captureService(ws)
	progress := progressTo(ctx, req)
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
	svc.Progress = progress
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

// progressTo sends capture progress as MCP progress notifications when the
// client asked for them, on one strictly increasing 0..5 scale.
func progressTo(ctx context.Context, req *mcp.CallToolRequest) func(capture.Progress) {
	tok := req.Params.GetProgressToken()
	var mu sync.Mutex
	last := -1
	total := float64(len(capture.Phases) - 1)
	return func(p capture.Progress) {
		if tok == nil || req.Session == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if p.Step <= last {
			return
		}
		last = p.Step
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok,
			Progress: float64(p.Step), Total: total, Message: p.Phase + ": " + cli.Safe(p.Message)})
	}
}
