package retention

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

// This file is the one writer of quarantine/<id>/: repair (pkg/integrity)
// sets corrupt objects aside through SetAside, and quarantine
// list, show and restore in this package read the same QuarantineManifest,
// so the format has one definition.
//
// The move is journaled: the manifest is written in state "moving" before
// the rename and rewritten "quarantined" after it, so a crash leaves the
// object in exactly one place and an entry that says where;
// ResumeQuarantine finishes or withdraws such an entry.

// Named crash points of a quarantine move (pkg/faultpoint; repair's crash
// test kills a real fox-gc at each).
const (
	StepQuarantineJournaled = "repair.quarantine_journaled"
	StepQuarantineMoved     = "repair.quarantine_moved"
)

// ReadQuarantineManifest reads quarantine/<id>/manifest.json.
func ReadQuarantineManifest(root, id string) (*QuarantineManifest, error) {
	b, err := os.ReadFile(filepath.Join(root, "quarantine", id, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var q QuarantineManifest
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&q); err != nil {
		return nil, err
	}
	return &q, nil
}

// ArtifactID is the artifact id an entry holds, or "".
func (q *QuarantineManifest) ArtifactID() string {
	rest, ok := strings.CutPrefix(q.OriginalPath, "artifacts/sha256/")
	if !ok || len(rest) < 3 || rest[2] != '/' {
		return ""
	}
	return "sha256:" + rest[3:]
}

// SetAside moves rel (an object directory, or a damaged file of a
// superseded generation) into a new quarantine entry and returns its
// workspace-relative directory. operation and reason are recorded in the
// manifest. The caller holds the write and retention locks.
func SetAside(ctx context.Context, root, rel, operation, reason string, now time.Time) (string, error) {
	src := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(src)
	if err != nil {
		return "", fault.Wrap(fault.ArtifactIntegrityFailed, err, "quarantine %s", rel).With("file", rel)
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return "", fault.New(fault.ArtifactIntegrityFailed, "%s is neither a directory nor a regular file (%s); refusing to move it", rel, fi.Mode().Type()).With("file", rel)
	}
	files := []TrashFile{}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fault.New(fault.ArtifactIntegrityFailed, "%s is not a regular file; repair moves only what the workspace wrote", p)
		}
		sum, n, err := hashFile(p)
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, p)
		files = append(files, TrashFile{Path: filepath.ToSlash(r), Bytes: n, SHA256: sum})
		return nil
	})
	if err != nil {
		return "", fault.Wrap(fault.ArtifactIntegrityFailed, err, "hash %s before quarantining it", rel)
	}
	id := now.UTC().Format("20060102T150405Z") + "-" + durable.RandomHex(4)
	q := QuarantineManifest{SchemaVersion: SchemaVersion, QuarantineID: id, Operation: operation, State: StateMoving,
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
	q.State = StateQuarantined
	if err := durable.WriteJSON(manifest, q, 0o600); err != nil {
		return "", err
	}
	return "quarantine/" + id, nil
}

// ResumeQuarantine finishes entry id, which a crash left in state
// "moving": one whose object moved (moved) is marked quarantined; one
// whose object never moved is withdrawn (only its manifest is removed).
// The caller holds the write and retention locks.
func ResumeQuarantine(root, id string, entry *QuarantineManifest, moved bool) error {
	dir := filepath.Join(root, "quarantine", id)
	if moved {
		entry.State = StateQuarantined
		return durable.WriteJSON(filepath.Join(dir, "manifest.json"), entry, 0o600)
	}
	if _, err := os.Lstat(filepath.Join(dir, "object", filepath.FromSlash(entry.OriginalPath))); err == nil {
		return fault.New(fault.ArtifactIntegrityFailed, "quarantine/%s holds an object although its journal says it never moved", id)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "withdraw quarantine/%s", id)
	}
	return durable.SyncDir(filepath.Join(root, "quarantine"))
}
