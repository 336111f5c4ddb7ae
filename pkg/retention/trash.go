package retention

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/faultpoint"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/oplog"
	"github.com/flameox/flameox/pkg/workspace"
)

// The named boundaries of gc --apply and restore, in order. A crash at
// any of them loses nothing: before the manifest exists nothing moved;
// after it, every path is either at its place or in trash (each move is
// one rename), and the next apply, restore or purge puts a trash whose
// state is moving or restoring back where it was.
const (
	StepLocked          = "gc.locked"
	StepManifestWritten = "gc.manifest_written"
	StepItemMoved       = "gc.item_moved"
	StepRecoverable     = "gc.recoverable"
	StepRestoring       = "gc.restoring"
	StepItemRestored    = "gc.item_restored"
	StepRestored        = "gc.restored"
)

// Steps lists the boundaries of apply and restore.
func Steps() []string {
	return []string{StepLocked, StepManifestWritten, StepItemMoved, StepRecoverable, StepRestoring, StepItemRestored, StepRestored}
}

// Trash states.
const (
	StateMoving      = "moving"      // gc --apply in progress (or interrupted)
	StateRecoverable = "recoverable" // everything moved; restore puts it back
	StateRestoring   = "restoring"   // restore (or putting back an interrupted apply) in progress
	StateRestored    = "restored"    // everything is back; only the manifest remains
	StateRolledBack  = "rolled_back" // an interrupted apply was put back
)

// TrashFile is one file gc moved, with its digest.
type TrashFile struct {
	Path   string `json:"path"` // workspace-relative original path
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// TrashEntry is one planned item with every file it moved.
type TrashEntry struct {
	Item
	Contents []TrashFile `json:"contents"`
}

// Manifest is trash/<id>/manifest.json.
type Manifest struct {
	SchemaVersion int          `json:"schema_version"`
	TrashID       string       `json:"trash_id"`
	Operation     string       `json:"operation"`
	CreatedAt     time.Time    `json:"created_at"`
	HeadCommitID  string       `json:"head_commit_id"`
	PlanDigest    string       `json:"plan_digest"`
	TotalBytes    int64        `json:"total_bytes"`
	Entries       []TrashEntry `json:"entries"`

	// State and UpdatedAt live in state.json, which is small and is all a
	// state change rewrites (a manifest of a large collection is not).
	State     string    `json:"-"`
	UpdatedAt time.Time `json:"-"`
}

// trashState is trash/<id>/state.json.
type trashState struct {
	SchemaVersion int       `json:"schema_version"`
	TrashID       string    `json:"trash_id"`
	State         string    `json:"state"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	Items         int       `json:"items"`
	TotalBytes    int64     `json:"total_bytes"`
}

// Applied is the result of gc --apply.
type Applied struct {
	SchemaVersion int    `json:"schema_version"`
	TrashID       string `json:"trash_id"` // "" when nothing was collected
	Plan          *Plan  `json:"plan"`
	MovedItems    int    `json:"moved_items"`
	MovedFiles    int    `json:"moved_files"`
	MovedBytes    int64  `json:"moved_bytes"`
	// Resumed names interrupted trash that was put back first.
	Resumed []string `json:"resumed"`
}

var trashIDPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$`)
})

func trashDir(root, id string) string { return filepath.Join(root, "trash", id) }

func objectPath(root, id, rel string) string {
	return filepath.Join(trashDir(root, id), "objects", filepath.FromSlash(rel))
}

// ValidTrashID reports whether id names a trash entry (never a path).
func ValidTrashID(id string) bool { return trashIDPattern().MatchString(id) }

// lockBoth takes the write lock (no publication meanwhile) and the
// retention lock exclusively (no reader is reading a file being moved).
func lockBoth(ctx context.Context, ws *workspace.Workspace) (func(), error) {
	ls := ws.Locks()
	rw, err := ls.Lock(ctx, lock.Write, false)
	if err != nil {
		return nil, err
	}
	rr, err := ls.Lock(ctx, lock.Retention, false)
	if err != nil {
		rw()
		return nil, err
	}
	return func() { rr(); rw() }, nil
}

// Apply plans again under the write and retention locks and moves exactly
// that plan's items to trash/<id>/objects/, after writing the manifest
// with every file's digest. When expect is not empty the fresh plan must
// have that digest (what the dry run printed), else REVISION_CONFLICT and
// nothing moves.
func Apply(ctx context.Context, ws *workspace.Workspace, opt Options, expect string) (res *Applied, err error) {
	defer func() {
		ids := map[string][]string{}
		if res != nil && res.TrashID != "" {
			ids["trash_id"] = []string{res.TrashID}
		}
		oplog.Record(ws.Root, "gc.apply", ids, err)
	}()
	unlock, err := lockBoth(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer unlock()
	faultpoint.Hit(StepLocked)
	res = &Applied{SchemaVersion: SchemaVersion, Resumed: []string{}}
	if res.Resumed, err = resume(ws.Root); err != nil {
		return nil, err
	}
	plan, err := MakePlan(ctx, ws, opt)
	if err != nil {
		return nil, err
	}
	res.Plan = plan
	if expect != "" && expect != plan.PlanDigest {
		return nil, fault.New(fault.RevisionConflict, "the workspace changed since the plan %s was made (now %s)", expect, plan.PlanDigest).
			Retry().Fix("Run `flameox gc` again and review the new plan.")
	}
	if len(plan.Items) == 0 {
		return res, nil
	}
	now := plan.CreatedAt
	id := now.Format("20060102T150405Z") + "-" + durable.RandomHex(4)
	m := &Manifest{SchemaVersion: SchemaVersion, TrashID: id, Operation: "gc", State: StateMoving,
		CreatedAt: now, UpdatedAt: now, HeadCommitID: plan.Roots.HeadCommitID, PlanDigest: plan.PlanDigest}
	for _, it := range plan.Items {
		e := TrashEntry{Item: it, Contents: []TrashFile{}}
		for _, rel := range it.Paths {
			files, err := hashTree(ws.Root, rel)
			if err != nil {
				return nil, err
			}
			e.Contents = append(e.Contents, files...)
		}
		m.TotalBytes += it.Bytes
		m.Entries = append(m.Entries, e)
	}
	// Until the first move, a failure (a full disk) leaves nothing: the
	// new trash directory is removed again.
	prepare := func() error {
		if err := os.MkdirAll(filepath.Join(trashDir(ws.Root, id), "objects"), 0o700); err != nil {
			return fault.Wrap(fault.WorkspaceInvalid, err, "create trash/%s", id)
		}
		if err := durable.SyncDirs(filepath.Join(ws.Root, "trash"), trashDir(ws.Root, id)); err != nil {
			return err
		}
		if err := writeManifest(ws.Root, m); err != nil {
			return err
		}
		if err := writeState(ws.Root, m); err != nil {
			return err
		}
		return markCollected(ws.Root, m)
	}
	if err := prepare(); err != nil {
		unmarkCollected(ws.Root, m)
		os.RemoveAll(trashDir(ws.Root, id))
		return nil, err
	}
	res.TrashID = id
	faultpoint.Hit(StepManifestWritten)
	for _, e := range m.Entries {
		for _, rel := range e.Paths {
			if err := moveDurably(ws.Root, filepath.Join(ws.Root, filepath.FromSlash(rel)), objectPath(ws.Root, id, rel)); err != nil {
				return res, err
			}
		}
		res.MovedItems++
		res.MovedFiles += len(e.Contents)
		for _, f := range e.Contents {
			res.MovedBytes += f.Bytes
		}
		faultpoint.Hit(StepItemMoved)
	}
	m.State, m.UpdatedAt = StateRecoverable, time.Now().UTC()
	if err := writeState(ws.Root, m); err != nil {
		return res, err
	}
	faultpoint.Hit(StepRecoverable)
	return res, nil
}

// Restored is the result of gc restore.
type Restored struct {
	SchemaVersion int    `json:"schema_version"`
	TrashID       string `json:"trash_id"`
	Items         int    `json:"items"`
	Files         int    `json:"files"`
	Bytes         int64  `json:"bytes"`
	State         string `json:"state"`
}

// Restore puts every file of trash id back at its original path and
// checks each against its recorded digest. A path that exists again (the
// same bytes imported since) is refused, and nothing else is moved.
func Restore(ctx context.Context, ws *workspace.Workspace, id string) (res *Restored, err error) {
	defer func() { oplog.Record(ws.Root, "gc.restore", map[string][]string{"trash_id": {safeID(id)}}, err) }()
	if !ValidTrashID(id) {
		return nil, fault.New(fault.InvalidArguments, "%q is not a trash id (like 20260102T030405Z-0a1b2c3d)", id).
			Fix("List trash with `ls .diagnostics/trash` or read the id `flameox gc --apply` printed.")
	}
	unlock, err := lockBoth(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, err := readManifest(ws.Root, id)
	if err != nil {
		return nil, err
	}
	switch m.State {
	case StateRecoverable, StateRestoring, StateMoving:
	default:
		return nil, fault.New(fault.InvalidArguments, "trash %s is %s: nothing to restore", id, m.State)
	}
	// Refuse before moving anything if a destination exists again.
	for _, e := range m.Entries {
		for _, rel := range e.Paths {
			src := objectPath(ws.Root, id, rel)
			dst := filepath.Join(ws.Root, filepath.FromSlash(rel))
			if exists(dst) && exists(src) {
				return nil, fault.New(fault.RevisionConflict, "%s exists again; restoring trash %s would overwrite it", rel, id).With("file", rel).
					Fix("Move the new " + rel + " aside first if the trash copy is the one to keep.")
			}
		}
	}
	if err := putBack(ws.Root, m, StateRestored); err != nil {
		return nil, err
	}
	res = &Restored{SchemaVersion: SchemaVersion, TrashID: id, State: m.State}
	for _, e := range m.Entries {
		res.Items++
		for _, f := range e.Contents {
			res.Files++
			res.Bytes += f.Bytes
		}
	}
	// Every file is back: check it is the same bytes.
	for _, e := range m.Entries {
		for _, f := range e.Contents {
			sum, n, err := hashFile(filepath.Join(ws.Root, filepath.FromSlash(f.Path)))
			if err != nil || sum != f.SHA256 || n != f.Bytes {
				return res, fault.New(fault.ArtifactIntegrityFailed, "restored %s does not match the digest trash %s recorded", f.Path, id).With("file", f.Path)
			}
		}
	}
	return res, nil
}

// putBack moves every path of m that is in trash back to its place, in
// reverse order, recording state restoring first and final after.
func putBack(root string, m *Manifest, final string) error {
	m.State, m.UpdatedAt = StateRestoring, time.Now().UTC()
	if err := writeState(root, m); err != nil {
		return err
	}
	faultpoint.Hit(StepRestoring)
	for i := len(m.Entries) - 1; i >= 0; i-- {
		e := m.Entries[i]
		for j := len(e.Paths) - 1; j >= 0; j-- {
			rel := e.Paths[j]
			src := objectPath(root, m.TrashID, rel)
			dst := filepath.Join(root, filepath.FromSlash(rel))
			switch {
			case !exists(src):
				continue // never moved, or already back
			case exists(dst):
				return fault.New(fault.ArtifactIntegrityFailed, "%s is both in trash %s and in the workspace", rel, m.TrashID).With("file", rel).
					Fix("Compare the two copies; remove the one that is not wanted and run the command again.")
			}
			if err := moveDurably(root, src, dst); err != nil {
				return err
			}
		}
		faultpoint.Hit(StepItemRestored)
	}
	if err := unmarkCollected(root, m); err != nil {
		return err
	}
	m.State, m.UpdatedAt = final, time.Now().UTC()
	if err := writeState(root, m); err != nil {
		return err
	}
	faultpoint.Hit(StepRestored)
	return nil
}

// CollectedDir holds an empty marker corpus/collected/<hex> for every
// commit gc moved to trash (kept after purge), so that a walk of the
// history (validation) can tell the end of the retained history from a
// commit that went missing.
const CollectedDir = "corpus/collected"

// CommitCollected reports whether gc collected commit id: its marker
// exists. A missing ancestor with a marker is where the kept history
// ends; one without is damage.
func CommitCollected(root, id string) bool {
	hex, ok := strings.CutPrefix(id, "sha256:")
	if !ok || len(hex) != 64 || !allHex([]byte(hex)) {
		return false
	}
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(CollectedDir), hex))
	return err == nil && fi.Mode().IsRegular()
}

// markCollected writes the markers of m's commits before any of them
// moves (a marker whose commit is still there means nothing).
func markCollected(root string, m *Manifest) error {
	dir := filepath.Join(root, filepath.FromSlash(CollectedDir))
	made := false
	for _, e := range m.Entries {
		if e.Kind != KindCommit {
			continue
		}
		if !made {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return fault.Wrap(fault.WorkspaceInvalid, err, "create %s", CollectedDir)
			}
			if err := noLinkedComponents(root, dir, false); err != nil {
				return err
			}
			made = true
		}
		f, err := os.OpenFile(filepath.Join(dir, strings.TrimPrefix(e.ID, "sha256:")), os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return fault.Wrap(fault.WorkspaceInvalid, err, "mark commit %s collected", e.ID)
		}
		f.Close()
	}
	if !made {
		return nil
	}
	return durable.SyncDirs(dir, filepath.Dir(dir))
}

// unmarkCollected removes the markers of m's commits once they are back.
func unmarkCollected(root string, m *Manifest) error {
	dir := filepath.Join(root, filepath.FromSlash(CollectedDir))
	removed := false
	for _, e := range m.Entries {
		if e.Kind != KindCommit {
			continue
		}
		err := os.Remove(filepath.Join(dir, strings.TrimPrefix(e.ID, "sha256:")))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fault.Wrap(fault.WorkspaceInvalid, err, "unmark commit %s", e.ID)
		}
		removed = removed || err == nil
	}
	if !removed {
		return nil
	}
	return durable.SyncDir(dir)
}

// resume puts back every trash whose apply or restore was interrupted.
// The caller holds both locks.
func resume(root string) ([]string, error) {
	done := []string{}
	for _, id := range interrupted(root) {
		m, err := readManifest(root, id)
		if err != nil {
			return done, err
		}
		final := StateRestored
		if m.State == StateMoving {
			final = StateRolledBack
		}
		if err := putBack(root, m, final); err != nil {
			return done, err
		}
		done = append(done, id)
	}
	return done, nil
}

// Resume puts back trash left half-moved by a crash (flameox recover may
// call it); it takes the write and retention locks.
func Resume(ctx context.Context, ws *workspace.Workspace) ([]string, error) {
	unlock, err := lockBoth(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return resume(ws.Root)
}

// interrupted lists trash ids whose state is moving or restoring.
func interrupted(root string) []string {
	out := []string{}
	for _, id := range trashIDs(root) {
		if st, err := readState(root, id); err == nil && (st.State == StateMoving || st.State == StateRestoring) {
			out = append(out, id)
		}
	}
	return out
}

func trashIDs(root string) []string {
	var out []string
	ents, _ := os.ReadDir(filepath.Join(root, "trash"))
	for _, e := range ents {
		if e.IsDir() && ValidTrashID(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// TrashSummary is one trash entry in a list.
type TrashSummary struct {
	TrashID    string    `json:"trash_id"`
	State      string    `json:"state"`
	CreatedAt  time.Time `json:"created_at"`
	Items      int       `json:"items"`
	TotalBytes int64     `json:"total_bytes"`
}

// TrashList is what gc list returns.
type TrashList struct {
	SchemaVersion int            `json:"schema_version"`
	Trash         []TrashSummary `json:"trash"`
	TotalBytes    int64          `json:"total_bytes"`
}

// List summarises every trash entry, oldest first.
func List(ws *workspace.Workspace) (*TrashList, error) {
	out := &TrashList{SchemaVersion: SchemaVersion, Trash: []TrashSummary{}}
	for _, id := range trashIDs(ws.Root) {
		st, err := readState(ws.Root, id)
		if fault.Is(err, fault.NotFound) {
			continue // an apply that failed before its manifest existed: nothing moved
		}
		if err != nil {
			return nil, err
		}
		out.Trash = append(out.Trash, TrashSummary{TrashID: id, State: st.State, CreatedAt: st.CreatedAt, Items: st.Items, TotalBytes: st.TotalBytes})
		out.TotalBytes += st.TotalBytes
	}
	return out, nil
}

// Purged is the result of gc purge.
type Purged struct {
	SchemaVersion int       `json:"schema_version"`
	OlderThan     string    `json:"older_than"`
	Before        time.Time `json:"before"`
	Purged        []string  `json:"purged"`
	Kept          []string  `json:"kept"`
	Bytes         int64     `json:"bytes"`
	Resumed       []string  `json:"resumed"`
}

// Purge deletes for good every trash entry created before now-olderThan
// (interrupted ones are put back first, never deleted).
func Purge(ctx context.Context, ws *workspace.Workspace, olderThan time.Duration, now time.Time) (res *Purged, err error) {
	defer func() {
		ids := map[string][]string{}
		if res != nil {
			ids["trash_id"] = res.Purged
		}
		oplog.Record(ws.Root, "gc.purge", ids, err)
	}()
	if olderThan < 0 {
		return nil, fault.New(fault.InvalidArguments, "--older-than must not be negative")
	}
	unlock, err := lockBoth(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if now.IsZero() {
		now = time.Now()
	}
	res = &Purged{SchemaVersion: SchemaVersion, OlderThan: olderThan.String(), Before: now.UTC().Add(-olderThan), Purged: []string{}, Kept: []string{}}
	if res.Resumed, err = resume(ws.Root); err != nil {
		return nil, err
	}
	for _, id := range trashIDs(ws.Root) {
		st, err := readState(ws.Root, id)
		if fault.Is(err, fault.NotFound) {
			st = &trashState{} // no manifest: nothing was moved into it, remove it
		} else if err != nil {
			return res, err
		}
		if !st.CreatedAt.Before(res.Before) {
			res.Kept = append(res.Kept, id)
			continue
		}
		dir := trashDir(ws.Root, id)
		n := treeBytes(dir)
		// Payloads and evidence are read-only, and so may be their
		// directories: make the tree removable first.
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
		if err := os.RemoveAll(dir); err != nil {
			return res, fault.Wrap(fault.WorkspaceInvalid, err, "purge trash/%s", id).Retry()
		}
		res.Purged = append(res.Purged, id)
		res.Bytes += n
	}
	if err := durable.SyncDir(filepath.Join(ws.Root, "trash")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	return res, nil
}

func readManifest(root, id string) (*Manifest, error) {
	path := filepath.Join(trashDir(root, id), "manifest.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.New(fault.NotFound, "trash %s does not exist", id).With("missing_entity", "trash")
	}
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "read trash/%s/manifest.json", id)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || m.TrashID != id || m.SchemaVersion != SchemaVersion {
		return nil, fault.New(fault.WorkspaceInvalid, "trash/%s/manifest.json is damaged", id).With("file", "trash/"+id+"/manifest.json")
	}
	for _, e := range m.Entries {
		for _, rel := range e.Paths {
			if !safeRel(rel) {
				return nil, fault.New(fault.ArtifactIntegrityFailed, "trash %s names an unsafe path %q", id, rel)
			}
		}
	}
	st, err := readState(root, id)
	if err != nil {
		return nil, err
	}
	m.State, m.UpdatedAt = st.State, st.UpdatedAt
	return &m, nil
}

// readState reads trash/<id>/state.json. A trash whose manifest exists
// but whose state does not yet (a crash between the two writes, before
// anything moved) is moving.
func readState(root, id string) (*trashState, error) {
	b, err := os.ReadFile(filepath.Join(trashDir(root, id), "state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		if _, merr := os.Lstat(filepath.Join(trashDir(root, id), "manifest.json")); merr == nil {
			return &trashState{SchemaVersion: SchemaVersion, TrashID: id, State: StateMoving}, nil
		}
		return nil, fault.New(fault.NotFound, "trash %s does not exist", id).With("missing_entity", "trash")
	}
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "read trash/%s/state.json", id)
	}
	var st trashState
	if err := json.Unmarshal(b, &st); err != nil || st.TrashID != id || st.SchemaVersion != SchemaVersion {
		return nil, fault.New(fault.WorkspaceInvalid, "trash/%s/state.json is damaged", id).With("file", "trash/"+id+"/state.json")
	}
	return &st, nil
}

// writeManifest writes the manifest once, before anything moves.
func writeManifest(root string, m *Manifest) error {
	return durable.WriteJSON(filepath.Join(trashDir(root, m.TrashID), "manifest.json"), m, 0o600)
}

// writeState records a state change durably.
func writeState(root string, m *Manifest) error {
	return durable.WriteJSON(filepath.Join(trashDir(root, m.TrashID), "state.json"), trashState{SchemaVersion: SchemaVersion,
		TrashID: m.TrashID, State: m.State, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Items: len(m.Entries), TotalBytes: m.TotalBytes}, 0o600)
}

// moveDurably renames src to dst (creating dst's parents) and syncs both
// directories, so that after a crash the path is in exactly one place.
// Trash and its workspace are one file system, so the rename is atomic.
func moveDurably(root, src, dst string) error {
	// No component between the workspace and either path may be a
	// symlink swapped in: a rename (or a mkdir) through one would write
	// outside. Checked before the destination's parents are made, and
	// again after; the source's parents first, so that a swapped parent
	// is reported as what it is.
	if err := noLinkedComponents(root, filepath.Dir(src), false); err != nil {
		return err
	}
	if err := refuseSymlinks(src); err != nil {
		return err
	}
	if err := noLinkedComponents(root, filepath.Dir(dst), true); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "create %s", filepath.Dir(dst))
	}
	if err := noLinkedComponents(root, filepath.Dir(dst), false); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "move %s", src)
	}
	return durable.SyncDirs(filepath.Dir(src), filepath.Dir(dst))
}

// noLinkedComponents checks that every directory from root down to dir
// (root excluded) is a real directory, not a symlink; with missingOK the
// check ends at the first component that does not exist yet.
func noLinkedComponents(root, dir string, missingOK bool) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fault.New(fault.ArtifactIntegrityFailed, "%s is outside the workspace", dir)
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if missingOK && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fault.Wrap(fault.WorkspaceInvalid, err, "stat %s", p)
		}
		if !fi.IsDir() {
			return fault.New(fault.ArtifactIntegrityFailed, "%s is not a directory (a symlink?); gc moves nothing through it", p).With("file", rel)
		}
	}
	return nil
}

// refuseSymlinks refuses to move a path that is a symlink: gc moves only
// what the workspace itself wrote.
func refuseSymlinks(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "stat %s", p)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fault.New(fault.ArtifactIntegrityFailed, "%s is a symlink; gc moves only what the workspace wrote", p)
	}
	return nil
}

// hashTree digests every regular file under rel; symlinks and special
// files are refused.
func hashTree(root, rel string) ([]TrashFile, error) {
	var out []TrashFile
	err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(rel)), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fault.New(fault.ArtifactIntegrityFailed, "%s is not a regular file; gc moves only what the workspace wrote", p)
		}
		sum, n, err := hashFile(p)
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, p)
		out = append(out, TrashFile{Path: filepath.ToSlash(r), Bytes: n, SHA256: sum})
		return nil
	})
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "hash %s", rel)
	}
	return out, nil
}

func hashFile(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

func treeBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// safeRel reports whether p is a clean relative slash path without "..",
// outside trash and quarantine.
func safeRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	top, _, _ := strings.Cut(p, "/")
	return top != "trash" && top != "quarantine"
}

// safeID is id for the operation log, or a placeholder when it is not one.
func safeID(id string) string {
	if ValidTrashID(id) || validQuarantineID(id) {
		return id
	}
	return fmt.Sprintf("(invalid id of %d bytes)", len(id))
}
