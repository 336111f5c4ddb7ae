package artifact

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
)

// ContentVersion is the artifact.json format version.
const ContentVersion = 1

// Content is artifact.json: facts about the bytes and nothing else.
type Content struct {
	SchemaVersion int       `json:"schema_version"`
	ArtifactID    string    `json:"artifact_id"`
	ByteLength    int64     `json:"byte_length"`
	PayloadName   string    `json:"payload_name"`
	SHA256        string    `json:"sha256"`
	HashedAt      time.Time `json:"hashed_at"`
}

// Store is the artifact store of one workspace.
type Store struct {
	// Root is the workspace root (the .diagnostics directory).
	Root string
	// AfterCopy, when set, runs after an import's copy and before the
	// source is checked again. Tests use it to change the source mid-import.
	AfterCopy func(src string)
	// MaxWorkspaceBytes, when positive, bounds the workspace's stored
	// bytes (storage.max_workspace_bytes): placing a new object beyond it
	// fails with STORAGE_FULL. Deduplicated objects add nothing.
	MaxWorkspaceBytes int64
	// Beneath, when set, is a directory (symlinks resolved) that an
	// import's source must be in: the file actually opened is checked,
	// so a directory above the source swapped for a symlink after the
	// caller resolved the path is refused before a byte is read. MCP
	// imports set it to the project root.
	Beneath string
}

var payloadName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^payload(\.[A-Za-z0-9][A-Za-z0-9._-]{0,15})?$`) })
var extPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\.[A-Za-z0-9][A-Za-z0-9_-]{0,15}$`) })

// PayloadExt picks a safe payload extension from a file name: the last
// extension, or the last two for compressed files (".pb.gz", ".json.gz").
func PayloadExt(name string) string {
	base := filepath.Base(name)
	ext := filepath.Ext(base)
	if !extPattern().MatchString(ext) {
		return ""
	}
	switch strings.ToLower(ext) {
	case ".gz", ".zst", ".xz", ".bz2":
		inner := filepath.Ext(strings.TrimSuffix(base, ext))
		if extPattern().MatchString(inner) && len(inner)+len(ext) <= 16 {
			return inner + ext
		}
	}
	return ext
}

func (s *Store) objectDir(hex string) string {
	return filepath.Join(s.Root, "artifacts", "sha256", hex[:2], hex)
}

// ObjectRel returns the workspace-relative directory of an object.
func ObjectRel(id string) string {
	hex := strings.TrimPrefix(id, "sha256:")
	if len(hex) < 2 {
		return ""
	}
	return "artifacts/sha256/" + hex[:2] + "/" + hex
}

// Place moves a staged payload into the store. The caller holds the
// workspace write lock. It returns the object's content facts and whether
// the object already existed (deduplicated). An existing object must agree
// on length, or the store is damaged (ARTIFACT_INTEGRITY_FAILED).
func (s *Store) Place(st *Staged, ext string) (Content, bool, error) {
	hex := strings.TrimPrefix(st.ArtifactID, "sha256:")
	dir := s.objectDir(hex)
	if c, err := s.readContent(hex); err == nil {
		s.noteSize(c.ByteLength)
		if c.ByteLength != st.Size {
			return Content{}, false, fault.New(fault.ArtifactIntegrityFailed, "stored object %s has length %d, staged copy has %d", st.ArtifactID, c.ByteLength, st.Size).With("object", ObjectRel(st.ArtifactID))
		}
		if fi, err := os.Lstat(filepath.Join(dir, c.PayloadName)); err != nil || !fi.Mode().IsRegular() || fi.Size() != c.ByteLength {
			return Content{}, false, fault.New(fault.ArtifactIntegrityFailed, "stored object %s lacks its payload", st.ArtifactID).With("object", ObjectRel(st.ArtifactID))
		}
		return c, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Content{}, false, err
	} else if st.Stored {
		return Content{}, false, fault.New(fault.ArtifactIntegrityFailed, "the stored object %s was removed while the same bytes were being imported", st.ArtifactID).
			With("object", ObjectRel(st.ArtifactID)).Retry().Fix("Import the file again.")
	}
	if s.MaxWorkspaceBytes > 0 {
		if used := StoredBytes(s.Root); used+st.Size > s.MaxWorkspaceBytes {
			return Content{}, false, fault.New(fault.StorageFull, "storing %s (%d bytes) would take the workspace to %d bytes, over storage.max_workspace_bytes (%d)", st.ArtifactID, st.Size, used+st.Size, s.MaxWorkspaceBytes).
				With("limit_key", "storage.max_workspace_bytes").With("limit", strconv.FormatInt(s.MaxWorkspaceBytes, 10)).
				With("used", strconv.FormatInt(used, 10)).With("needed", strconv.FormatInt(st.Size, 10)).
				Fix("Run `flameox gc` to see what retention can free, then `flameox gc --apply` and `flameox gc purge`.",
					"Or raise storage.max_workspace_bytes in .diagnostics/config.toml.").Retry()
		}
	}
	if !extPattern().MatchString(ext) && !(strings.Count(ext, ".") == 2 && payloadName().MatchString("payload"+ext)) {
		ext = ""
	}
	shard := filepath.Dir(dir)
	if err := os.MkdirAll(shard, 0o700); err != nil {
		return Content{}, false, fmt.Errorf("create shard %s: %w", shard, err)
	}
	tmp, err := os.MkdirTemp(shard, ".tmp-")
	if err != nil {
		return Content{}, false, fmt.Errorf("create object directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	c := Content{SchemaVersion: ContentVersion, ArtifactID: st.ArtifactID, ByteLength: st.Size,
		PayloadName: "payload" + ext, SHA256: hex, HashedAt: st.HashedAt}
	if err := os.Rename(st.Path, filepath.Join(tmp, c.PayloadName)); err != nil {
		return Content{}, false, fmt.Errorf("move staged payload: %w", err)
	}
	if err := os.Chmod(filepath.Join(tmp, c.PayloadName), 0o400); err != nil {
		return Content{}, false, err
	}
	if err := durable.WriteJSON(filepath.Join(tmp, "artifact.json"), c, 0o400); err != nil {
		return Content{}, false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return Content{}, false, fmt.Errorf("place object %s: %w", st.ArtifactID, err)
	}
	if err := durable.SyncDir(shard); err != nil {
		return Content{}, false, err
	}
	s.noteSize(c.ByteLength)
	return c, false, nil
}

// SizesDir is the workspace cache (cache/artifact-sizes) of the sizes of
// stored objects of at least sizeSeenMin bytes: an empty file per size.
// An import of a file of a size found there hashes it before copying it,
// and skips the copy when the store holds those bytes (a re-import of a
// large file cost a copy, and the removal of that copy, beside the hash;
// docs/performance.md). It is derived and may be deleted: a size missing
// only costs its next import the copy, a size left behind by gc only a
// second read.
const SizesDir = "cache/artifact-sizes"

// sizeSeenMin is the smallest object size noted: below it, a copy costs
// little more than the hash.
const sizeSeenMin = 1 << 20

// sizeSeen reports whether the store has noted an object of n bytes.
func (s *Store) sizeSeen(n int64) bool {
	if n < sizeSeenMin {
		return false
	}
	_, err := os.Lstat(filepath.Join(s.Root, SizesDir, strconv.FormatInt(n, 10)))
	return err == nil
}

// noteSize notes an object of n bytes in SizesDir; failures are ignored
// (the note only saves a later import a copy).
func (s *Store) noteSize(n int64) {
	if n < sizeSeenMin {
		return
	}
	dir := filepath.Join(s.Root, SizesDir)
	name := filepath.Join(dir, strconv.FormatInt(n, 10))
	if _, err := os.Lstat(name); err == nil {
		return
	}
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	if f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600); err == nil {
		f.Close()
	}
}

// StoredBytes is what storage.max_workspace_bytes counts: the regular
// files of the workspace except trash, quarantine, staging, caches and the
// derived catalog. It walks the workspace, so it is computed only when a
// limit is set.
func StoredBytes(root string) int64 {
	var n int64
	skip := map[string]bool{"trash": true, "quarantine": true, "staging": true, "cache": true}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != root && filepath.Dir(p) == root && skip[d.Name()] {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && !(filepath.Dir(p) == root && strings.HasPrefix(d.Name(), "catalog")) {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Stat returns the content facts of a stored object after checking that no
// component of its path is a symlink. It does not rehash; see Verify.
func (s *Store) Stat(id string) (Content, string, error) {
	hex, err := digest.Hex(id)
	if err != nil {
		return Content{}, "", fault.New(fault.InvalidArguments, "%q is not an artifact id (sha256:<64 hex>)", id)
	}
	c, err := s.readContent(hex)
	if errors.Is(err, fs.ErrNotExist) {
		return Content{}, "", fault.New(fault.NotFound, "artifact %s is not in the store", id).With("missing_entity", "artifact")
	}
	if err != nil {
		return Content{}, "", err
	}
	payload := filepath.Join(s.objectDir(hex), c.PayloadName)
	fi, err := os.Lstat(payload)
	if err != nil || !fi.Mode().IsRegular() {
		return Content{}, "", fault.New(fault.ArtifactIntegrityFailed, "payload of %s is missing or not a regular file", id).With("object", ObjectRel(id))
	}
	return c, payload, nil
}

func (s *Store) readContent(hex string) (Content, error) {
	// Refuse symlinks anywhere between the workspace and the object.
	p := filepath.Join(s.Root, "artifacts")
	for _, part := range []string{"", "sha256", hex[:2], hex, "artifact.json"} {
		if part != "" {
			p = filepath.Join(p, part)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return Content{}, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return Content{}, fault.New(fault.ArtifactIntegrityFailed, "%s is a symlink inside the artifact store", p)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return Content{}, err
	}
	var c Content
	if err := json.Unmarshal(b, &c); err != nil {
		return Content{}, fault.Wrap(fault.ArtifactIntegrityFailed, err, "artifact.json of sha256:%s is damaged", hex)
	}
	if c.ArtifactID != "sha256:"+hex || !payloadName().MatchString(c.PayloadName) || c.ByteLength < 0 {
		return Content{}, fault.New(fault.ArtifactIntegrityFailed, "artifact.json of sha256:%s does not describe this object", hex)
	}
	return c, nil
}

// Verify rehashes a stored payload and compares it with its id and length.
func (s *Store) Verify(id string) error {
	c, payload, err := s.Stat(id)
	if err != nil {
		return err
	}
	f, err := os.Open(payload)
	if err != nil {
		return fault.Wrap(fault.ArtifactIntegrityFailed, err, "open payload of %s", id)
	}
	defer f.Close()
	sum, n, err := hashReader(f)
	if err != nil {
		return fault.Wrap(fault.ArtifactIntegrityFailed, err, "read payload of %s", id)
	}
	if n != c.ByteLength || sum != id {
		return fault.New(fault.ArtifactIntegrityFailed, "payload of %s changed: %d bytes hashing to %s", id, n, sum).With("object", ObjectRel(id))
	}
	return nil
}
