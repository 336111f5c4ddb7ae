package integrity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/faultpoint"
)

// A corrupt artifact is set aside, not deleted: its object directory moves
// to quarantine/<id>/object/<original path> and quarantine/<id>/manifest.json
// says what it was, why it moved and every file's digest, in the layout
// `flameox quarantine list|show|restore` reads (docs/storage.md). Its
// registrations stay on their runs, so nothing that names it is left
// without an explanation: validation reports ARTIFACT_QUARANTINED, a
// warning. The move is journaled: the manifest is written in state
// "moving" before the rename and rewritten "quarantined" after it, so a
// crash leaves the object in exactly one place and an entry that says
// where; the next repair plan finishes or withdraws such an entry
// (resume_quarantine).

const (
	stateMoving      = "moving"
	stateQuarantined = "quarantined"
)

// Named crash points of repair (pkg/faultpoint; crash_test.go kills a
// real fox-gc at each).
const (
	StepQuarantineJournaled = "repair.quarantine_journaled"
	StepQuarantineMoved     = "repair.quarantine_moved"
	StepQuarantined         = "repair.quarantined"
	StepRepublished         = "repair.republished"
)

// Steps lists repair's crash points in order (the republication's own are
// pkg/publish's).
func Steps() []string {
	return []string{StepQuarantineJournaled, StepQuarantineMoved, StepQuarantined, StepRepublished}
}

// quarantineManifest is quarantine/<id>/manifest.json.
type quarantineManifest struct {
	SchemaVersion int              `json:"schema_version"`
	QuarantineID  string           `json:"quarantine_id"`
	Operation     string           `json:"operation"` // "repair:<plan digest>"
	State         string           `json:"state"`
	DetectedAt    time.Time        `json:"detected_at"`
	OriginalPath  string           `json:"original_path"` // workspace-relative
	StoredPath    string           `json:"stored_path"`   // "object/" + original_path
	Reason        string           `json:"reason"`
	Contents      []quarantineFile `json:"contents"`
}

type quarantineFile struct {
	Path   string `json:"path"` // the original workspace-relative path
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

func readQuarantineManifest(root, id string) (*quarantineManifest, error) {
	b, err := os.ReadFile(filepath.Join(root, "quarantine", id, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var q quarantineManifest
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&q); err != nil {
		return nil, err
	}
	return &q, nil
}

// quarantinedArtifact returns the artifact id a quarantine entry holds, or
// "".
func (q *quarantineManifest) artifactID() string {
	rest, ok := strings.CutPrefix(q.OriginalPath, "artifacts/sha256/")
	if !ok || len(rest) < 3 || rest[2] != '/' {
		return ""
	}
	return "sha256:" + rest[3:]
}

// quarantineObject moves rel (an object directory, or a damaged file of a
// superseded generation) into a new quarantine entry. The caller holds the write and retention locks.
func quarantineObject(ctx context.Context, root, rel, operation, reason string, now time.Time) (string, error) {
	src := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(src)
	if err != nil {
		return "", fault.Wrap(fault.ArtifactIntegrityFailed, err, "quarantine %s", rel).With("file", rel)
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return "", fault.New(fault.ArtifactIntegrityFailed, "%s is neither a directory nor a regular file (%s); refusing to move it", rel, fi.Mode().Type()).With("file", rel)
	}
	var files []quarantineFile
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fault.New(fault.ArtifactIntegrityFailed, "%s is not a regular file; repair moves only what the workspace wrote", p)
		}
		sum, n, err := hashFile(ctx, p, make([]byte, 1<<16))
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, p)
		files = append(files, quarantineFile{Path: filepath.ToSlash(r), Bytes: n, SHA256: sum})
		return nil
	})
	if err != nil {
		return "", fault.Wrap(fault.ArtifactIntegrityFailed, err, "hash %s before quarantining it", rel)
	}
	if files == nil {
		files = []quarantineFile{}
	}
	id := now.UTC().Format("20060102T150405Z") + "-" + durable.RandomHex(4)
	q := quarantineManifest{SchemaVersion: SchemaVersion, QuarantineID: id, Operation: operation, State: stateMoving,
		DetectedAt: now.UTC(), OriginalPath: rel, StoredPath: "object/" + rel, Reason: reason, Contents: files}
	base := filepath.Join(root, "quarantine")
	dir := filepath.Join(base, id)
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fault.Wrap(fault.WorkspaceInvalid, err, "create quarantine/")
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fault.New(fault.InternalError, "quarantine entry %s exists already", id).Retry()
		}
		return "", fault.Wrap(fault.WorkspaceInvalid, err, "create quarantine/%s", id)
	}
	manifest := filepath.Join(dir, "manifest.json")
	if err := durable.WriteJSON(manifest, q, 0o600); err != nil {
		return "", err
	}
	if err := durable.SyncDir(base); err != nil {
		return "", err
	}
	faultpoint.Hit(StepQuarantineJournaled)
	dst := filepath.Join(dir, filepath.FromSlash(q.StoredPath))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", fault.Wrap(fault.WorkspaceInvalid, err, "create quarantine/%s", id)
	}
	if err := os.Rename(src, dst); err != nil {
		return "", fault.Wrap(fault.WorkspaceInvalid, err, "move %s into quarantine", rel)
	}
	if err := durable.SyncDirs(filepath.Dir(src), filepath.Dir(dst)); err != nil {
		return "", err
	}
	faultpoint.Hit(StepQuarantineMoved)
	q.State = stateQuarantined
	if err := durable.WriteJSON(manifest, q, 0o600); err != nil {
		return "", err
	}
	return "quarantine/" + id, nil
}

// interruption is a quarantine entry a crash left in state "moving".
type interruption struct {
	id    string
	entry *quarantineManifest
	moved bool // the object is at its stored path
}

// resumeQuarantine finishes an interrupted entry: one whose object moved
// is marked quarantined; one whose object never moved is withdrawn (only
// its manifest is removed). The caller holds the write and retention
// locks.
func resumeQuarantine(root string, in interruption) error {
	dir := filepath.Join(root, "quarantine", in.id)
	if in.moved {
		in.entry.State = stateQuarantined
		return durable.WriteJSON(filepath.Join(dir, "manifest.json"), in.entry, 0o600)
	}
	if _, err := os.Lstat(filepath.Join(dir, "object", filepath.FromSlash(in.entry.OriginalPath))); err == nil {
		return fault.New(fault.ArtifactIntegrityFailed, "quarantine/%s holds an object although its journal says it never moved", in.id)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "withdraw quarantine/%s", in.id)
	}
	return durable.SyncDir(filepath.Join(root, "quarantine"))
}
