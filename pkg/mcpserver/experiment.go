package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/experiment"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPlanTrials and maxJobTrials bound the trials an experiment plan and
// an experiment job list, so that a default result stays small; the
// totals say how many there are (flameox experiment plan --json lists
// them all).
const (
	maxPlanTrials     = 24
	maxJobTrials      = 8
	maxJobComparisons = 4
)

type experimentInput struct {
	Experiment      string `json:"experiment" jsonschema:"experiment name declared in flameox.toml ([experiments.NAME])"`
	Adapter         string `json:"adapter" jsonschema:"adapter that captures every trial"`
	InvestigationID string `json:"investigation_id,omitempty" jsonschema:"its investigation (default: a new one)"`
	HypothesisID    string `json:"hypothesis_id,omitempty" jsonschema:"hypothesis the experiment tests"`
}

func (in experimentInput) request() capture.ExperimentRequest {
	return capture.ExperimentRequest{Experiment: in.Experiment, Adapter: in.Adapter, InvestigationID: in.InvestigationID,
		HypothesisID: in.HypothesisID, ForMCP: true}
}

// ExperimentPlanResult is plan_experiment's result: the plan (its first
// trials), how many trials it has, and the token that runs it.
type ExperimentPlanResult struct {
	SchemaVersion int              `json:"schema_version"`
	Plan          *experiment.Plan `json:"plan"`
	TrialsTotal   int              `json:"trials_total"`
	Truncated     bool             `json:"truncated"`
	PlanToken     string           `json:"plan_token"`
	ExpiresAt     time.Time        `json:"expires_at"`
	NextSteps     []string         `json:"next_steps"`
}

func (s *server) addExperimentTools() {
	var adapters []string
	for _, a := range all.Registry().All() {
		adapters = append(adapters, a.Name())
	}
	addTool(s, &mcp.Tool{Name: "plan_experiment",
		Description: "Every trial of a declared experiment in run order and a single-use plan_token for start_experiment; runs nothing.",
		Annotations: readOnly("Plan experiment")}, s.planExperiment, enum("adapter", adapters...))
	addTool(s, &mcp.Tool{Name: "get_experiment",
		Description: "A published experiment: design, decision rule, trial outcomes per variant, run sets, and trials in block order (paged).",
		Annotations: readOnly("Get experiment")}, s.getExperiment, limitSchema(listLimit), enum("outcome", inquiry.TerminalOutcomes()...))
	addTool(s, &mcp.Tool{Name: "compare_run_sets",
		Description: "Compare two frozen run sets block by block: median paired ratio, its CI, the decision against practical_threshold, validity with each mismatch.",
		Annotations: readOnly("Compare run sets")}, s.compareRunSets, enum("polarity", inquiry.LowerIsBetter, inquiry.HigherIsBetter, inquiry.Neutral))
	addTool(s, &mcp.Tool{Name: "start_experiment",
		Description: "Run the experiment a plan_token names as a background job, each trial captured and published; poll get_job; cancel_job records the rest unattempted.",
		Annotations: &mcp.ToolAnnotations{Title: "Start experiment job", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.startExperiment)
}

func (s *server) planExperiment(ctx context.Context, _ *mcp.CallToolRequest, in experimentInput) (*ExperimentPlanResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	req := in.request()
	p, err := s.captureService(ws).PlanExperiment(ctx, req)
	if err != nil {
		return nil, "", err
	}
	now := s.opts.Now()
	req.ExpectedDesign = p.DesignID
	tok, err := s.tokens.issue(now, &planToken{expires: now.Add(s.opts.TokenTTL), workspaceID: ws.Meta.WorkspaceID, experiment: &req})
	if err != nil {
		return nil, "", err
	}
	shown := *p
	res := &ExperimentPlanResult{SchemaVersion: 1, Plan: &shown, TrialsTotal: len(p.Trials), PlanToken: tok, ExpiresAt: now.Add(s.opts.TokenTTL)}
	if len(p.Trials) > maxPlanTrials {
		shown.Trials, res.Truncated = p.Trials[:maxPlanTrials], true
	}
	res.NextSteps = []string{"Call start_experiment with plan_token before " + res.ExpiresAt.UTC().Format(time.RFC3339) + "; it runs once. Then poll get_job."}
	sum := fmt.Sprintf("experiment %s: %d trials in %d blocks (%s, seed %d) under %s", p.Experiment, len(p.Trials), p.Blocks, p.Design, p.RandomSeed, p.Adapter)
	return res, sum, nil
}

func (s *server) startExperiment(ctx context.Context, _ *mcp.CallToolRequest, in executeInput) (*Job, string, error) {
	j, err := s.jobs.reserve(JobExperiment)
	if err != nil {
		return nil, "", err
	}
	tok, ws, err := s.takeToken(in.PlanToken, true)
	if err != nil {
		s.jobs.drop(j)
		return nil, "", err
	}
	req := *tok.experiment
	s.jobs.start(j, func(ctx context.Context, j *job) (func(*Job), error) {
		svc := s.captureService(ws)
		svc.OnRun = func(id string) { s.jobs.update(j, func(v *Job) { v.RunID = id }) }
		onTrial := func(t experiment.Trial, of int) {
			s.jobs.update(j, func(v *Job) {
				v.Phase, v.Step, v.Total = "trial", t.Index, of
				v.Message = fmt.Sprintf("trial %d/%d: %s %s", t.Index, of, t.BlockID, t.Variant)
			})
		}
		res, err := s.publisher(ws).RunExperiment(ctx, svc, req, onTrial)
		if err == nil && res != nil {
			err = capture.ExperimentExit(res)
		}
		var verdicts []compare.VariantComparison
		if err == nil && res != nil && res.Status == capture.ExperimentCompleted {
			s.jobs.update(j, func(v *Job) { v.Phase, v.Message = "comparing", "comparing each variant with the first" })
			verdicts, err = compare.Declared(ctx, ws, res.Plan, res.RunSets)
		}
		return func(v *Job) {
			if res != nil {
				v.Experiment = summarize(res)
			}
			v.Comparisons = verdicts
			if len(verdicts) > maxJobComparisons {
				v.Comparisons, v.ComparisonsTotal = verdicts[:maxJobComparisons], len(verdicts)
			}
		}, err
	})
	_, v, err := s.jobs.get(j.view.JobID)
	if err != nil {
		return nil, "", err
	}
	return &v, fmt.Sprintf("job %s started: experiment %s under %s; poll get_job", v.JobID, req.Experiment, req.Adapter), nil
}

// summarize bounds an experiment's result for a job: without the plan
// (plan_experiment showed it) and with the first maxJobTrials trials;
// trials_total counts them all.
func summarize(res *capture.ExperimentResult) *capture.ExperimentResult {
	sum := *res
	sum.Plan = nil
	if len(sum.Trials) > maxJobTrials {
		sum.Trials, sum.Truncated = sum.Trials[:maxJobTrials], true
	}
	if len(sum.RunSets) > 0 {
		sum.RunSets = slices.Clone(sum.RunSets)
		for i := range sum.RunSets {
			sum.RunSets[i].MembersJSON = ""
		}
		sum.Limitations = append(slices.Clone(sum.Limitations), "run_sets leave out members_json here: get_run_set lists the members")
	}
	return &sum
}

func (s *server) getExperiment(ctx context.Context, _ *mcp.CallToolRequest, in query.GetExperimentRequest) (*query.ExperimentDetail, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.GetExperiment(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, fmt.Sprintf("experiment %s: %d variant(s), %d run set(s); %d of %d trial(s) shown", res.ExperimentID, len(res.Variants), len(res.RunSets), res.Returned, res.Total), nil
}

func (s *server) compareRunSets(ctx context.Context, _ *mcp.CallToolRequest, in compare.ConfirmRequest) (*compare.Comparison, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := compare.Confirm(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	sum := fmt.Sprintf("%s: %s, %s, %d paired blocks", res.Metric, res.Decision, res.Validity, res.Pairs)
	return res, sum, compare.Exit(res)
}
