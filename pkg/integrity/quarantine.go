package integrity

import (
	"github.com/flameox/flameox/pkg/retention"
)

// A corrupt artifact is set aside, not deleted: its object directory moves
// to quarantine/<id>/object/<original path> and quarantine/<id>/manifest.json
// says what it was, why it moved and every file's digest. pkg/retention
// writes and reads that format (retention.SetAside), the one that
// `flameox quarantine list|show|restore` reads (docs/storage.md). Its
// registrations stay on their runs, so nothing that names it is left
// without an explanation: validation reports ARTIFACT_QUARANTINED, a
// warning. A move a crash interrupted is finished or withdrawn by the next
// repair plan (resume_quarantine).

// Named crash points of repair (pkg/faultpoint; crash_test.go kills a
// real fox-gc at each).
const (
	StepQuarantineJournaled = retention.StepQuarantineJournaled
	StepQuarantineMoved     = retention.StepQuarantineMoved
	StepQuarantined         = "repair.quarantined"
	StepRepublished         = "repair.republished"
)

// Steps lists repair's crash points in order (the republication's own are
// pkg/publish's).
func Steps() []string {
	return []string{StepQuarantineJournaled, StepQuarantineMoved, StepQuarantined, StepRepublished}
}

// interruption is a quarantine entry a crash left in state "moving".
type interruption struct {
	id    string
	entry *retention.QuarantineManifest
	moved bool // the object is at its stored path
}
