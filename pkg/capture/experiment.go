package capture

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/experiment"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/runset"
	"github.com/flameox/flameox/pkg/workload"
)

// ExperimentRequest names a declared experiment and the adapter that
// captures its trials.
type ExperimentRequest struct {
	Experiment string `json:"experiment"`
	Adapter    string `json:"adapter"`
	// InvestigationID is the investigation the experiment belongs to;
	// empty: running it opens one of its own.
	InvestigationID string `json:"investigation_id,omitempty"`
	HypothesisID    string `json:"hypothesis_id,omitempty"`
	// ForMCP marks an experiment an agent started (containment policy).
	ForMCP bool `json:"-"`
	// ExpectedDesign, when set, is the experiment_design_id of a plan
	// shown earlier: running refuses (INVALID_CAPTURE_PLAN) if the
	// declaration changed since.
	ExpectedDesign string `json:"-"`
}

// ExperimentSink hears an experiment's records as they happen: the
// declaration before any trial runs, each trial's run as soon as it is
// terminal (Ran), each block's runs once the block has run (Runs), and
// the block's trial records once its runs are judged and its oracles
// compared (Trials). A sink error stops the experiment (its remaining
// trials are recorded unattempted).
type ExperimentSink struct {
	Declared func(bodies []any) error
	Ran      func(res *Result) error
	// Runs may replace a result's Run with a later revision (a run
	// quarantined when its publication failed); its trial is judged on it.
	Runs   func(runs []*Result) error
	Trials func(trials []inquiry.Trial) error
	// Trial, when set, hears each trial as it starts (for progress).
	Trial func(t experiment.Trial, of int)
}

// TrialResult is one trial's record and what the trial ran.
type TrialResult struct {
	inquiry.Trial
	Block      int               `json:"block"`
	Variant    string            `json:"variant"`
	Parameters map[string]string `json:"parameters"`
}

// ExperimentResult is the outcome of `flameox experiment run`.
type ExperimentResult struct {
	SchemaVersion int                    `json:"schema_version"`
	Plan          *experiment.Plan       `json:"plan"`
	Investigation *inquiry.Investigation `json:"investigation,omitempty"`
	Experiment    inquiry.Experiment     `json:"experiment"`
	Variants      []inquiry.Variant      `json:"variants"`
	Trials        []TrialResult          `json:"trials"`
	// TrialsTotal counts every trial; Truncated says Trials lists only
	// the first (an MCP job's bounded result; the CLI lists them all).
	TrialsTotal int  `json:"trials_total"`
	Truncated   bool `json:"truncated"`
	// Outcomes counts trials by outcome; every planned trial is counted
	// once, failed and unattempted ones included.
	Outcomes map[string]int `json:"outcomes"`
	// Status is completed when every trial was attempted, cancelled when
	// the experiment was stopped (the rest are unattempted).
	Status         string           `json:"status"`
	RunSets        []inquiry.RunSet `json:"run_sets"`
	CorpusCommitID string           `json:"corpus_commit_id,omitempty"`
	Limitations    []string         `json:"limitations"`
}

// Experiment statuses.
const (
	ExperimentCompleted = "completed"
	ExperimentCancelled = "cancelled"
	ExperimentStopped   = "stopped" // a sink or the workspace failed
)

// PlanExperiment plans a declared experiment without side effects.
func (s *Service) PlanExperiment(ctx context.Context, req ExperimentRequest) (*experiment.Plan, error) {
	if _, err := s.Adapters.Get(req.Adapter); err != nil {
		return nil, err
	}
	file, err := workload.Load(s.WS.ProjectRoot)
	if err != nil {
		return nil, err
	}
	e, err := file.Experiment(req.Experiment)
	if err != nil {
		return nil, err
	}
	w, err := file.Workload(e.Workload)
	if err != nil {
		return nil, err
	}
	return experiment.PlanFor(e, w, req.Adapter, req.InvestigationID, req.HypothesisID)
}

// RunExperiment runs every trial of a declared experiment in plan order,
// each one a capture through Execute. Every trial is registered in the
// experiment's journal before it runs and ends in exactly one outcome;
// when ctx is cancelled the running trial's capture is cancelled (its
// process tree killed) and the trials not yet started are recorded
// unattempted, so the experiment closes with every trial accounted for.
// Nothing is published here: the sink does that (fox-capture writes
// records for fox-publish, flameox publishes in process).
func (s *Service) RunExperiment(ctx context.Context, req ExperimentRequest, sink ExperimentSink) (*ExperimentResult, error) {
	p, err := s.PlanExperiment(ctx, req)
	if err != nil {
		return nil, err
	}
	if req.ExpectedDesign != "" && req.ExpectedDesign != p.DesignID {
		return nil, fault.New(fault.InvalidCapturePlan, "experiment %s changed since it was planned", p.Experiment).
			Fix("Plan the experiment again, review it, and run that plan.")
	}
	if err := s.checkOwners(ctx, req); err != nil {
		return nil, err
	}
	// Refuse before anything is recorded when any combination cannot be
	// captured (an unapproved workload, a missing collector).
	wl, err := s.checkCombinations(ctx, req, p)
	if err != nil {
		return nil, err
	}
	res := &ExperimentResult{SchemaVersion: 1, Plan: p, Trials: []TrialResult{}, Outcomes: map[string]int{},
		RunSets: []inquiry.RunSet{}, Limitations: []string{}}
	now := s.now().UTC()
	var bodies []any
	if req.InvestigationID == "" {
		res.Investigation = &inquiry.Investigation{InvestigationID: run.NewID(), ProjectRoot: s.WS.ProjectRoot, Status: "open",
			Question: fmt.Sprintf("Does %s change %s of workload %s?", p.TreatmentParameter, p.PrimaryMetric, p.Workload), CreatedAt: now}
		req.InvestigationID = res.Investigation.InvestigationID
		bodies = append(bodies, res.Investigation)
	}
	res.Experiment, err = experimentRecord(p, wl, req, now)
	if err != nil {
		return nil, err
	}
	bodies = append(bodies, &res.Experiment)
	variants := map[string]string{}
	for _, v := range p.Variants {
		params, _ := digest.Canonical(map[string]string{p.TreatmentParameter: v})
		id, err := experiment.ShortID("va-", map[string]string{"experiment_id": res.Experiment.ExperimentID, "variant": v})
		if err != nil {
			return nil, err
		}
		variants[v] = id
		res.Variants = append(res.Variants, inquiry.Variant{VariantID: id, ExperimentID: res.Experiment.ExperimentID, Name: v,
			EnvironmentRequirementsJSON: "{}", ParametersJSON: string(params)})
	}
	for i := range res.Variants {
		bodies = append(bodies, &res.Variants[i])
	}
	planned := make([]TrialResult, len(p.Trials))
	for i, t := range p.Trials {
		if planned[i], err = trialRecord(p, t, res.Experiment.ExperimentID, variants[t.Variant]); err != nil {
			return nil, err
		}
	}
	j, err := openJournal(s.WS.Root, res.Experiment.ExperimentID)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	// The declaration, then every planned trial: a crash leaves on disk
	// what the experiment meant to run (flameox recover closes it).
	decl := append([]any{}, bodies...)
	for i := range planned {
		t := planned[i].Trial
		t.Outcome, t.ValidationStatus, t.FailureClass = inquiry.TrialPlanned, run.ValidationNotRequested, "none"
		decl = append(decl, &t)
	}
	if err := j.write(decl...); err != nil {
		return nil, err
	}
	if sink.Declared != nil {
		if err := sink.Declared(bodies); err != nil {
			// Nothing ran: the declaration was refused (an unknown
			// investigation, say), so no journal is left behind.
			j.Close()
			os.Remove(JournalPath(s.WS.Root, res.Experiment.ExperimentID))
			return nil, err
		}
	}
	res.Status = ExperimentCompleted
	var stop error // why the remaining trials are not attempted
	for b := 1; b <= p.Blocks; b++ {
		var block []TrialResult
		var outputs []*Result
		for ti, t := range p.Trials {
			if t.Block != b {
				continue
			}
			tr := planned[ti]
			var out *Result
			if stop == nil && ctx.Err() != nil {
				stop = errExperimentCancelled
				res.Status = ExperimentCancelled
			}
			if stop != nil {
				tr.Outcome, tr.FailureClass, tr.ValidationStatus = inquiry.TrialUnattempted, "none", run.ValidationNotRequested
				tr.ExclusionReason = stop.Error()
			} else {
				pending := tr
				pending.Outcome, pending.ValidationStatus, pending.FailureClass = inquiry.TrialPending, run.ValidationPending, "none"
				if err := j.write(&pending.Trial); err != nil {
					return nil, err
				}
				if sink.Trial != nil {
					sink.Trial(t, len(p.Trials))
				}
				place := &run.TrialInfo{ExperimentID: tr.ExperimentID, TrialID: tr.TrialID, VariantID: tr.VariantID, BlockID: tr.BlockID, OrderInBlock: *tr.OrderInBlock}
				out, err = s.Execute(ctx, PlanRequest{Adapter: req.Adapter, Workload: p.Workload, Parameters: anyMap(t.Parameters), ForMCP: req.ForMCP, Trial: place})
				var ab *Abandoned
				switch {
				case errors.As(err, &ab):
					out = &Result{SchemaVersion: 1, Run: ab.Run, ArtifactIDs: []string{}, Limitations: nonNil(ab.Run.Limitations)}
					tr.ExclusionReason = ab.Err.Message
				case err != nil:
					tr.Outcome, tr.FailureClass, tr.ValidationStatus = inquiry.TrialFailed, "capture", run.ValidationNotRequested
					tr.ExclusionReason = fault.As(err).Message
				}
				if out != nil {
					tr.RunID = out.Run.RunID
					if sink.Ran != nil {
						if err := sink.Ran(out); err != nil {
							stop, res.Status = err, ExperimentStopped
						}
					}
					if out.Run.ExecutionStatus == run.ExecCancelled && stop == nil {
						stop, res.Status = errExperimentCancelled, ExperimentCancelled
					}
				}
			}
			block = append(block, tr)
			outputs = append(outputs, out)
		}
		// The block's runs are published before their trials are
		// judged: publication may quarantine a run whose artifacts cannot
		// be extracted, and its trial records what became of it.
		if sink.Runs != nil {
			var done []*Result
			for _, o := range outputs {
				if o != nil {
					done = append(done, o)
				}
			}
			if err := sink.Runs(done); err != nil && stop == nil {
				stop, res.Status = err, ExperimentStopped
			}
		}
		for i, o := range outputs {
			if o == nil {
				continue
			}
			tr := &block[i]
			tr.Outcome, tr.FailureClass = trialOutcome(o.Run)
			tr.ValidationStatus = o.Run.ValidationStatus
			if tr.ExclusionReason == "" && tr.Outcome != inquiry.TrialSucceeded {
				tr.ExclusionReason = "the run ended " + o.Run.ExecutionStatus + ", capture " + o.Run.CaptureStatus + ", validation " + o.Run.ValidationStatus
			}
		}
		if wl.Oracle != nil && wl.Oracle.Strength == workload.StrengthCrossTreatment {
			s.crossTreatment(ctx, p, wl.Oracle.Tolerance, block, outputs)
		}
		trials := make([]inquiry.Trial, len(block))
		for i := range block {
			trials[i] = block[i].Trial
			res.Outcomes[block[i].Outcome]++
			if err := j.write(&block[i].Trial); err != nil {
				return nil, err
			}
		}
		res.Trials = append(res.Trials, block...)
		if sink.Trials != nil {
			if err := sink.Trials(trials); err != nil {
				if stop == nil {
					stop, res.Status = err, ExperimentStopped
				}
			} else if err := j.handedOver(experiment.BlockID(b)); err != nil {
				return nil, err
			}
		}
	}
	if err := j.close(res.Status); err != nil {
		return nil, err
	}
	res.TrialsTotal = len(res.Trials)
	if res.Status == ExperimentStopped {
		res.Limitations = append(res.Limitations, "the experiment stopped early: "+fault.As(stop).Message)
	}
	return res, nil
}

var errExperimentCancelled = errors.New("the experiment was cancelled before this trial started")

// checkCombinations prepares every factor combination once and refuses
// the experiment when one cannot run. It returns the workload.
func (s *Service) checkCombinations(ctx context.Context, req ExperimentRequest, p *experiment.Plan) (*workload.Workload, error) {
	var wl *workload.Workload
	for _, c := range experiment.Cells(p) {
		pre, err := s.prepare(ctx, PlanRequest{Adapter: req.Adapter, Workload: p.Workload, Parameters: anyMap(c), ForMCP: req.ForMCP}, OutputPlaceholder)
		if err != nil {
			return nil, err
		}
		if pre.approved != nil {
			return nil, pre.approved
		}
		wl = pre.wl
	}
	return wl, nil
}

// experimentRecord is the experiments row of plan p, declared before
// any trial runs.
func experimentRecord(p *experiment.Plan, wl *workload.Workload, req ExperimentRequest, now time.Time) (inquiry.Experiment, error) {
	protocol, err := digest.Of(map[string]any{"adapter": p.Adapter, "options": wl.Options, "primary_metric": p.PrimaryMetric})
	if err != nil {
		return inquiry.Experiment{}, fault.Wrap(fault.InternalError, err, "digest the measurement protocol")
	}
	e := inquiry.Experiment{ExperimentID: run.NewID(), InvestigationID: req.InvestigationID, HypothesisID: req.HypothesisID,
		Recipe: experiment.Recipe, RecipeVersion: experiment.RecipeVersion, WorkloadDefinitionID: p.DefinitionID,
		ExperimentDesignID: p.DesignID, MeasurementProtocolID: protocol, PrimaryMetric: p.PrimaryMetric,
		Polarity: p.Polarity, Estimand: p.Estimand, PracticalThreshold: p.PracticalThreshold,
		ConfidenceLevel: p.ConfidenceLevel, RandomSeed: uint64(p.RandomSeed), Role: "primary", CreatedAt: now}
	rule, _ := digest.Canonical(map[string]any{"rule": "fixed_trials", "blocks": p.Blocks, "trials": len(p.Trials), "max_trials": p.MaxTrials})
	e.StoppingRuleJSON = string(rule)
	if wl.Oracle != nil {
		if e.ValidationSpecID, err = digest.Of(wl.Oracle); err != nil {
			return inquiry.Experiment{}, fault.Wrap(fault.InternalError, err, "digest the oracle")
		}
	}
	return e, nil
}

// trialRecord is the trials row of planned trial t, before it runs.
func trialRecord(p *experiment.Plan, t experiment.Trial, experimentID, variantID string) (TrialResult, error) {
	factors, err := digest.Canonical(t.Parameters)
	if err != nil {
		return TrialResult{}, fault.Wrap(fault.InternalError, err, "encode a trial's factors")
	}
	id, err := experiment.ShortID("tr-", map[string]any{"experiment_id": experimentID, "block": t.Block, "order": t.OrderInBlock, "attempt": 1})
	if err != nil {
		return TrialResult{}, err
	}
	order := int32(t.OrderInBlock)
	tr := TrialResult{Block: t.Block, Variant: t.Variant, Parameters: t.Parameters, Trial: inquiry.Trial{
		TrialID: id, ExperimentID: experimentID, VariantID: variantID, CombinationID: t.CombinationID,
		FactorsJSON: string(factors), BlockID: t.BlockID, OrderInBlock: &order, Attempt: 1}}
	if name, i, f, ok := experiment.ScalingValue(p, t); ok {
		tr.ParameterName, tr.ParameterValueInt, tr.ParameterValueFloat = name, i, f
	}
	return tr, nil
}

// trialOutcome reads a terminal run as a trial outcome and failure class.
func trialOutcome(m *run.Manifest) (outcome, class string) {
	switch m.ExecutionStatus {
	case run.ExecSucceeded:
		switch {
		case m.ValidationStatus == run.ValidationFailed || m.ValidationStatus == run.ValidationError:
			return inquiry.TrialOracleFailed, "validation"
		case m.ValidationStatus == run.ValidationCancelled || m.CaptureStatus == run.CaptureCancelled:
			return inquiry.TrialCancelled, "cancelled"
		case m.CaptureStatus != run.CaptureRegistered:
			return inquiry.TrialFailed, "capture"
		}
		return inquiry.TrialSucceeded, "none"
	case run.ExecTimedOut:
		return inquiry.TrialTimedOut, "timeout"
	case run.ExecCancelled:
		return inquiry.TrialCancelled, "cancelled"
	}
	return inquiry.TrialFailed, "process"
}

// crossTreatment compares, within one block, each treatment's oracle
// output with the reference variant's (the first declared) for the same
// values of the other factors. A treatment whose output differs beyond
// tolerance fails its oracle: its trial becomes oracle_failed. When the
// reference did not succeed there is nothing to compare with, and the
// trial says so.
func (s *Service) crossTreatment(ctx context.Context, p *experiment.Plan, tol float64, block []TrialResult, outs []*Result) {
	ref := p.Variants[0]
	others := func(t TrialResult) string {
		var b strings.Builder
		for _, f := range p.Factors[1:] {
			b.WriteString(f.Parameter + "=" + t.Parameters[f.Parameter] + ";")
		}
		return b.String()
	}
	refs := map[string]int{}
	for i, t := range block {
		if t.Variant == ref {
			refs[others(t)] = i
		}
	}
	for i := range block {
		t := &block[i]
		if t.Variant == ref || t.Outcome != inquiry.TrialSucceeded {
			continue
		}
		r, ok := refs[others(*t)]
		if !ok || block[r].Outcome != inquiry.TrialSucceeded || outs[r] == nil || outs[i] == nil {
			t.ExclusionReason = fmt.Sprintf("cross-treatment equivalence not checked: the %s trial of %s did not succeed", ref, t.BlockID)
			continue
		}
		a, errA := s.oracleOutput(ctx, outs[r].Run.RunID)
		b, errB := s.oracleOutput(ctx, outs[i].Run.RunID)
		if err := errors.Join(errA, errB); err != nil {
			t.Outcome, t.FailureClass = inquiry.TrialOracleFailed, "cross_treatment"
			t.ExclusionReason = "cross-treatment equivalence could not be checked: " + fault.As(err).Message
			continue
		}
		if why := equivalent(a, b, tol); why != "" {
			t.Outcome, t.FailureClass = inquiry.TrialOracleFailed, "cross_treatment"
			t.ExclusionReason = fmt.Sprintf("its oracle output differs from the %s trial's in %s (tolerance %g): %s", ref, t.BlockID, tol, why)
		}
	}
}

func (s *Service) oracleOutput(ctx context.Context, runID string) (string, error) {
	page, err := ReadOutput(ctx, s.WS, OutputRequest{RunID: runID, Stream: "oracle_stdout", MaxBytes: MaxOutputPage})
	if err != nil {
		return "", err
	}
	if page.Truncated {
		return "", fault.New(fault.ArtifactTooLarge, "the oracle output of run %s is longer than %d bytes", runID, MaxOutputPage)
	}
	return page.Text, nil
}

// equivalent compares two oracle outputs: when both are the same number
// of whitespace-separated numbers, each pair within relative tolerance
// tol; otherwise as text, equal after trimming. It returns why they
// differ, or "".
func equivalent(a, b string, tol float64) string {
	fa, fb := strings.Fields(a), strings.Fields(b)
	na, okA := numbers(fa)
	nb, okB := numbers(fb)
	if okA && okB && len(na) == len(nb) {
		for i := range na {
			scale := math.Max(math.Abs(na[i]), math.Abs(nb[i]))
			if d := math.Abs(na[i] - nb[i]); d > tol*scale {
				return fmt.Sprintf("value %d is %s against %s", i+1, fa[i], fb[i])
			}
		}
		return ""
	}
	if strings.TrimSpace(a) != strings.TrimSpace(b) {
		return fmt.Sprintf("the outputs differ (%d and %d bytes)", len(strings.TrimSpace(a)), len(strings.TrimSpace(b)))
	}
	return ""
}

func numbers(fields []string) ([]float64, bool) {
	if len(fields) == 0 {
		return nil, false
	}
	out := make([]float64, len(fields))
	for i, f := range fields {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ExperimentExit is the exit status of a finished experiment: 0 when every
// trial was attempted (failed trials are results, not errors), 8 when it
// was cancelled, 4 when it stopped early.
func ExperimentExit(res *ExperimentResult) error {
	switch res.Status {
	case ExperimentCancelled:
		return fault.New(fault.ProcessCancelled, "experiment %s was cancelled: %d of %d trials unattempted",
			res.Plan.Experiment, res.Outcomes[inquiry.TrialUnattempted], len(res.Trials))
	case ExperimentStopped:
		return fault.New(fault.ProcessFailed, "experiment %s stopped early: %v", res.Plan.Experiment, res.Limitations)
	}
	return nil
}

// VariantRunSets freezes one run set per variant of a finished
// experiment: every trial of the variant that has a run, whatever its
// outcome (failed trials stay in the denominator; their outcome is on the
// trial), pinned at HEAD. unpublished allows members HEAD does not hold
// yet (fox-capture, whose runs fox-publish publishes later in the same
// stream). A variant none of whose trials ran has no set.
func VariantRunSets(ctx context.Context, root string, res *ExperimentResult, unpublished bool) ([]inquiry.RunSet, error) {
	sets := []inquiry.RunSet{}
	for _, v := range res.Variants {
		var members []inquiry.Member
		for _, t := range res.Trials {
			if t.VariantID == v.VariantID && t.RunID != "" {
				members = append(members, inquiry.Member{RunID: t.RunID, TrialID: t.TrialID})
			}
		}
		if len(members) == 0 {
			continue
		}
		rs, err := runset.Freeze(ctx, root, runset.Request{Members: members, Unpublished: unpublished,
			Selection: runset.Selection{Method: runset.MethodExperiment, Label: v.Name, ExperimentID: res.Experiment.ExperimentID, VariantID: v.VariantID}})
		if err != nil {
			return sets, err
		}
		sets = append(sets, *rs)
	}
	return sets, nil
}

// checkOwners refuses, before anything is recorded, an experiment whose
// named investigation or hypothesis the corpus does not hold: the
// publisher would refuse its declaration, but only after every trial had
// run when fox-capture writes the records for fox-publish.
func (s *Service) checkOwners(ctx context.Context, req ExperimentRequest) error {
	if req.InvestigationID == "" && req.HypothesisID == "" {
		return nil
	}
	release, err := s.WS.Locks().Lock(ctx, lock.Retention, true)
	if err != nil {
		return err
	}
	defer release()
	snap, err := corpus.Pin(s.WS.Root)
	if err != nil {
		return err
	}
	has := func(t *schema.Table, col, id string) (bool, error) {
		found := false
		for _, f := range snap.Files[t.Name] {
			err := schema.Scan(ctx, t, f, []string{col}, func(row []any) error {
				if row[0] == id {
					found = true
				}
				return nil
			})
			if err != nil {
				return false, fault.Wrap(fault.ArtifactIntegrityFailed, err, "read the %s of commit %s", t.Name, snap.Commit.CommitID)
			}
		}
		return found, nil
	}
	if req.InvestigationID != "" {
		ok, err := has(schema.Investigations, "investigation_id", req.InvestigationID)
		if err != nil {
			return err
		}
		if !ok {
			return fault.New(fault.NotFound, "investigation %s does not exist", req.InvestigationID).
				With("investigation_id", req.InvestigationID).
				FixSteps("List investigations with %s, or leave the investigation out to open one.",
					fault.Step{Command: "flameox investigations list", Tool: "list_investigations"})
		}
	}
	if req.HypothesisID != "" {
		ok, err := has(schema.Hypotheses, "hypothesis_id", req.HypothesisID)
		if err != nil {
			return err
		}
		if !ok {
			return fault.New(fault.NotFound, "hypothesis %s does not exist", req.HypothesisID).With("hypothesis_id", req.HypothesisID)
		}
	}
	return nil
}
