package status

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/lease"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// TestStaleMatchesRecovery: status calls stale exactly the open runs that
// `flameox recover` closes (run.OwnerState), so it never warns about a run
// that recovery leaves open, and names the empty run directory recovery
// removes.
func TestStaleMatchesRecovery(t *testing.T) {
	ctx := context.Background()
	res, err := workspace.Init(ctx, t.TempDir(), time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	runs := &run.Store{Root: ws.Root}
	self, err := lease.Self()
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	dead := self
	dead.StartTime++
	now := time.Now().UTC()
	mk := func(l *lease.Owner, at time.Time) string {
		m := run.Manifest{RunID: run.NewID(), RunType: run.TypeExecution, CreatedAt: at, UpdatedAt: at,
			ExecutionStatus: run.ExecPlanned, CaptureStatus: run.CapturePending, ValidationStatus: run.ValidationNotRequested}
		if l != nil {
			m.Lease = &run.Lease{Owner: *l}
		}
		if err := runs.Create(m); err != nil {
			t.Fatal(err)
		}
		return m.RunID
	}
	deadRun := mk(&dead, now)
	liveRun := mk(&self, now.Add(-2*time.Hour))
	youngLeaseless := mk(nil, now.Add(-2*time.Minute))
	oldLeaseless := mk(nil, now.Add(-2*run.LeaselessStaleAfter))
	empty := run.NewID()
	os.MkdirAll(filepath.Join(runs.Dir(empty), "revisions"), 0o700)

	st, err := Collect(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{deadRun: true, liveRun: false, youngLeaseless: false, oldLeaseless: true} {
		if got := slices.Contains(st.StaleRuns, id); got != want {
			t.Errorf("run %s stale %v, want %v (stale: %v)", id, got, want, st.StaleRuns)
		}
	}
	found := false
	for _, w := range st.Warnings {
		found = found || strings.Contains(w, empty) && strings.Contains(w, "flameox recover")
	}
	if !found {
		t.Errorf("no warning names the empty run directory: %v", st.Warnings)
	}
}
