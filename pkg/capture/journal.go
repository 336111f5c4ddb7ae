package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/lease"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/run"
)

// An experiment's journal (experiments/ID.jsonl in the workspace) is the
// registration log that lets a crash be closed: a head naming the owner
// process, the declared records and every planned trial (outcome
// planned), each trial's registration before it runs (pending) and its
// terminal record after, a mark when a block's trial records have been
// handed to the publisher (published in process, or written to
// fox-publish's stream), and a close record. Each append is synced.
//
// The journal's own kinds, beside pkg/inquiry's.
const (
	kindJournalHead  = "experiment_journal"
	kindHandedOver   = "experiment_block_handed_over"
	kindJournalClose = "experiment_closed"
)

type journalLine struct {
	record.Header
	ExperimentID string       `json:"experiment_id,omitempty"`
	Owner        *lease.Owner `json:"owner,omitempty"`
	BlockID      string       `json:"block_id,omitempty"`
	Status       string       `json:"status,omitempty"`
}

type journal struct {
	f  *os.File
	id string
}

// JournalPath is where an experiment's journal lives in a workspace.
func JournalPath(root, experimentID string) string {
	return filepath.Join(root, "experiments", experimentID+".jsonl")
}

func openJournal(root, id string) (*journal, error) {
	path := JournalPath(root, id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "create the experiments directory")
	}
	owner, err := lease.Self()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "create the experiment journal")
	}
	j := &journal{f: f, id: id}
	if err := j.line(journalLine{Header: header(kindJournalHead), ExperimentID: id, Owner: &owner}); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func header(kind string) record.Header {
	return record.Header{Record: kind, SchemaVersion: record.SchemaVersion}
}

// write appends pkg/inquiry records.
func (j *journal) write(bodies ...any) error {
	lines := make([]any, len(bodies))
	for i, b := range bodies {
		lines[i] = inquiry.New("", b)
	}
	return j.append(lines...)
}

func (j *journal) line(l journalLine) error { return j.append(l) }

func (j *journal) handedOver(blockID string) error {
	return j.line(journalLine{Header: header(kindHandedOver), BlockID: blockID})
}

func (j *journal) close(status string) error {
	return j.line(journalLine{Header: header(kindJournalClose), Status: status})
}

func (j *journal) append(lines ...any) error {
	var buf []byte
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return fault.Wrap(fault.InternalError, err, "encode a journal record")
		}
		buf = append(append(buf, b...), '\n')
	}
	if _, err := j.f.Write(buf); err != nil {
		return fault.Wrap(fault.StorageFull, err, "append to the experiment journal")
	}
	if err := j.f.Sync(); err != nil {
		return fault.Wrap(fault.StorageFull, err, "sync the experiment journal")
	}
	return nil
}

func (j *journal) Close() error { return j.f.Close() }

// RecoveredExperiment is an experiment whose process died before it
// closed it: the trial records no publisher was handed, each now
// terminal, and what freezing its run sets needs.
type RecoveredExperiment struct {
	ExperimentID string `json:"experiment_id"`
	Reason       string `json:"reason"`
	// Trials are the records to publish: the trials of every block whose
	// records were never handed to a publisher, closed (a trial that was
	// running is failed, one never started unattempted).
	Trials []inquiry.Trial `json:"trials"`
	// Result holds every trial (with its run) and the variants, for
	// VariantRunSets.
	Result *ExperimentResult `json:"-"`
}

// RecoverExperiments finds the journals of experiments whose owner is
// provably gone and that were never closed, and closes their trials:
// registered and terminal ones keep their outcome, a trial that was
// running is failed (its run, closed by run recovery, is found by the
// trial it names), and one never started is unattempted. Journals of
// live owners, or owners that cannot be checked, are left alone. The
// caller publishes (or writes) the trials, then calls CloseJournal.
func (s *Service) RecoverExperiments(ctx context.Context) ([]RecoveredExperiment, error) {
	dir := filepath.Join(s.WS.Root, "experiments")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []RecoveredExperiment{}, nil
	}
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "read the experiments directory")
	}
	out := []RecoveredExperiment{}
	var runsByTrial map[string]*run.Manifest
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		j, err := readJournal(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if j.closed || j.owner == nil || j.owner.Check() != lease.Gone {
			continue
		}
		if runsByTrial == nil {
			if runsByTrial, err = s.trialRuns(); err != nil {
				return nil, err
			}
		}
		rec := RecoveredExperiment{ExperimentID: j.id, Reason: "the experiment's process ended before it closed the experiment",
			Trials: []inquiry.Trial{}, Result: &ExperimentResult{Experiment: j.experiment, Variants: j.variants}}
		for _, id := range j.order {
			t := j.trials[id]
			switch t.Outcome {
			case inquiry.TrialPlanned:
				t.Outcome, t.FailureClass, t.ValidationStatus = inquiry.TrialUnattempted, "none", run.ValidationNotRequested
				t.ExclusionReason = "the experiment's process ended before this trial started"
			case inquiry.TrialPending:
				t.Outcome, t.FailureClass, t.ValidationStatus = inquiry.TrialFailed, "capture", run.ValidationNotRequested
				t.ExclusionReason = "the experiment's process ended while this trial ran"
				if m := runsByTrial[t.TrialID]; m != nil && m.Terminal() {
					t.RunID, t.ValidationStatus = m.RunID, m.ValidationStatus
				}
			}
			if !j.handed[t.BlockID] {
				rec.Trials = append(rec.Trials, t)
			}
			rec.Result.Trials = append(rec.Result.Trials, TrialResult{Trial: t})
		}
		out = append(out, rec)
	}
	return out, nil
}

// CloseJournal appends the close record to a recovered experiment's
// journal, once its trials are published.
func (s *Service) CloseJournal(experimentID, status string) error {
	f, err := os.OpenFile(JournalPath(s.WS.Root, experimentID), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "open the experiment journal")
	}
	j := &journal{f: f, id: experimentID}
	defer j.Close()
	return j.close(status)
}

// trialRuns maps trial ids to the runs that executed them.
func (s *Service) trialRuns() (map[string]*run.Manifest, error) {
	runs := &run.Store{Root: s.WS.Root}
	ids, err := runs.IDs()
	if err != nil {
		return nil, err
	}
	out := map[string]*run.Manifest{}
	for _, id := range ids {
		m, err := runs.Get(id)
		if err != nil {
			continue // recovery reports damaged runs itself
		}
		if m.Trial != nil {
			out[m.Trial.TrialID] = m
		}
	}
	return out, nil
}

type readJournalState struct {
	id         string
	owner      *lease.Owner
	closed     bool
	experiment inquiry.Experiment
	variants   []inquiry.Variant
	trials     map[string]inquiry.Trial
	order      []string
	handed     map[string]bool
}

// readJournal reads a journal; a torn last line (a crash mid-append) is
// ignored, any other bad line is an error.
func readJournal(path string) (*readJournalState, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "open the experiment journal")
	}
	defer f.Close()
	st := &readJournalState{trials: map[string]inquiry.Trial{}, handed: map[string]bool{}}
	r := record.NewReader(bufio.NewReader(f), path)
	var bad error
	for r.Scan() {
		if bad != nil {
			return nil, bad // a bad line that was not the last
		}
		raw, ok := r.Record().(*record.Raw)
		if !ok {
			bad = fault.New(fault.WorkspaceInvalid, "experiment journal %s: %v", path, r.Record())
			continue
		}
		switch raw.Record {
		case kindJournalHead, kindHandedOver, kindJournalClose:
			var l journalLine
			if err := raw.Decode(&l); err != nil {
				bad = fault.Wrap(fault.WorkspaceInvalid, err, "experiment journal %s", path)
				continue
			}
			switch raw.Record {
			case kindJournalHead:
				st.id, st.owner = l.ExperimentID, l.Owner
			case kindHandedOver:
				st.handed[l.BlockID] = true
			default:
				st.closed = true
			}
			continue
		}
		body, _, err := inquiry.Decode(raw)
		if err != nil {
			bad = fault.Wrap(fault.WorkspaceInvalid, err, "experiment journal %s", path)
			continue
		}
		switch b := body.(type) {
		case *inquiry.Experiment:
			st.experiment = *b
		case *inquiry.Variant:
			st.variants = append(st.variants, *b)
		case *inquiry.Trial:
			if _, seen := st.trials[b.TrialID]; !seen {
				st.order = append(st.order, b.TrialID)
			}
			st.trials[b.TrialID] = *b
		}
	}
	if st.id == "" {
		return nil, fault.New(fault.WorkspaceInvalid, "experiment journal %s has no head", path)
	}
	return st, nil
}
