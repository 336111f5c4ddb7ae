package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/workspace"
)

// ApprovalsFile is the approvals record inside the workspace directory.
const ApprovalsFile = "approvals.json"

// ApprovalsVersion is the approvals.json format version.
const ApprovalsVersion = 1

// Approval statuses reported by Status and Summary.
const (
	Approved   = "approved"
	Unapproved = "unapproved"
	Changed    = "changed"
)

// Approval records that a person approved one definition of a workload. The
// canonical form is kept so a later refusal can say what changed.
type Approval struct {
	DefinitionID string     `json:"definition_id"`
	ApprovedAt   time.Time  `json:"approved_at"`
	Canonical    Definition `json:"canonical"`
}

// Approvals is .diagnostics/approvals.json.
type Approvals struct {
	SchemaVersion int                  `json:"schema_version"`
	Workloads     map[string]*Approval `json:"workloads"`
}

// LoadApprovals reads the approvals of the workspace at wsRoot (the
// .diagnostics directory). A missing file means nothing is approved; a
// damaged one is WORKSPACE_INVALID naming approvals.json, never "empty".
func LoadApprovals(wsRoot string) (*Approvals, error) {
	b, err := os.ReadFile(filepath.Join(wsRoot, ApprovalsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return &Approvals{SchemaVersion: ApprovalsVersion, Workloads: map[string]*Approval{}}, nil
	}
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "read %s", ApprovalsFile).With("file", ApprovalsFile)
	}
	return parseApprovals(b)
}

func parseApprovals(b []byte) (*Approvals, error) {
	corrupt := func(format string, args ...any) error {
		return fault.New(fault.WorkspaceInvalid, ApprovalsFile+" is damaged: "+format, args...).With("file", ApprovalsFile).
			Fix(ApprovalsFile + " is written only by `flameox workload approve`; restore it from a backup, or delete it and approve the workloads again.")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var a Approvals
	if err := dec.Decode(&a); err != nil {
		return nil, corrupt("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, corrupt("trailing data after the JSON object")
	}
	if a.SchemaVersion != ApprovalsVersion {
		return nil, corrupt("schema_version %d is not supported (this flameox reads %d)", a.SchemaVersion, ApprovalsVersion)
	}
	if a.Workloads == nil {
		a.Workloads = map[string]*Approval{}
	}
	for _, name := range sortedKeys(a.Workloads) {
		ap := a.Workloads[name]
		if ap == nil || ap.Canonical.Name != name || ap.ApprovedAt.IsZero() {
			return nil, corrupt("entry %q is incomplete or names another workload", clip(name))
		}
		if id, err := digest.Of(ap.Canonical); err != nil || id != ap.DefinitionID {
			return nil, corrupt("entry %q: definition_id does not match the stored canonical form", clip(name))
		}
	}
	return &a, nil
}

// Approve records approval of w's current definition. It re-reads
// approvals.json under the workspace write lock and replaces it atomically,
// so concurrent approvals of different workloads are all kept. Only the CLI
// calls this; the MCP server must not.
func Approve(ctx context.Context, ws *workspace.Workspace, w *Workload, now time.Time) (*Approval, error) {
	ap := &Approval{DefinitionID: w.id, ApprovedAt: now.UTC().Truncate(time.Microsecond), Canonical: w.Canonical()}
	err := ws.WithLock(ctx, ws.Locks(), lock.Write, func() error {
		a, err := LoadApprovals(ws.Root)
		if err != nil {
			return err
		}
		a.Workloads[w.Name] = ap
		if err := durable.WriteJSON(ws.Path(ApprovalsFile), a, 0o644); err != nil {
			return fault.Wrap(fault.WorkspaceInvalid, err, "write %s", ApprovalsFile).With("file", ApprovalsFile)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ap, nil
}

// Status reports whether w is approved at its current definition id,
// approved at another one (changed), or never approved.
func (a *Approvals) Status(w *Workload) string {
	switch ap := a.Workloads[w.Name]; {
	case ap == nil:
		return Unapproved
	case ap.DefinitionID != w.id:
		return Changed
	}
	return Approved
}

// Check returns nil when w is approved at its current definition id.
// Otherwise it is EXECUTION_REFUSED (exit 9) saying that w was never
// approved, or what changed since the approval.
func (a *Approvals) Check(w *Workload) error {
	fix := fmt.Sprintf("Review with `flameox workload show %s`, then `flameox workload approve %s` (CLI only).", w.Name, w.Name)
	ap := a.Workloads[w.Name]
	if ap == nil {
		return fault.New(fault.ExecutionRefused, "workload %q has never been approved", w.Name).
			With("workload", w.Name).With("reason", Unapproved).With("definition_id", w.id).Fix(fix)
	}
	if ap.DefinitionID == w.id {
		return nil
	}
	changes := strings.Join(Diff(ap.Canonical, w.Canonical()), "; ")
	return fault.New(fault.ExecutionRefused, "workload %q changed since it was approved: %s", w.Name, changes).
		With("workload", w.Name).With("reason", Changed).With("changes", changes).
		With("approved_definition_id", ap.DefinitionID).With("definition_id", w.id).
		With("approved_at", ap.ApprovedAt.Format(time.RFC3339)).Fix(fix)
}

// Summary is one row of `flameox workload list`.
type Summary struct {
	Name           string   `json:"name"`
	Description    string   `json:"description,omitempty"`
	DefinitionID   string   `json:"definition_id"`
	Approval       string   `json:"approval"` // approved | unapproved | changed
	ParameterNames []string `json:"parameter_names"`
	OracleStrength string   `json:"oracle_strength"` // "" without an oracle
	TimeoutSeconds float64  `json:"timeout_seconds"`
}

// Summarize lists every workload of f, sorted by name, with its approval.
func Summarize(f *File, a *Approvals) []Summary {
	out := []Summary{}
	for _, name := range f.Names() {
		w := f.Workloads[name]
		s := Summary{Name: name, Description: w.Description, DefinitionID: w.id, Approval: a.Status(w), ParameterNames: w.ParameterNames(), TimeoutSeconds: w.TimeoutSeconds}
		if w.Oracle != nil {
			s.OracleStrength = w.Oracle.Strength
		}
		out = append(out, s)
	}
	return out
}
