package retention

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/oplog"
	"github.com/flameox/flameox/pkg/workspace"
)

// Quarantine kinds.
const (
	// QuarantineRun is a run directory `flameox recover` set aside in
	// quarantine/runs/<run-id> because its newest revision could not be
	// read.
	QuarantineRun = "run_directory"
	// QuarantineObject is a file or directory moved to
	// quarantine/<id>/object/<path> with a manifest (Quarantine).
	QuarantineObject = "object"
)

// Quarantine states.
const (
	StateQuarantined = "quarantined"
)

// QuarantineManifest is quarantine/<id>/manifest.json.
type QuarantineManifest struct {
	SchemaVersion int         `json:"schema_version"`
	QuarantineID  string      `json:"quarantine_id"`
	Operation     string      `json:"operation"`
	State         string      `json:"state"`
	DetectedAt    time.Time   `json:"detected_at"`
	OriginalPath  string      `json:"original_path"`
	StoredPath    string      `json:"stored_path"` // relative to quarantine/<id>
	Reason        string      `json:"reason"`
	Contents      []TrashFile `json:"contents"`
}

// QuarantineEntry is one quarantined thing as list and show report it.
type QuarantineEntry struct {
	QuarantineID string    `json:"quarantine_id"`
	Kind         string    `json:"kind"`
	State        string    `json:"state"`
	OriginalPath string    `json:"original_path"`
	StoredPath   string    `json:"stored_path"` // workspace-relative
	Reason       string    `json:"reason"`
	Operation    string    `json:"operation,omitempty"`
	DetectedAt   time.Time `json:"detected_at"`
	Files        int       `json:"files"`
	Bytes        int64     `json:"bytes"`
	// Restorable: restore would put it back (its original path is free).
	Restorable bool `json:"restorable"`
	// Contents lists every file with its digest (show only).
	Contents []TrashFile `json:"contents,omitempty"`
}

var (
	qObjectID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$`) })
	qRunName  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\.[0-9]{8}T[0-9]{6}Z\.[0-9a-f]{8})?$`)
	})
)

// validQuarantineID accepts "runs/<run-id>[.<time>.<hex>]" and object ids.
func validQuarantineID(id string) bool {
	if name, ok := strings.CutPrefix(id, "runs/"); ok {
		return qRunName().MatchString(name)
	}
	return qObjectID().MatchString(id)
}

// QuarantineList is what quarantine list returns.
type QuarantineList struct {
	SchemaVersion int               `json:"schema_version"`
	Entries       []QuarantineEntry `json:"entries"`
}

// ListQuarantine lists everything in quarantine/, oldest first. It only
// reads (no file is hashed) and takes no lock.
func ListQuarantine(ws *workspace.Workspace) (*QuarantineList, error) {
	out := []QuarantineEntry{}
	runs, _ := os.ReadDir(filepath.Join(ws.Root, "quarantine", "runs"))
	for _, e := range runs {
		if !e.IsDir() || !qRunName().MatchString(e.Name()) {
			continue
		}
		q, err := showQuarantine(ws.Root, "runs/"+e.Name(), false)
		if err != nil {
			return nil, err
		}
		out = append(out, *q)
	}
	ents, _ := os.ReadDir(filepath.Join(ws.Root, "quarantine"))
	for _, e := range ents {
		if e.IsDir() && qObjectID().MatchString(e.Name()) {
			q, err := showQuarantine(ws.Root, e.Name(), false)
			if err != nil {
				return nil, err
			}
			out = append(out, *q)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DetectedAt.Before(out[j].DetectedAt) })
	return &QuarantineList{SchemaVersion: SchemaVersion, Entries: out}, nil
}

// ShowQuarantine describes one quarantined entry with its files' digests.
func ShowQuarantine(ws *workspace.Workspace, id string) (*QuarantineEntry, error) {
	return showQuarantine(ws.Root, id, true)
}

func showQuarantine(root, id string, contents bool) (*QuarantineEntry, error) {
	if !validQuarantineID(id) {
		return nil, fault.New(fault.InvalidArguments, "%q is not a quarantine id (runs/<run-id> or like 20260102T030405Z-0a1b2c3d)", id).
			Fix("Run `flameox quarantine list` for the ids.")
	}
	if name, ok := strings.CutPrefix(id, "runs/"); ok {
		dir := filepath.Join(root, "quarantine", "runs", name)
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			return nil, fault.New(fault.NotFound, "quarantine %s does not exist", id).With("missing_entity", "quarantine")
		}
		runID := qRunName().FindStringSubmatch(name)[1]
		q := &QuarantineEntry{QuarantineID: id, Kind: QuarantineRun, State: StateQuarantined,
			OriginalPath: "runs/" + runID, StoredPath: "quarantine/runs/" + name, DetectedAt: fi.ModTime().UTC(),
			Reason:     "flameox recover set the run aside: its newest revision could not be read",
			Restorable: !exists(filepath.Join(root, "runs", runID))}
		files, err := hashTreeMaybe(root, q.StoredPath, contents)
		if err != nil {
			return nil, err
		}
		q.fill(files, contents)
		return q, nil
	}
	m, err := readQuarantine(root, id)
	if err != nil {
		return nil, err
	}
	q := &QuarantineEntry{QuarantineID: id, Kind: QuarantineObject, State: m.State, OriginalPath: m.OriginalPath,
		StoredPath: "quarantine/" + id + "/" + m.StoredPath, Reason: m.Reason, Operation: m.Operation, DetectedAt: m.DetectedAt,
		Restorable: m.State == StateQuarantined && !exists(filepath.Join(root, filepath.FromSlash(m.OriginalPath)))}
	q.fill(m.Contents, contents)
	return q, nil
}

func (q *QuarantineEntry) fill(files []TrashFile, contents bool) {
	for _, f := range files {
		q.Files++
		q.Bytes += f.Bytes
	}
	if contents {
		q.Contents = files
		if q.Contents == nil {
			q.Contents = []TrashFile{}
		}
	}
}

// hashTreeMaybe lists the files under rel, with digests when hash is set.
func hashTreeMaybe(root, rel string, hash bool) ([]TrashFile, error) {
	if hash {
		return hashTree(root, rel)
	}
	var out []TrashFile
	filepath.WalkDir(filepath.Join(root, filepath.FromSlash(rel)), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				r, _ := filepath.Rel(root, p)
				out = append(out, TrashFile{Path: filepath.ToSlash(r), Bytes: fi.Size()})
			}
		}
		return nil
	})
	return out, nil
}

// QuarantineRestored is the result of quarantine restore.
type QuarantineRestored struct {
	SchemaVersion int    `json:"schema_version"`
	QuarantineID  string `json:"quarantine_id"`
	RestoredTo    string `json:"restored_to"`
	Files         int    `json:"files"`
	Bytes         int64  `json:"bytes"`
}

// RestoreQuarantine moves a quarantined entry back to its original path
// under the write and retention locks; the path must be free. An object's
// files are checked against their recorded digests.
func RestoreQuarantine(ctx context.Context, ws *workspace.Workspace, id string) (res *QuarantineRestored, err error) {
	defer func() {
		oplog.Record(ws.Root, "quarantine.restore", map[string][]string{"quarantine_id": {safeID(id)}}, err)
	}()
	unlock, err := lockBoth(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer unlock()
	q, err := showQuarantine(ws.Root, id, true)
	if err != nil {
		return nil, err
	}
	if q.State != StateQuarantined {
		return nil, fault.New(fault.InvalidArguments, "quarantine %s is %s: nothing to restore", id, q.State)
	}
	dst := filepath.Join(ws.Root, filepath.FromSlash(q.OriginalPath))
	if exists(dst) {
		return nil, fault.New(fault.RevisionConflict, "%s exists; restoring %s would overwrite it", q.OriginalPath, id).With("file", q.OriginalPath).
			Fix("Move " + q.OriginalPath + " aside first if the quarantined copy is the one to keep.")
	}
	if !safeRel(q.OriginalPath) {
		return nil, fault.New(fault.ArtifactIntegrityFailed, "quarantine %s names an unsafe path %q", id, q.OriginalPath)
	}
	if err := moveDurably(ws.Root, filepath.Join(ws.Root, filepath.FromSlash(q.StoredPath)), dst); err != nil {
		return nil, err
	}
	res = &QuarantineRestored{SchemaVersion: SchemaVersion, QuarantineID: id, RestoredTo: q.OriginalPath, Files: q.Files, Bytes: q.Bytes}
	if q.Kind == QuarantineObject {
		m, err := readQuarantine(ws.Root, id)
		if err != nil {
			return res, err
		}
		m.State = StateRestored
		if err := durable.WriteJSON(filepath.Join(ws.Root, "quarantine", id, "manifest.json"), m, 0o600); err != nil {
			return res, err
		}
		stored := q.StoredPath
		for _, f := range m.Contents {
			// Contents name the original paths (quarantined copies keep
			// the layout below stored_path).
			sum, n, err := hashFile(filepath.Join(ws.Root, filepath.FromSlash(f.Path)))
			if err != nil || sum != f.SHA256 || n != f.Bytes {
				return res, fault.New(fault.ArtifactIntegrityFailed, "restored %s does not match the digest quarantine recorded", f.Path).With("file", f.Path).With("from", stored)
			}
		}
	}
	return res, nil
}

func readQuarantine(root, id string) (*QuarantineManifest, error) {
	b, err := os.ReadFile(filepath.Join(root, "quarantine", id, "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.New(fault.NotFound, "quarantine %s does not exist", id).With("missing_entity", "quarantine")
	}
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "read quarantine/%s/manifest.json", id)
	}
	var m QuarantineManifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || m.QuarantineID != id || !safeRel(m.OriginalPath) || m.StoredPath != "object/"+m.OriginalPath {
		return nil, fault.New(fault.WorkspaceInvalid, "quarantine/%s/manifest.json is damaged", id).With("file", "quarantine/"+id+"/manifest.json")
	}
	return &m, nil
}
