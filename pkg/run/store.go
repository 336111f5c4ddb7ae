package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/google/uuid"
)

// Store reads and writes the runs/ directory of a workspace. Writers must
// hold the workspace write lock around Create and Append (the store checks
// revisions, the lock keeps projections in order).
type Store struct {
	// Root is the workspace root (the .diagnostics directory).
	Root string
}

// Regexps across flameox compile on first use (sync.OnceValue): compiled
// at package init they cost every start of every tool.
var idPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
})

// NewID returns a new run id.
func NewID() string { return uuid.NewString() }

// ValidID reports whether id is a run id (a lowercase UUID); it keeps path
// separators and traversal out of run paths.
func ValidID(id string) bool { return idPattern().MatchString(id) }

// Dir returns the run's directory.
func (s *Store) Dir(id string) string { return filepath.Join(s.Root, "runs", id) }

// ManifestRel is the workspace-relative projection path.
func ManifestRel(id string) string { return "runs/" + id + "/manifest.json" }

func revisionName(n int) string { return fmt.Sprintf("%08d.json", n) }

// Create writes revision 0 of a new run.
func (s *Store) Create(m Manifest) error {
	if !ValidID(m.RunID) {
		return fault.New(fault.InternalError, "invalid run id %q", m.RunID)
	}
	if m.Revision != 0 {
		return fault.New(fault.InternalError, "a new run starts at revision 0, not %d", m.Revision)
	}
	for _, c := range []struct {
		m *Machine
		s string
	}{{Execution, m.ExecutionStatus}, {Capture, m.CaptureStatus}, {Validation, m.ValidationStatus}} {
		if err := c.m.CheckInitial(c.s); err != nil {
			return err
		}
	}
	if m.RunType == TypeImport && m.ExecutionStatus != ExecNotApplicable {
		return fault.New(fault.InternalError, "an import run has execution_status not_applicable")
	}
	dir := s.Dir(m.RunID)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fault.New(fault.RevisionConflict, "run %s already exists", m.RunID)
		}
		return fmt.Errorf("create run directory: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "revisions"), 0o700); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("create revisions directory: %w", err)
	}
	// The new run directory (it holds revisions/) and runs/ are synced
	// with the first revision's directory.
	err := s.write(m, dir, filepath.Dir(dir))
	if _, serr := os.Lstat(filepath.Join(dir, "revisions", revisionName(0))); err != nil && errors.Is(serr, fs.ErrNotExist) {
		// No revision 0 (a full disk, say): leave no run directory that
		// holds nothing, or every status would warn about it.
		os.RemoveAll(dir)
	}
	return err
}

// Append writes next as the revision after prev, checking every state
// machine. prev must be the run's newest revision.
func (s *Store) Append(prev *Manifest, next Manifest) error {
	if next.RunID != prev.RunID || next.RunType != prev.RunType || !next.CreatedAt.Equal(prev.CreatedAt) {
		return fault.New(fault.InternalError, "a revision cannot change a run's id, type or creation time")
	}
	if next.Revision != prev.Revision+1 {
		return fault.New(fault.InternalError, "revision %d cannot follow %d", next.Revision, prev.Revision)
	}
	if err := Execution.Check(prev.ExecutionStatus, next.ExecutionStatus); err != nil {
		return err.(*fault.Error).ForRun(prev.RunID)
	}
	if err := Capture.Check(prev.CaptureStatus, next.CaptureStatus); err != nil {
		return err.(*fault.Error).ForRun(prev.RunID)
	}
	if err := Validation.Check(prev.ValidationStatus, next.ValidationStatus); err != nil {
		return err.(*fault.Error).ForRun(prev.RunID)
	}
	// The compare-and-swap is against the newest revision, not the
	// projection: a projection a crash left behind must not wedge the run.
	cur, err := s.Latest(prev.RunID)
	if err != nil {
		return err
	}
	if cur.Revision != prev.Revision {
		return fault.New(fault.RevisionConflict, "run %s is at revision %d, not %d", prev.RunID, cur.Revision, prev.Revision).ForRun(prev.RunID).Retry()
	}
	// Only the revisions directory is synced: the run directory changes
	// by its projection alone, which a crash may leave stale (readers read
	// the newest revision; recovery rebuilds it).
	return s.write(next)
}

// write stores m as a new revision and the projection; syncDirs are
// synced along with them (the parent of a new run directory).
func (s *Store) write(m Manifest, syncDirs ...string) error {
	m.SchemaVersion = SchemaVersion
	if m.Artifacts == nil {
		m.Artifacts = []Registration{}
	}
	if m.Limitations == nil {
		m.Limitations = []string{}
	}
	data, err := durable.MarshalIndent(m)
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "encode run %s", m.RunID)
	}
	dir := s.Dir(m.RunID)
	// The projection manifest.json is a second link to the immutable
	// revision file: the same bytes, synced once.
	err = durable.CreateExclusiveAlias(filepath.Join(dir, "revisions", revisionName(m.Revision)), filepath.Join(dir, "manifest.json"), data, 0o600, syncDirs...)
	if errors.Is(err, fs.ErrExist) {
		return fault.New(fault.RevisionConflict, "run %s already has revision %d", m.RunID, m.Revision).ForRun(m.RunID).Retry()
	}
	if err != nil {
		return err
	}
	return s.log(m)
}

// logEntry is one line of runs/<id>/log.jsonl: a human-auditable history of
// transitions without reading every revision.
type logEntry struct {
	At               time.Time `json:"at"`
	Revision         int       `json:"revision"`
	ExecutionStatus  string    `json:"execution_status"`
	CaptureStatus    string    `json:"capture_status"`
	ValidationStatus string    `json:"validation_status"`
	Reason           string    `json:"reason,omitempty"`
}

func entryOf(m *Manifest) logEntry {
	return logEntry{At: m.UpdatedAt, Revision: m.Revision, ExecutionStatus: m.ExecutionStatus,
		CaptureStatus: m.CaptureStatus, ValidationStatus: m.ValidationStatus, Reason: m.Reason}
}

func (s *Store) log(m Manifest) error {
	line, err := json.Marshal(entryOf(&m))
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.Dir(m.RunID), "log.jsonl"), os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open run log: %w", err)
	}
	defer f.Close()
	// A writer killed mid-line left a torn last line: start on a fresh
	// one (Repair rebuilds the log from the revisions).
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, err = f.Write(append(line, '\n'))
	return err
}

// Get reads a run's current state: the projection when it is current,
// else the newest revision (the revisions are the truth; a crash between
// writing a revision and replacing the projection leaves the projection one
// behind until Repair rebuilds it).
func (s *Store) Get(id string) (*Manifest, error) {
	if !ValidID(id) {
		return nil, fault.New(fault.InvalidArguments, "%q is not a run id", id)
	}
	dir := s.Dir(id)
	if m, ok := s.projection(id); ok {
		return m, nil
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, fault.New(fault.NotFound, "run %s does not exist", id).With("missing_entity", "run")
	}
	return s.Latest(id)
}

// projection returns the projection when it is current: it decodes, names
// the newest revision, and holds that revision's bytes.
func (s *Store) projection(id string) (*Manifest, bool) {
	dir := s.Dir(id)
	path := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	m, err := decode(b, ManifestRel(id))
	if err != nil || m.RunID != id || m.Revision < 0 {
		return nil, false
	}
	rev := filepath.Join(dir, "revisions", revisionName(m.Revision))
	if _, err := os.Lstat(filepath.Join(dir, "revisions", revisionName(m.Revision+1))); !errors.Is(err, fs.ErrNotExist) {
		return nil, false // a newer revision (or one that cannot be checked)
	}
	pi, err1 := os.Stat(path)
	ri, err2 := os.Stat(rev)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	if !os.SameFile(pi, ri) {
		// Not the second link the store writes (a copy, say): current only
		// if it holds the revision's bytes.
		rb, err := os.ReadFile(rev)
		if err != nil || !bytes.Equal(rb, b) {
			return nil, false
		}
	}
	return m, true
}

// Revision reads one stored revision.
func (s *Store) Revision(id string, n int) (*Manifest, error) {
	if !ValidID(id) {
		return nil, fault.New(fault.InvalidArguments, "%q is not a run id", id)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir(id), "revisions", revisionName(n)))
	if err != nil {
		return nil, fault.Wrap(fault.NotFound, err, "run %s revision %d", id, n)
	}
	return decode(b, "runs/"+id+"/revisions/"+revisionName(n))
}

func decode(b []byte, file string) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "damaged run manifest %s", file).With("file", file).With(DetailDamage, DamageUnreadable)
	}
	if m.SchemaVersion > SchemaVersion {
		// Written by a newer flameox: not damage, never quarantined.
		return nil, fault.New(fault.WorkspaceInvalid, "run manifest %s has schema_version %d; this flameox reads %d", file, m.SchemaVersion, SchemaVersion).With("file", file).
			Fix("Use the flameox version that wrote this workspace, or a newer one.")
	}
	if m.SchemaVersion != SchemaVersion {
		return nil, fault.New(fault.WorkspaceInvalid, "run manifest %s has schema_version %d; this flameox reads %d", file, m.SchemaVersion, SchemaVersion).With("file", file).With(DetailDamage, DamageUnreadable)
	}
	return &m, nil
}

// IDs lists the run ids present, sorted.
func (s *Store) IDs() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.Root, "runs"))
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	ids := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() && ValidID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}
