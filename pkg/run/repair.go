package run

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
)

// A run's revisions are the truth; its projection (manifest.json) and log
// (log.jsonl) are derived from them. A SIGKILL can land between the steps
// of a write (revision linked, projection not yet replaced, log line not
// yet appended), so readers fall back to the newest revision and Repair
// rebuilds the derived files from the revisions.

// DetailDamage is the fault detail that says why a run cannot be read at
// all; recovery quarantines such a run instead of stopping on it.
const DetailDamage = "run_damage"

// Damage kinds.
const (
	// DamageNoRevision: the run directory holds no revision (its creator
	// died, or the disk filled, before revision 0 was linked).
	DamageNoRevision = "no_revision"
	// DamageUnreadable: the newest revision does not decode, or does not
	// describe this run at that revision.
	DamageUnreadable = "unreadable_revision"
)

// Damage returns the damage kind err reports, or "" when err is not about
// a damaged run (a missing run, an I/O error, a newer schema).
func Damage(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe.Details[DetailDamage]
	}
	return ""
}

// revisionNumbers lists the revision numbers stored for a run, ascending.
func (s *Store) revisionNumbers(id string) ([]int, error) {
	ents, err := os.ReadDir(filepath.Join(s.Dir(id), "revisions"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "list the revisions of run %s", id).ForRun(id)
	}
	var out []int
	for _, e := range ents {
		name := e.Name()
		if len(name) != len("00000000.json") || !strings.HasSuffix(name, ".json") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(name, ".json"))
		if err != nil || n < 0 {
			continue
		}
		out = append(out, n)
	}
	sort.Ints(out)
	return out, nil
}

// Latest reads a run's newest revision, ignoring the projection.
func (s *Store) Latest(id string) (*Manifest, error) {
	if !ValidID(id) {
		return nil, fault.New(fault.InvalidArguments, "%q is not a run id", id)
	}
	if _, err := os.Lstat(s.Dir(id)); errors.Is(err, fs.ErrNotExist) {
		return nil, fault.New(fault.NotFound, "run %s does not exist", id).With("missing_entity", "run")
	}
	revs, err := s.revisionNumbers(id)
	if err != nil {
		return nil, err
	}
	if len(revs) == 0 {
		return nil, fault.New(fault.WorkspaceInvalid, "run %s has no revision: the process that created it stopped before writing one", id).
			ForRun(id).With(DetailDamage, DamageNoRevision).With("file", "runs/"+id)
	}
	n := revs[len(revs)-1]
	m, err := s.Revision(id, n)
	if err != nil {
		return nil, err
	}
	if m.RunID != id || m.Revision != n {
		file := "runs/" + id + "/revisions/" + revisionName(n)
		return nil, fault.New(fault.WorkspaceInvalid, "damaged run manifest %s: it describes run %s revision %d", file, m.RunID, m.Revision).
			ForRun(id).With("file", file).With(DetailDamage, DamageUnreadable)
	}
	return m, nil
}

// Repair rebuilds a run's derived files from its revisions: the projection
// when it is missing, damaged, behind or different, the log when it lacks
// or mangles a revision's line, and it removes temporary files that a
// killed writer left among the revisions. It returns the newest revision
// and what it fixed (empty when nothing was wrong). The caller holds the
// workspace write lock, which every writer of revisions holds, so no
// temporary file in revisions/ belongs to a live writer. A damaged run
// (see Damage) is returned as an error and left as it is.
func (s *Store) Repair(id string) (*Manifest, []string, error) {
	return s.repair(id, true)
}

// Inspect reports what Repair would fix, changing nothing (no lock needed).
func (s *Store) Inspect(id string) (*Manifest, []string, error) {
	return s.repair(id, false)
}

func (s *Store) repair(id string, apply bool) (*Manifest, []string, error) {
	var fixed []string
	dir := s.Dir(id)
	revDir := filepath.Join(dir, "revisions")
	ents, _ := os.ReadDir(revDir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".tmp") {
			if apply && os.Remove(filepath.Join(revDir, e.Name())) != nil {
				continue
			}
			fixed = append(fixed, "removed the temporary file "+e.Name()+" of an interrupted write")
		}
	}
	m, err := s.Latest(id)
	if err != nil {
		return nil, fixed, err
	}
	if _, ok := s.projection(id); !ok {
		why := s.projectionFault(id, m.Revision)
		if apply {
			if err := s.relink(id, m.Revision); err != nil {
				return m, fixed, err
			}
		}
		fixed = append(fixed, "rebuilt the projection from revision "+strconv.Itoa(m.Revision)+" ("+why+")")
	}
	if !s.logComplete(id, m.Revision) {
		if apply {
			if err := s.rebuildLog(id, m.Revision); err != nil {
				return m, fixed, err
			}
		}
		fixed = append(fixed, "rebuilt log.jsonl from the revisions")
	}
	if m.Terminal() {
		// A terminal run has no live heartbeat writer: a temporary
		// heartbeat file is a killed writer's.
		runEnts, _ := os.ReadDir(dir)
		for _, e := range runEnts {
			if strings.HasPrefix(e.Name(), ".heartbeat.") && strings.HasSuffix(e.Name(), ".tmp") {
				if !apply || os.Remove(filepath.Join(dir, e.Name())) == nil {
					fixed = append(fixed, "removed the temporary file "+e.Name()+" of an interrupted heartbeat")
				}
			}
		}
	}
	return m, fixed, nil
}

// projectionFault says why the projection is not revision n.
func (s *Store) projectionFault(id string, n int) string {
	b, err := os.ReadFile(filepath.Join(s.Dir(id), "manifest.json"))
	if err != nil {
		return "it was missing"
	}
	var p Manifest
	if json.Unmarshal(b, &p) != nil {
		return "it was damaged"
	}
	if p.Revision != n {
		return "it showed revision " + strconv.Itoa(p.Revision)
	}
	return "it differed from the revision"
}

// relink makes manifest.json a second link to revision n, atomically.
func (s *Store) relink(id string, n int) error {
	dir := s.Dir(id)
	tmp := filepath.Join(dir, ".manifest.json."+durable.RandomHex(8)+".tmp")
	if err := os.Link(filepath.Join(dir, "revisions", revisionName(n)), tmp); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "rebuild the projection of run %s", id).ForRun(id)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "manifest.json")); err != nil {
		os.Remove(tmp)
		return fault.Wrap(fault.WorkspaceInvalid, err, "rebuild the projection of run %s", id).ForRun(id)
	}
	return durable.SyncDir(dir)
}

// logComplete reports whether log.jsonl has one well-formed line for each
// revision 0..newest, in order.
func (s *Store) logComplete(id string, newest int) bool {
	b, err := os.ReadFile(filepath.Join(s.Dir(id), "log.jsonl"))
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	want := 0
	for sc.Scan() {
		var e logEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Revision != want {
			return false
		}
		want++
	}
	return sc.Err() == nil && want == newest+1 && len(b) > 0 && b[len(b)-1] == '\n'
}

// rebuildLog rewrites log.jsonl, atomically, from revisions 0..newest; a
// revision that cannot be read is left out.
func (s *Store) rebuildLog(id string, newest int) error {
	var buf bytes.Buffer
	revs, err := s.revisionNumbers(id)
	if err != nil {
		return err
	}
	for _, n := range revs {
		if n > newest {
			break
		}
		m, err := s.Revision(id, n)
		if err != nil {
			continue
		}
		line, err := json.Marshal(entryOf(m))
		if err != nil {
			return err
		}
		buf.Write(append(line, '\n'))
	}
	if err := durable.WriteFile(filepath.Join(s.Dir(id), "log.jsonl"), buf.Bytes(), 0o600); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "rebuild the log of run %s", id).ForRun(id)
	}
	return nil
}
