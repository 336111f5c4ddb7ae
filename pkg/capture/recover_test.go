package capture

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lease"
	"github.com/flameox/flameox/pkg/run"
)

// deadOwner names a process that is provably gone: this process's pid and
// boot with another start time.
func deadOwner(t *testing.T) *run.Lease {
	t.Helper()
	self, err := lease.Self()
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	self.StartTime++
	return &run.Lease{Owner: self, HeartbeatAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
}

func liveOwner(t *testing.T) *run.Lease {
	self, _ := lease.Self()
	return &run.Lease{Owner: self, HeartbeatAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
}

func createRun(t *testing.T, runs *run.Store, typ, exec string, l *run.Lease, at time.Time) run.Manifest {
	t.Helper()
	m := run.Manifest{RunID: run.NewID(), RunType: typ, CreatedAt: at, UpdatedAt: at, ExecutionStatus: exec,
		CaptureStatus: run.CapturePending, ValidationStatus: run.ValidationNotRequested, Lease: l}
	if err := runs.Create(m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRecoverIsolation: one recovery pass over a workspace holding every
// kind of crash leftover handles each run on its own: a wedged projection
// is rebuilt, dead owners' runs are closed (a capture killed between
// planned and running included), an empty run directory is removed, a
// damaged one quarantined, a run of a newer flameox reported, and a live
// run left alone. Nothing stops the pass, and a second pass finds nothing.
func TestRecoverIsolation(t *testing.T) {
	s := newService(t)
	runs := &run.Store{Root: s.WS.Root}
	now := time.Now().UTC()

	// An import killed between its registered revision and the projection.
	wedged := createRun(t, runs, run.TypeImport, run.ExecNotApplicable, deadOwner(t), now)
	reg := wedged.Clone()
	reg.Revision, reg.CaptureStatus, reg.Lease, reg.Reason = 1, run.CaptureRegistered, nil, "registered"
	if err := runs.Append(&wedged, reg); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(runs.Dir(wedged.RunID), "manifest.json"))
	os.Link(filepath.Join(runs.Dir(wedged.RunID), "revisions", "00000000.json"), filepath.Join(runs.Dir(wedged.RunID), "manifest.json"))

	deadImport := createRun(t, runs, run.TypeImport, run.ExecNotApplicable, deadOwner(t), now)
	planned := createRun(t, runs, run.TypeExecution, run.ExecPlanned, deadOwner(t), now)
	legacy := createRun(t, runs, run.TypeExecution, run.ExecPlanned, nil, now.Add(-2*run.LeaselessStaleAfter))
	young := createRun(t, runs, run.TypeExecution, run.ExecPlanned, nil, now)
	live := createRun(t, runs, run.TypeExecution, run.ExecPlanned, liveOwner(t), now)

	empty := run.NewID()
	os.MkdirAll(filepath.Join(runs.Dir(empty), "revisions"), 0o700)
	damaged := createRun(t, runs, run.TypeImport, run.ExecNotApplicable, deadOwner(t), now)
	os.WriteFile(filepath.Join(runs.Dir(damaged.RunID), "revisions", "00000001.json"), []byte("{\"schema_"), 0o600)
	newer := createRun(t, runs, run.TypeImport, run.ExecNotApplicable, deadOwner(t), now)
	os.WriteFile(filepath.Join(runs.Dir(newer.RunID), "revisions", "00000001.json"), []byte(`{"schema_version": 99}`), 0o600)

	res, err := s.RecoverWith(context.Background(), RecoverOptions{Published: map[string]int{}})
	if err != nil {
		t.Fatalf("recover stopped: %v", err)
	}
	ids := func(rs []RecoveredRun) map[string]bool {
		out := map[string]bool{}
		for _, r := range rs {
			out[r.RunID] = true
		}
		return out
	}
	closed := ids(res.Closed)
	for name, id := range map[string]string{"dead import": deadImport.RunID, "planned capture": planned.RunID, "legacy": legacy.RunID} {
		if !closed[id] {
			t.Errorf("%s not closed: %+v", name, res)
		}
		m, err := runs.Get(id)
		if err != nil || m.Open() || m.Error == nil || m.Reason != "crash_recovery" {
			t.Errorf("%s after recover: %+v %v", name, m, err)
		}
	}
	if closed[wedged.RunID] || !ids(res.Repaired)[wedged.RunID] {
		t.Errorf("wedged run: %+v", res)
	}
	if m, _ := runs.Get(wedged.RunID); m == nil || m.CaptureStatus != run.CaptureRegistered {
		t.Errorf("wedged run lost its registration: %+v", m)
	}
	if !ids(res.Removed)[empty] {
		t.Errorf("empty run directory not removed: %+v", res.Removed)
	}
	if !ids(res.Quarantined)[damaged.RunID] {
		t.Errorf("damaged run not quarantined: %+v", res.Quarantined)
	}
	if _, err := os.Stat(filepath.Join(s.WS.Root, "quarantine", "runs", damaged.RunID, "revisions", "00000001.json")); err != nil {
		t.Errorf("quarantined run not kept: %v", err)
	}
	if len(res.Problems) != 1 || res.Problems[0].RunID != newer.RunID {
		t.Errorf("problems %+v", res.Problems)
	}
	if len(res.Live) != 1 || res.Live[0] != live.RunID || len(res.Undecided) != 1 || res.Undecided[0] != young.RunID {
		t.Errorf("live %v undecided %v", res.Live, res.Undecided)
	}
	toPublish := map[string]bool{}
	for _, r := range res.ToPublish {
		toPublish[r.RunID] = true
	}
	for _, id := range []string{wedged.RunID, deadImport.RunID, planned.RunID, legacy.RunID} {
		if !toPublish[id] {
			t.Errorf("run %s not to be published: %+v", id, res.ToPublish)
		}
	}

	again, err := s.RecoverWith(context.Background(), RecoverOptions{})
	if err != nil || len(again.Closed)+len(again.Repaired)+len(again.Removed)+len(again.Quarantined) != 0 || len(again.Problems) != 1 {
		t.Fatalf("second pass: %+v %v", again, err)
	}
}

func TestQuarantineOnUnpublishableArtifact(t *testing.T) {
	s := newService(t)
	runs := &run.Store{Root: s.WS.Root}
	good := createRun(t, runs, run.TypeImport, run.ExecNotApplicable, nil, time.Now())
	bad := createRun(t, runs, run.TypeImport, run.ExecNotApplicable, nil, time.Now())
	for _, m := range []*run.Manifest{&good, &bad} {
		n := m.Clone()
		n.Revision, n.CaptureStatus, n.Reason = 1, run.CaptureRegistered, "registered"
		if err := runs.Append(m, n); err != nil {
			t.Fatal(err)
		}
	}
	var calls [][]RunRevision
	publish := func(ctx context.Context, refs []RunRevision) (string, error) {
		calls = append(calls, append([]RunRevision(nil), refs...))
		for _, r := range refs {
			if m, _ := runs.Revision(r.RunID, r.Revision); r.RunID == bad.RunID && m.CaptureStatus != run.CaptureQuarantined {
				return "", fault.New(fault.ArtifactParseFailed, "not a profile").ForRun(bad.RunID)
			}
		}
		return "sha256:c", nil
	}
	out, err := s.PublishQuarantining(context.Background(), publish,
		[]RunRevision{{good.RunID, 1}, {bad.RunID, 1}})
	if err != nil || out.CommitID != "sha256:c" || len(out.Published) != 2 || len(out.Quarantined) != 1 {
		t.Fatalf("outcome %+v %v (calls %v)", out, err, calls)
	}
	m, _ := runs.Get(bad.RunID)
	if m.CaptureStatus != run.CaptureQuarantined || m.Error == nil || m.Error.Code != fault.ArtifactParseFailed {
		t.Fatalf("bad run %+v", m)
	}
	// A failure that is no run's fault is returned as it is.
	_, err = s.PublishQuarantining(context.Background(), func(context.Context, []RunRevision) (string, error) {
		return "", fault.New(fault.StorageFull, "disk full")
	}, []RunRevision{{good.RunID, 1}})
	if !fault.Is(err, fault.StorageFull) {
		t.Fatalf("storage failure: %v", err)
	}
}
