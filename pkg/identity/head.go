package identity

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// readHead reads the HEAD commit of the repository whose work tree is
// root from the files of root/.git, when they are the plain case: a .git
// directory whose config neither relocates the work tree, marks the
// repository bare, includes other config nor stores refs in a reftable,
// and a HEAD that names a commit or a branch whose ref is a loose file or
// a line of packed-refs. Then root is git's top level and the commit is
// what `git rev-parse HEAD^{commit}` would print. Anything else (a linked
// worktree's .git file, an unborn branch, a symbolic chain) returns false
// and git is asked.
//
// Why: the rev-parse process was one of the git processes every capture
// starts, and on two cores each costs CPU time beside the capture's own
// work (docs/performance.md, "Capture orchestration overhead").
func readHead(root string) (head string, ok bool) {
	gd := filepath.Join(root, ".git")
	if fi, err := os.Lstat(gd); err != nil || !fi.IsDir() {
		return "", false
	}
	cfg, err := readSmall(filepath.Join(gd, "config"), 1<<20)
	if err != nil || !plainConfig(cfg) {
		return "", false
	}
	h, err := readSmall(filepath.Join(gd, "HEAD"), 4<<10)
	if err != nil {
		return "", false
	}
	line := strings.TrimSuffix(string(h), "\n")
	if isHash(line) {
		return line, true // detached
	}
	ref, found := strings.CutPrefix(line, "ref: ")
	if !found || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return "", false
	}
	if b, err := readSmall(filepath.Join(gd, filepath.FromSlash(ref)), 4<<10); err == nil {
		if v := strings.TrimSuffix(string(b), "\n"); isHash(v) {
			return v, true
		}
		return "", false // a symbolic ref, or something else
	}
	f, err := os.Open(filepath.Join(gd, "packed-refs"))
	if err != nil {
		return "", false // unborn branch, or refs elsewhere
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		hash, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && isHash(hash) {
			return hash, true
		}
	}
	return "", false
}

// readSmall reads a file of at most max bytes; a larger one is an error
// (a repository's HEAD, refs and config are small, and a hostile one must
// not make identity read gigabytes).
func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return b, err
}

// configKey matches a config line setting one of the keys that change
// where the work tree, the config or the refs are.
var configKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?im)^\s*(worktree|refstorage|path)\s*(=|$)|^\s*\[\s*include`)
})

// plainConfig reports whether a repository's config leaves the work tree
// at the parent of .git, is not bare (or says bare = false), includes no
// other file and keeps refs as files.
func plainConfig(cfg []byte) bool {
	if configKey().Match(cfg) {
		return false
	}
	// bare is fine only as "bare = false".
	for _, line := range bytes.Split(cfg, []byte("\n")) {
		k, v, ok := strings.Cut(strings.TrimSpace(string(line)), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "bare") && !strings.EqualFold(strings.TrimSpace(v), "false") {
			return false
		}
	}
	return true
}
