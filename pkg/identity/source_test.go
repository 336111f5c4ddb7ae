//go:build unix

package identity

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/digest"
)

// newRepo creates a committed repository with a tracked file, an ignore
// rule and a .diagnostics directory that flameox excludes.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitCmd(t, dir, "init", "-q")
	writeFile(t, dir, "main.go", "package main\n\nfunc main() {}\n")
	writeFile(t, dir, ".gitignore", "*.log\nbuild/\n")
	gitCmd(t, dir, "add", ".")
	gitCmd(t, dir, "commit", "-q", "-m", "init")
	return dir
}

// testExe is an executable outside every test repository: the test binary.
func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func collect(t *testing.T, root string, edit ...func(*Options)) SourceState {
	t.Helper()
	o := Options{ProjectRoot: root, Executable: testExe(t), Runner: execRunner{},
		Timeout: 30 * time.Second, Exclude: []string{".diagnostics"}}
	for _, f := range edit {
		f(&o)
	}
	s := CollectSource(context.Background(), o)
	if err := s.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if s.MissingFields == nil || !slices.IsSorted(s.MissingFields) || s.RepositoryRoot != "." {
		t.Fatalf("bad record: missing %#v root %q", s.MissingFields, s.RepositoryRoot)
	}
	return s
}

func wantQuality(t *testing.T, s SourceState, q Quality, missing ...string) {
	t.Helper()
	if s.IdentityQuality != q || !slices.Equal(s.MissingFields, append([]string{}, missing...)) {
		t.Fatalf("quality %s missing %v, want %s missing %v", s.IdentityQuality, s.MissingFields, q, missing)
	}
}

func TestCleanRepo(t *testing.T) {
	dir := newRepo(t)
	s := collect(t, dir)
	wantQuality(t, s, QualityClean)
	if s.HeadCommit != gitCmd(t, dir, "rev-parse", "HEAD") {
		t.Errorf("HeadCommit %q", s.HeadCommit)
	}
	emptyList, _ := digest.Of([]any{})
	if s.DiffDigest != digest.Bytes(nil) || s.UntrackedDigest != emptyList || s.Submodules != digest.Bytes(nil) {
		t.Errorf("digests: diff %s untracked %s submodules %s", s.DiffDigest, s.UntrackedDigest, s.Submodules)
	}
	if s.Fields["untracked_files"] != "0" || s.Fields["exclude"] != `[".diagnostics"]` {
		t.Errorf("fields %v", s.Fields)
	}
	// Observed twice: same id, although observed_at differs.
	time.Sleep(2 * time.Millisecond)
	again := collect(t, dir)
	if again.SourceStateID != s.SourceStateID || again.ObservedAt.Equal(s.ObservedAt) {
		t.Errorf("ids %s / %s at %v / %v", s.SourceStateID, again.SourceStateID, s.ObservedAt, again.ObservedAt)
	}
	// Ignored files and excluded paths are not inputs.
	writeFile(t, dir, "debug.log", "noise")
	writeFile(t, dir, "build/out.bin", "noise")
	writeFile(t, dir, ".diagnostics/run/trace.txt", "noise")
	if s2 := collect(t, dir); s2.SourceStateID != s.SourceStateID {
		t.Errorf("ignored/excluded files changed the id: %v", s2.MissingFields)
	}
}

func TestModifiedTrackedFile(t *testing.T) {
	dir := newRepo(t)
	clean := collect(t, dir)
	writeFile(t, dir, "main.go", "package main\n\nfunc main() { println(1) }\n")
	a := collect(t, dir)
	wantQuality(t, a, QualityExact)
	if a.DiffDigest == clean.DiffDigest || a.HeadCommit != clean.HeadCommit {
		t.Fatal("modification not reflected in the diff digest")
	}
	writeFile(t, dir, "main.go", "package main\n\nfunc main() { println(2) }\n")
	b := collect(t, dir)
	if b.DiffDigest == a.DiffDigest || b.SourceStateID == a.SourceStateID {
		t.Fatal("a different change has the same digest")
	}
	writeFile(t, dir, "main.go", "package main\n\nfunc main() {}\n")
	if back := collect(t, dir); back.SourceStateID != clean.SourceStateID {
		t.Fatalf("reverting did not restore the clean id: %s", back.IdentityQuality)
	}
	// Deleting a tracked file is a change too.
	os.Remove(filepath.Join(dir, ".gitignore"))
	wantQuality(t, collect(t, dir), QualityExact)
}

func TestStagedOnlyChange(t *testing.T) {
	dir := newRepo(t)
	clean := collect(t, dir)
	writeFile(t, dir, "main.go", "package main\n\n// staged\nfunc main() {}\n")
	gitCmd(t, dir, "add", "main.go")
	if gitCmd(t, dir, "diff") != "" {
		t.Fatal("setup: work tree should match the index")
	}
	s := collect(t, dir)
	wantQuality(t, s, QualityExact)
	if s.DiffDigest == clean.DiffDigest {
		t.Fatal("staged-only change not detected")
	}
	// A new file that is only staged is covered by the diff as well.
	writeFile(t, dir, "added.go", "package main\n")
	gitCmd(t, dir, "add", "added.go")
	if s2 := collect(t, dir); s2.DiffDigest == s.DiffDigest || s2.Fields["untracked_files"] != "0" {
		t.Fatal("staged new file not in the diff")
	}
}

func TestUntrackedFiles(t *testing.T) {
	dir := newRepo(t)
	clean := collect(t, dir)
	writeFile(t, dir, "notes/input.csv", "a,b\n1,2\n")
	a := collect(t, dir)
	wantQuality(t, a, QualityExact)
	if a.UntrackedDigest == clean.UntrackedDigest || a.DiffDigest != clean.DiffDigest || a.Fields["untracked_files"] != "1" {
		t.Fatalf("untracked file: %+v", a)
	}
	writeFile(t, dir, "notes/input.csv", "a,b\n1,3\n")
	b := collect(t, dir)
	if b.UntrackedDigest == a.UntrackedDigest {
		t.Fatal("content change of an untracked file not detected")
	}
	if err := os.Chmod(filepath.Join(dir, "notes/input.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if c := collect(t, dir); c.UntrackedDigest == b.UntrackedDigest {
		t.Fatal("executable bit of an untracked file not detected")
	}
	// An ignored file changes nothing.
	os.Remove(filepath.Join(dir, "notes/input.csv"))
	writeFile(t, dir, "notes/debug.log", "x")
	if d := collect(t, dir); d.SourceStateID != clean.SourceStateID {
		t.Fatal("ignored file changed the id")
	}
}

// TestUntrackedSymlinkNotFollowed: a symlink to a file outside the project
// is listed and digested by its target text only; the target is never read
// and its path never recorded.
func TestUntrackedSymlinkNotFollowed(t *testing.T) {
	dir := newRepo(t)
	outside := filepath.Join(t.TempDir(), "secret-target.txt")
	if err := os.WriteFile(outside, []byte("secret v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	a := collect(t, dir)
	wantQuality(t, a, QualityExact)
	if !slices.Equal(a.UntrackedSkipped, []string{"link"}) {
		t.Fatalf("UntrackedSkipped = %v", a.UntrackedSkipped)
	}
	if err := os.WriteFile(outside, []byte("secret v2, longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := collect(t, dir)
	if b.SourceStateID != a.SourceStateID {
		t.Fatal("the symlink target's content leaked into the digest: it was followed")
	}
	if err := os.Chmod(outside, 0); err != nil { // unreadable target: still fine
		t.Fatal(err)
	}
	if c := collect(t, dir); c.SourceStateID != a.SourceStateID {
		t.Fatal("unreadable target changed the record")
	}
	os.Remove(filepath.Join(dir, "link"))
	if err := os.Symlink("main.go", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if d := collect(t, dir); d.UntrackedDigest == a.UntrackedDigest {
		t.Fatal("retargeting the symlink did not change the digest")
	}
	if strings.Contains(a.UntrackedDigest+strings.Join(a.UntrackedSkipped, ""), outside) {
		t.Fatal("target path recorded")
	}
}
