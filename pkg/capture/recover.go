package capture

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lease"
	"github.com/flameox/flameox/pkg/run"
)

// RecoveryResult is what `flameox recover` did.
type RecoveryResult struct {
	SchemaVersion int `json:"schema_version"`
	// Closed are runs whose owner was provably gone; each got a terminal
	// failed revision with the reason.
	Closed []RecoveredRun `json:"closed"`
	// Live are open runs whose owner still runs (never closed).
	Live []string `json:"live"`
	// Undecided are open runs whose owner could not be checked.
	Undecided []string `json:"undecided"`
	// Repaired are runs whose projection or log was rebuilt from their
	// revisions (a crash between writing a revision and the files derived
	// from it); Reason lists what was rebuilt.
	Repaired []RecoveredRun `json:"repaired"`
	// Removed are run directories that held no revision at all (their
	// creator died, or the disk filled, before revision 0): there was no
	// run to keep.
	Removed []RecoveredRun `json:"removed"`
	// Quarantined are run directories whose newest revision cannot be read;
	// each was moved to quarantine/runs/<id> as it was.
	Quarantined []RecoveredRun `json:"quarantined"`
	// ToPublish are terminal runs the corpus lacks at their newest revision
	// (closed here, or left unpublished by a killed publisher); the caller
	// publishes them.
	ToPublish []RunRevision `json:"to_publish"`
	// Published are the runs the caller published, and CorpusCommitID the
	// commit that published them.
	Published      []string `json:"published"`
	CorpusCommitID string   `json:"corpus_commit_id,omitempty"`
	// Problems are runs recovery could not handle (an I/O error, a run
	// written by a newer flameox): each is left as it is and reported;
	// the pass goes on with the other runs.
	Problems []RunProblem `json:"problems"`
	// StagingRemoved lists abandoned staging directories removed.
	StagingRemoved []string `json:"staging_removed"`
	// TrashResumed are the gc trash ids a crash left half-moved, put back
	// (retention.Resume; flameox recover does it).
	TrashResumed []string `json:"trash_resumed,omitempty"`
	// Experiments are experiments whose process died before closing
	// them, with the trial records the caller publishes (or writes) and
	// then closes the journal (CloseJournal).
	Experiments []RecoveredExperiment `json:"experiments"`
}

// RecoveredRun is one run recovery changed.
type RecoveredRun struct {
	RunID  string `json:"run_id"`
	Reason string `json:"reason"`
	// KilledProcesses counts the leftovers of a dead owner's workload that
	// were killed before its run was closed.
	KilledProcesses int `json:"killed_processes,omitempty"`
}

// RunRevision names one revision of a run.
type RunRevision struct {
	RunID    string `json:"run_id"`
	Revision int    `json:"revision"`
}

// RunProblem is a run recovery left alone, with why.
type RunProblem struct {
	RunID string       `json:"run_id"`
	Error *fault.Error `json:"error"`
}

// RecoverOptions tune a recovery pass.
type RecoverOptions struct {
	// Published maps run ids to the newest revision the corpus holds; when
	// set, terminal runs it lacks (or holds at an older revision) are
	// listed in ToPublish. Nil lists only the runs closed by this pass.
	Published map[string]int
}

// Recover is RecoverWith without options.
func (s *Service) Recover(ctx context.Context) (*RecoveryResult, error) {
	return s.RecoverWith(ctx, RecoverOptions{})
}

// RecoverWith brings every run to a state it can be left in: projections
// and logs are rebuilt from the revisions (the truth), runs whose owner is
// provably gone (owner pid, start time and boot id no longer name a running
// process) get a terminal revision, after the leftovers of their workload
// are killed, run directories without a revision are removed and those
// whose newest revision cannot be read are quarantined, and staging whose
// owner is gone is removed. A run whose owner is alive, or cannot be
// checked, is left alone: recovery never trusts a pid alone and never
// closes live work. One run's failure never stops the pass: it is reported
// in Problems and the others are still handled.
func (s *Service) RecoverWith(ctx context.Context, opts RecoverOptions) (*RecoveryResult, error) {
	res := &RecoveryResult{SchemaVersion: 1, Closed: []RecoveredRun{}, Live: []string{}, Undecided: []string{},
		Repaired: []RecoveredRun{}, Removed: []RecoveredRun{}, Quarantined: []RecoveredRun{}, ToPublish: []RunRevision{},
		Published: []string{}, Problems: []RunProblem{}, StagingRemoved: []string{}, Experiments: []RecoveredExperiment{}}
	runs := &run.Store{Root: s.WS.Root}
	ids, err := runs.IDs()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, fault.Wrap(fault.ProcessCancelled, err, "recovery cancelled")
		}
		if err := s.recoverRun(ctx, runs, id, opts, res); err != nil {
			if fault.Is(err, fault.WriteLockTimeout) || fault.Is(err, fault.ProcessCancelled) || fault.Is(err, fault.StorageFull) {
				return nil, fault.As(err) // not this run's problem: every other run would meet it too
			}
			res.Problems = append(res.Problems, RunProblem{RunID: id, Error: fault.As(err).ForRun(id)})
		}
	}
	s.recoverStaging(res)
	// After the runs: a trial that was running finds its run closed.
	if res.Experiments, err = s.RecoverExperiments(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// recoverRun handles one run; an error is this run's problem.
func (s *Service) recoverRun(ctx context.Context, runs *run.Store, id string, opts RecoverOptions, res *RecoveryResult) error {
	m, fixes, err := runs.Inspect(id)
	if run.Damage(err) != "" || len(fixes) > 0 {
		// Repair (or set aside) under the lock, which every writer of
		// revisions holds: what is found then is no live writer's.
		var damage string
		err = s.locked(ctx, func() error {
			m, fixes, err = runs.Repair(id)
			if damage = run.Damage(err); damage != "" {
				return s.setAside(runs, id, damage, err, res)
			}
			return err
		})
		if damage != "" || err != nil {
			return err
		}
		if len(fixes) > 0 {
			res.Repaired = append(res.Repaired, RecoveredRun{RunID: id, Reason: joinFixes(fixes)})
		}
	}
	if err != nil {
		return err
	}
	if m.Open() {
		state, why := run.OwnerState(m, s.now())
		switch state {
		case lease.Alive:
			res.Live = append(res.Live, id)
			return nil
		case lease.Unknown:
			res.Undecided = append(res.Undecided, id)
			return nil
		}
		closed, err := s.closeRun(ctx, runs, m, why)
		if err != nil || closed == nil {
			return err
		}
		res.Closed = append(res.Closed, *closed)
		if m, err = runs.Get(id); err != nil {
			return err
		}
		res.ToPublish = append(res.ToPublish, RunRevision{RunID: id, Revision: m.Revision})
		return nil
	}
	if opts.Published != nil {
		if rev, ok := opts.Published[id]; !ok || rev < m.Revision {
			res.ToPublish = append(res.ToPublish, RunRevision{RunID: id, Revision: m.Revision})
		}
	}
	return nil
}

// closeRun kills what is left of the workload of a run whose owner is
// gone and appends a terminal revision with the reason. It returns nil
// when the run moved on meanwhile (someone else wrote a revision).
func (s *Service) closeRun(ctx context.Context, runs *run.Store, m *run.Manifest, reason string) (*RecoveredRun, error) {
	out := &RecoveredRun{RunID: m.RunID, Reason: reason}
	err := s.locked(ctx, func() error {
		cur, err := runs.Get(m.RunID) // recheck under the lock
		if err != nil {
			return err
		}
		if cur.Revision != m.Revision {
			out = nil
			return nil
		}
		if child, ok := runs.Child(m.RunID); ok {
			n, err := lease.KillGroup(child)
			if err != nil {
				return fault.Wrap(fault.ProcessFailed, err, "kill the leftovers of run %s's workload", m.RunID).
					Fix("Find and stop the workload's processes (process group " + strconv.Itoa(child.PID) + "), then run `flameox recover` again.")
			}
			out.KilledProcesses = n
		}
		at := s.now()
		next := cur.Clone()
		next.Revision++
		next.UpdatedAt, next.FinishedAt = at, &at
		if cur.ExecutionStatus == run.ExecPlanned || cur.ExecutionStatus == run.ExecRunning {
			next.ExecutionStatus = run.ExecFailed
		}
		if cur.CaptureStatus == run.CapturePending || cur.CaptureStatus == run.CaptureRunning {
			next.CaptureStatus = run.CaptureFailed
		}
		if cur.ValidationStatus == run.ValidationPending || cur.ValidationStatus == run.ValidationRunning {
			next.ValidationStatus = run.ValidationCancelled
		}
		next.Lease = nil
		next.Reason = "crash_recovery"
		next.Error = fault.New(fault.ProcessFailed, "%s", reason).ForRun(m.RunID)
		next.Limitations = append(next.Limitations, "Closed by recovery: artifacts the crashed process had not registered are lost.")
		if out.KilledProcesses > 0 {
			next.Limitations = append(next.Limitations, "Recovery killed "+strconv.Itoa(out.KilledProcesses)+" leftover process(es) of the workload; their output is lost.")
		}
		return runs.Append(cur, next)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// setAside removes a run directory that holds no revision, or moves one
// whose newest revision cannot be read to quarantine/runs/<id>, as it is.
// The caller holds the write lock.
func (s *Service) setAside(runs *run.Store, id, damage string, cause error, res *RecoveryResult) error {
	dir := runs.Dir(id)
	if damage == run.DamageNoRevision {
		if err := os.RemoveAll(dir); err != nil {
			return fault.Wrap(fault.WorkspaceInvalid, err, "remove the empty run directory runs/%s", id)
		}
		if err := durable.SyncDir(filepath.Dir(dir)); err != nil {
			return err
		}
		res.Removed = append(res.Removed, RecoveredRun{RunID: id,
			Reason: "the directory held no revision (its creator stopped, or the disk filled, before the run was recorded); removed"})
		return nil
	}
	qdir := filepath.Join(s.WS.Root, "quarantine", "runs")
	if err := os.MkdirAll(qdir, 0o700); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "create quarantine/runs")
	}
	dst := filepath.Join(qdir, id)
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		dst += "." + time.Now().UTC().Format("20060102T150405Z") + "." + durable.RandomHex(4)
	}
	if err := os.Rename(dir, dst); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "quarantine run %s", id)
	}
	if err := durable.SyncDirs(filepath.Dir(dir), qdir); err != nil {
		return err
	}
	rel, _ := filepath.Rel(s.WS.Root, dst)
	res.Quarantined = append(res.Quarantined, RecoveredRun{RunID: id,
		Reason: fault.As(cause).Message + "; moved to " + filepath.ToSlash(rel)})
	return nil
}

// recoverStaging removes staging directories whose owner is gone.
func (s *Service) recoverStaging(res *RecoveryResult) {
	ents, _ := os.ReadDir(filepath.Join(s.WS.Root, "staging"))
	for _, e := range ents {
		if e.Name() == "duckdb-temp" { // shared parent of readers' spill directories
			continue
		}
		dir := filepath.Join(s.WS.Root, "staging", e.Name())
		b, err := os.ReadFile(filepath.Join(dir, artifact.StagingOwner))
		var o lease.Owner
		gone := false
		switch {
		case err == nil && json.Unmarshal(b, &o) == nil:
			gone = o.Check() == lease.Gone
		case os.IsNotExist(err) || err == nil:
			// No owner, or an unreadable one (the record is not synced, so
			// a power loss can empty it): gone once it has been left alone
			// for a minute.
			if info, ierr := e.Info(); ierr == nil && time.Since(info.ModTime()) > time.Minute {
				gone = true
			}
		}
		if gone && os.RemoveAll(dir) == nil {
			res.StagingRemoved = append(res.StagingRemoved, "staging/"+e.Name())
		}
	}
}

func joinFixes(fixes []string) string {
	out := ""
	for i, f := range fixes {
		if i > 0 {
			out += "; "
		}
		out += f
	}
	return out
}

// Unpublishable reports whether a publication failed because of what one
// run's stored artifact holds (it does not parse, exceeds a decode limit,
// or no longer matches its digest): publishing that run again can never
// succeed, so the run is quarantined instead.
func Unpublishable(err error) bool {
	fe := fault.As(err)
	if fe == nil || fe.RunID == "" {
		return false
	}
	switch fe.Code {
	case fault.ArtifactParseFailed, fault.ArtifactTooLarge, fault.ArtifactIntegrityFailed:
		return true
	}
	return false
}

// Quarantine moves a terminal run whose artifacts could not be published
// to capture_status quarantined, with cause as its error, and returns the
// new revision. A quarantined run is published without extracting
// evidence from its artifacts; their bytes stay stored and registered.
func (s *Service) Quarantine(ctx context.Context, runID string, cause error) (*run.Manifest, error) {
	runs := &run.Store{Root: s.WS.Root}
	fe := fault.As(cause)
	var out *run.Manifest
	err := s.locked(context.WithoutCancel(ctx), func() error {
		cur, err := runs.Get(runID)
		if err != nil {
			return err
		}
		if cur.CaptureStatus == run.CaptureQuarantined {
			out = cur
			return nil
		}
		if cur.Open() {
			return fault.New(fault.InternalError, "run %s is still open and cannot be quarantined", runID).ForRun(runID)
		}
		next := cur.Clone()
		next.Revision++
		next.UpdatedAt = s.now()
		next.CaptureStatus = run.CaptureQuarantined
		next.Reason = "quarantined: " + string(fe.Code)
		e := *fe
		e.RunID = runID
		next.Error = &e
		next.Limitations = append(next.Limitations, "Quarantined: an artifact could not be extracted ("+string(fe.Code)+"); its bytes stay stored and registered, and no evidence was extracted from this run.")
		if err := runs.Append(cur, next); err != nil {
			return err
		}
		out = &next
		return nil
	})
	return out, err
}

// PublishFunc publishes run revisions as one publication and returns the
// commit id.
type PublishFunc func(ctx context.Context, refs []RunRevision) (string, error)

// PublishOutcome is what PublishQuarantining did.
type PublishOutcome struct {
	CommitID  string
	Published []string
	// Quarantined are runs whose artifacts could not be published; each
	// got a quarantined revision, which was published instead. Errors has
	// the publication error of each.
	Quarantined []RecoveredRun
	Errors      map[string]*fault.Error
}

// PublishQuarantining publishes refs; when the publication fails because
// of one run's artifact (see Unpublishable), that run is quarantined and
// the publication retried with its quarantined revision, so one bad
// artifact never keeps the other runs, or its own run, out of the corpus.
// Any other failure is returned as it is.
func (s *Service) PublishQuarantining(ctx context.Context, publish PublishFunc, refs []RunRevision) (*PublishOutcome, error) {
	out := &PublishOutcome{Published: []string{}, Quarantined: []RecoveredRun{}, Errors: map[string]*fault.Error{}}
	refs = append([]RunRevision(nil), refs...)
	for attempt := 0; len(refs) > 0 && attempt <= len(refs); attempt++ {
		commit, err := publish(ctx, refs)
		if err == nil {
			out.CommitID = commit
			for _, r := range refs {
				out.Published = append(out.Published, r.RunID)
			}
			return out, nil
		}
		i := indexOf(refs, fault.As(err).RunID)
		if !Unpublishable(err) || i < 0 {
			return out, err
		}
		m, qerr := s.Quarantine(ctx, refs[i].RunID, err)
		if qerr != nil {
			return out, qerr
		}
		out.Quarantined = append(out.Quarantined, RecoveredRun{RunID: m.RunID, Reason: fault.As(err).Message})
		out.Errors[m.RunID] = fault.As(err)
		refs[i].Revision = m.Revision
	}
	return out, fault.New(fault.InternalError, "publication kept failing after quarantining every run's artifacts")
}

func indexOf(refs []RunRevision, id string) int {
	for i, r := range refs {
		if r.RunID == id && id != "" {
			return i
		}
	}
	return -1
}
