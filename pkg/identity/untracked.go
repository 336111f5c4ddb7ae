package identity

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/digest"
)

// maxListBytes bounds the output of `git ls-files --others`.
const maxListBytes int64 = 64 << 20

var (
	errTooMany = errors.New("too many untracked files")
	// errNotCheckout: the project root is not the top level of a
	// checkout, so its untracked files are not hashed.
	errNotCheckout = errors.New("not the top level of a git checkout")
	errTooLarge    = errors.New("untracked files exceed the byte limit")
)

// untrackedEntry is one untracked path as it enters the untracked digest.
// Regular files contribute their content digest and executable bit;
// symlinks the digest of their target text (never the target's content, and
// never the target path itself, which may name a home directory); other
// entries only their type.
type untrackedEntry struct {
	Path    string `json:"path,omitempty"`
	PathHex string `json:"path_hex,omitempty"` // for names that are not UTF-8
	Type    string `json:"type"`
	SHA256  string `json:"sha256,omitempty"`
	Exec    bool   `json:"exec,omitempty"`
}

// untrackedInputs digests the untracked, not-ignored files of the project
// into s and returns how many there are. Exceeding o.MaxUntrackedFiles or
// o.MaxUntrackedBytes is an error: an unpinned input must not look pinned.
func untrackedInputs(g git, o Options, excludes []string, s *SourceState, proceed func() bool) (int, error) {
	limit := min(int64(o.MaxUntrackedFiles+1)*4097, maxListBytes)
	args := append([]string{"ls-files", "--others", "--exclude-standard", "-z"}, pathspec(excludes)...)
	out, err := g.run(limit, args...)
	if err != nil {
		return 0, fmt.Errorf("list untracked files: %w", err)
	}
	var paths []string
	for p := range bytes.SplitSeq(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	if len(paths) > o.MaxUntrackedFiles {
		return 0, errTooMany
	}
	if !proceed() {
		return 0, errNotCheckout
	}
	slices.Sort(paths)

	entries := make([]untrackedEntry, 0, len(paths))
	var skipped []string
	budget := o.MaxUntrackedBytes
	for _, p := range paths {
		if err := g.ctx.Err(); err != nil {
			return 0, fmt.Errorf("hash untracked files: %w", err)
		}
		e, n, err := hashUntracked(g.root, p, budget)
		if err != nil {
			return 0, err
		}
		budget -= n
		if e.Type == "directory" {
			// A nested repository: git lists it, not its files, so its
			// content is not pinned.
			return 0, fmt.Errorf("untracked nested repository %q", e.Path)
		}
		if e.Type != "file" {
			skipped = append(skipped, strings.ToValidUTF8(p, "\uFFFD"))
		}
		entries = append(entries, e)
	}
	id, err := digest.Of(entries)
	if err != nil {
		return 0, fmt.Errorf("digest untracked files: %w", err)
	}
	s.UntrackedDigest, s.UntrackedSkipped = id, skipped
	return len(entries), nil
}

// hashUntracked describes one untracked path relative to root, reading at
// most budget bytes, and returns the bytes read.
func hashUntracked(root, p string, budget int64) (untrackedEntry, int64, error) {
	e := untrackedEntry{Path: p}
	if !utf8.ValidString(p) {
		e.Path, e.PathHex = "", hex.EncodeToString([]byte(p))
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return e, 0, fmt.Errorf("git listed a path outside the project: %q", p)
	}
	full := filepath.Join(root, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if err != nil {
		return e, 0, fmt.Errorf("inspect untracked file: %w", err)
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		e.Type, e.Exec = "file", m.Perm()&0o111 != 0
	case m&fs.ModeSymlink != 0:
		target, err := os.Readlink(full)
		if err != nil {
			return e, 0, fmt.Errorf("read untracked symlink: %w", err)
		}
		e.Type, e.SHA256 = "symlink", digest.Bytes([]byte(target))
		return e, 0, nil
	case m.IsDir():
		e.Type = "directory"
		return e, 0, nil
	default:
		e.Type = "special" // FIFO, socket or device: nothing to read
		return e, 0, nil
	}
	if fi.Size() > budget {
		return e, 0, errTooLarge
	}

	f, err := openNoFollow(full)
	if err != nil {
		return e, 0, fmt.Errorf("open untracked file: %w", err)
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !now.Mode().IsRegular() || !os.SameFile(fi, now) {
		return e, 0, fmt.Errorf("untracked file %q changed while it was read", p)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, budget+1))
	if err != nil {
		return e, n, fmt.Errorf("read untracked file: %w", err)
	}
	if n > budget {
		return e, n, errTooLarge
	}
	e.SHA256 = digest.Prefix + hex.EncodeToString(h.Sum(nil))
	return e, n, nil
}
