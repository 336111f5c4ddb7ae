package publish

import (
	"context"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/experiment"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/run"
)

// RunExperiment runs a declared experiment through svc and publishes
// every record as it happens, the way flameox and the MCP server run
// experiments in process: the investigation, experiment and variants
// before the first trial, each block's runs once the block has run (a run
// whose artifacts cannot be extracted is quarantined, and its trial says
// so), then the block's trials, and last one frozen run set per variant,
// pinned at the commit that holds every run. Publications
// go on after a cancellation, so a cancelled experiment is closed with
// every trial recorded. onTrial, when set, hears each trial as it starts.
func (p *Publisher) RunExperiment(ctx context.Context, svc *capture.Service, req capture.ExperimentRequest, onTrial func(experiment.Trial, int)) (*capture.ExperimentResult, error) {
	wctx := context.WithoutCancel(ctx)
	commit := ""
	inq := func(bodies []any) error {
		res, err := p.PublishInquiry(wctx, bodies)
		if err == nil {
			commit = res.CommitID
		}
		return err
	}
	sink := capture.ExperimentSink{
		Declared: inq,
		// One generation for a block's runs, one for its trials: a
		// generation per trial would make the corpus pay for many tiny
		// generations (and their compaction) on every experiment.
		Runs: func(runs []*capture.Result) error {
			if len(runs) == 0 {
				return nil
			}
			refs := make([]capture.RunRevision, len(runs))
			for i, r := range runs {
				refs[i] = capture.RunRevision{RunID: r.Run.RunID, Revision: r.Run.Revision}
			}
			out, err := svc.PublishQuarantining(wctx, For(p), refs)
			if err != nil {
				return err
			}
			store := &run.Store{Root: p.WS.Root}
			for _, q := range out.Quarantined {
				for _, r := range runs {
					if r.Run.RunID == q.RunID {
						m, err := store.Get(q.RunID)
						if err != nil {
							return err
						}
						r.Run = m
					}
				}
			}
			for _, r := range runs {
				r.CorpusCommitID = out.CommitID
			}
			commit = out.CommitID
			return nil
		},
		Trials: func(ts []inquiry.Trial) error {
			bodies := make([]any, len(ts))
			for i := range ts {
				bodies[i] = &ts[i]
			}
			return inq(bodies)
		},
		Trial: onTrial,
	}
	res, err := svc.RunExperiment(ctx, req, sink)
	if err != nil {
		return nil, err
	}
	sets, err := capture.VariantRunSets(wctx, p.WS.Root, res, false)
	if err != nil {
		return res, err
	}
	if len(sets) > 0 {
		bodies := make([]any, len(sets))
		for i := range sets {
			bodies[i] = &sets[i]
		}
		if err := inq(bodies); err != nil {
			return res, err
		}
	}
	res.RunSets, res.CorpusCommitID = sets, commit
	return res, nil
}

// CloseExperiment publishes what recovery found of an experiment whose
// process died: its unpublished trials, closed, and one run set per
// variant, then closes its journal. It returns the commit.
func (p *Publisher) CloseExperiment(ctx context.Context, svc *capture.Service, e capture.RecoveredExperiment) (string, error) {
	var bodies []any
	for i := range e.Trials {
		bodies = append(bodies, &e.Trials[i])
	}
	sets, err := capture.VariantRunSets(ctx, p.WS.Root, e.Result, false)
	if err != nil {
		return "", err
	}
	for i := range sets {
		bodies = append(bodies, &sets[i])
	}
	commit := ""
	if len(bodies) > 0 {
		res, err := p.PublishInquiry(ctx, bodies)
		if err != nil {
			return "", err
		}
		commit = res.CommitID
	}
	return commit, svc.CloseJournal(e.ExperimentID, "recovered")
}
