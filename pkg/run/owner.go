package run

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/lease"
)

// LeaselessStaleAfter is how long an open run that records no owner (one
// written by a flameox older than owner records in every open revision)
// may go without a revision before recovery takes its creator for gone.
// Such a run is only ever a capture between planned and running, a step a
// live process leaves within seconds.
const LeaselessStaleAfter = time.Hour

// Open reports whether the run may still move: some machine is not
// terminal. Only recovery closes an open run whose owner is gone.
func (m *Manifest) Open() bool { return !m.Terminal() }

// OwnerState says whether the process that owns the open run m still runs,
// and why it is taken for gone. Every open revision records its owner
// (pid, process start time and boot id: never a pid alone). A run without
// one is gone once it predates the current boot, or once it has gone
// LeaselessStaleAfter without a revision; otherwise it is Unknown.
func OwnerState(m *Manifest, now time.Time) (lease.State, string) {
	if m.Lease != nil {
		st := m.Lease.Owner.Check()
		switch st {
		case lease.Gone:
			return st, "the process that owned this run is gone (crashed or killed); closed by recovery"
		case lease.Unknown:
			return st, "the owner recorded in the run could not be checked"
		}
		return st, "the owner still runs"
	}
	if boot, err := lease.BootTime(); err == nil && m.UpdatedAt.Before(boot) {
		return lease.Gone, "the run records no owner and was last written before the machine booted; closed by recovery"
	}
	if now.Sub(m.UpdatedAt) > LeaselessStaleAfter {
		return lease.Gone, "the run records no owner and has had no revision for over an hour; closed by recovery"
	}
	return lease.Unknown, "the run records no owner (written by an older flameox); it is closed once it is an hour old"
}

// childFile names the process the run's owner started last (workload,
// post-capture step or oracle), so that recovery can kill what a killed
// owner left running. Like the heartbeat it means nothing after a reboot
// (the boot id changes) and is not synced.
const childFile = "child.json"

// RecordChild records o as the run's current child process.
func (s *Store) RecordChild(id string, o lease.Owner) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return durable.WriteVolatile(filepath.Join(s.Dir(id), childFile), b, 0o600)
}

// Child returns the run's recorded child process, if any.
func (s *Store) Child(id string) (lease.Owner, bool) {
	b, err := os.ReadFile(filepath.Join(s.Dir(id), childFile))
	var o lease.Owner
	if err != nil || json.Unmarshal(b, &o) != nil || o.PID <= 0 {
		return lease.Owner{}, false
	}
	return o, true
}
