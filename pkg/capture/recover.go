package capture

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
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
	// StagingRemoved lists abandoned staging directories removed.
	StagingRemoved []string `json:"staging_removed"`
}

// RecoveredRun is one closed run.
type RecoveredRun struct {
	RunID  string `json:"run_id"`
	Reason string `json:"reason"`
}

// Recover closes runs whose lease is provably gone (owner pid, start time
// and boot id no longer name a running process) and removes staging whose
// owner is gone. A run whose owner is alive, or cannot be checked, is left
// alone: recovery never trusts a pid alone and never closes live work.
func (s *Service) Recover(ctx context.Context) (*RecoveryResult, error) {
	res := &RecoveryResult{SchemaVersion: 1, Closed: []RecoveredRun{}, Live: []string{}, Undecided: []string{}, StagingRemoved: []string{}}
	runs := &run.Store{Root: s.WS.Root}
	ids, err := runs.IDs()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		m, err := runs.Get(id)
		if err != nil || (m.CaptureStatus != run.CapturePending && m.CaptureStatus != run.CaptureRunning) {
			continue
		}
		state := lease.Unknown
		if m.Lease != nil {
			state = m.Lease.Owner.Check()
		}
		switch state {
		case lease.Alive:
			res.Live = append(res.Live, id)
			continue
		case lease.Unknown:
			res.Undecided = append(res.Undecided, id)
			continue
		}
		reason := "the process that owned this run is gone (crashed or killed); closed by recovery"
		err = s.locked(ctx, func() error {
			cur, err := runs.Get(id) // recheck under the lock
			if err != nil || cur.Revision != m.Revision {
				return err
			}
			at := s.now()
			next := cur.Clone()
			next.Revision++
			next.UpdatedAt, next.FinishedAt = at, &at
			if cur.ExecutionStatus == run.ExecPlanned || cur.ExecutionStatus == run.ExecRunning {
				next.ExecutionStatus = run.ExecFailed
			}
			next.CaptureStatus = run.CaptureFailed
			if cur.ValidationStatus == run.ValidationPending || cur.ValidationStatus == run.ValidationRunning {
				next.ValidationStatus = run.ValidationCancelled
			}
			next.Lease = nil
			next.Reason = "crash_recovery"
			next.Error = fault.New(fault.ProcessFailed, "%s", reason).ForRun(id)
			next.Limitations = append(next.Limitations, "Closed by recovery: artifacts the crashed process had not registered are lost.")
			return runs.Append(cur, next)
		})
		if err != nil {
			return nil, err
		}
		res.Closed = append(res.Closed, RecoveredRun{RunID: id, Reason: reason})
	}
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
	return res, nil
}
