//go:build unix

package identity

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestNotARepository(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "main.go", "package main\n")
	s := collect(t, dir)
	wantQuality(t, s, QualityPartial, "git_diff", "git_head", "submodules", "untracked_inputs")
	if s.HeadCommit != "" || s.DiffDigest != "" || s.UntrackedDigest != "" || s.Submodules != "" {
		t.Fatalf("git fields set outside a repository: %+v", s)
	}
	// Without a .git entry no git process is started at all.
	rec := &recordingRunner{next: execRunner{}}
	collect(t, dir, func(o *Options) { o.Runner = rec })
	if len(rec.calls) != 0 {
		t.Errorf("git ran outside a repository: %v", rec.calls)
	}
	// A project inside someone else's repository (a monorepo, a dotfiles
	// repository in $HOME) must not borrow that repository's state.
	repo := newRepo(t)
	sub := filepath.Join(repo, "sub")
	writeFile(t, repo, "sub/x.go", "package x\n")
	wantQuality(t, collect(t, sub), QualityPartial, "git_diff", "git_head", "submodules", "untracked_inputs")
	// Without a runner or with a relative root nothing git-derived is known.
	wantQuality(t, collect(t, repo, func(o *Options) { o.Runner = nil }),
		QualityPartial, "git_diff", "git_head", "submodules", "untracked_inputs")
	wantQuality(t, collect(t, "relative/root"),
		QualityPartial, "git_diff", "git_head", "submodules", "untracked_inputs")
}

func TestRepositoryWithoutCommits(t *testing.T) {
	dir := t.TempDir()
	gitCmd(t, dir, "init", "-q")
	writeFile(t, dir, "a.txt", "a")
	s := collect(t, dir)
	wantQuality(t, s, QualityPartial, "git_diff", "git_head")
	if s.UntrackedDigest == "" || s.Fields["untracked_files"] != "1" {
		t.Fatalf("untracked inputs should still be pinned: %+v", s)
	}
}

func TestBounds(t *testing.T) {
	dir := newRepo(t)
	for i := range 3 {
		writeFile(t, dir, "u/"+string(rune('a'+i)), strings.Repeat("x", 100))
	}
	wantQuality(t, collect(t, dir, func(o *Options) { o.MaxUntrackedFiles = 3 }), QualityExact)
	wantQuality(t, collect(t, dir, func(o *Options) { o.MaxUntrackedFiles = 2 }), QualityPartial, "untracked_inputs")
	wantQuality(t, collect(t, dir, func(o *Options) { o.MaxUntrackedBytes = 300 }), QualityExact)
	wantQuality(t, collect(t, dir, func(o *Options) { o.MaxUntrackedBytes = 299 }), QualityPartial, "untracked_inputs")

	writeFile(t, dir, "main.go", strings.Repeat("// grow the diff\n", 100))
	defer func(old int64) { maxDiffBytes = old }(maxDiffBytes)
	maxDiffBytes = 512
	s := collect(t, dir)
	wantQuality(t, s, QualityPartial, "git_diff")
	if s.DiffDigest != "" {
		t.Fatal("over-limit diff was digested")
	}
}

func TestSpecialFilesAndNestedRepositories(t *testing.T) {
	dir := newRepo(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// git does not list FIFOs; they are not source inputs, and nothing
	// blocks on one.
	s := collect(t, dir)
	wantQuality(t, s, QualityClean)
	// Were one listed (swapped in after the listing), it is typed, not read.
	e, n, err := hashUntracked(dir, "pipe", 1<<20)
	if err != nil || n != 0 || e.Type != "special" || e.SHA256 != "" {
		t.Fatalf("hashUntracked(pipe) = %+v, %d, %v", e, n, err)
	}
	if _, _, err := hashUntracked(dir, "../escape", 1<<20); err == nil {
		t.Fatal("a path outside the project was accepted")
	}
	// An untracked nested repository is listed by git as one directory; its
	// content is not pinned, so untracked inputs are unknown.
	nested := filepath.Join(dir, "vendor/other")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, nested, "init", "-q")
	writeFile(t, nested, "f", "x")
	gitCmd(t, nested, "add", ".")
	gitCmd(t, nested, "commit", "-q", "-m", "n")
	wantQuality(t, collect(t, dir), QualityPartial, "untracked_inputs")
}

func TestSubmodules(t *testing.T) {
	lib := newRepo(t)
	dir := newRepo(t)
	without := collect(t, dir)
	gitCmd(t, dir, "submodule", "add", "-q", lib, "lib")
	gitCmd(t, dir, "commit", "-q", "-m", "add lib")
	rec := &recordingRunner{next: execRunner{}}
	with := collect(t, dir, func(o *Options) { o.Runner = rec })
	if !slices.ContainsFunc(rec.calls, func(c call) bool { return slices.Contains(c.argv, "--stage") }) {
		t.Error("a project with .gitmodules did not list its gitlinks")
	}
	wantQuality(t, with, QualityClean)
	if with.Submodules == without.Submodules {
		t.Fatal("submodule not reflected")
	}
	// Uncommitted work inside the submodule is not pinned by the diff.
	writeFile(t, filepath.Join(dir, "lib"), "main.go", "package main // dirty\n")
	wantQuality(t, collect(t, dir), QualityPartial, "submodule_worktree")
}

// TestGitEnvironmentIsExact checks every git call gets exactly GitEnv and
// that nothing from a hostile parent environment reaches git or the record.
func TestGitEnvironmentIsExact(t *testing.T) {
	secrets := sensitiveEnv(t)
	dir := newRepo(t)
	writeFile(t, dir, "untracked.txt", "u")
	rec := &recordingRunner{next: execRunner{}}
	s := collect(t, dir, func(o *Options) { o.Runner = rec })
	wantQuality(t, s, QualityExact)
	real, _ := filepath.EvalSymlinks(dir)
	for _, c := range rec.calls {
		if c.argv[0] != "git" || c.dir != real || !slices.Equal(c.env, GitEnv(real)) {
			t.Errorf("%v in %q with env %v", c.argv, c.dir, c.env)
		}
	}
	// HEAD is read from .git's files, and without .gitmodules the index's
	// gitlinks are not listed (HEAD and the diff pin them): two git
	// processes, the diff and the untracked list.
	if len(rec.calls) != 2 {
		t.Errorf("expected diff and ls-files --others; got %d calls: %v", len(rec.calls), rec.calls)
	}
	assertNoLeak(t, s, rec, secrets)
	if strings.Contains(s.ExecutablePath, "/") {
		t.Errorf("executable outside the project recorded with a path: %q", s.ExecutablePath)
	}
}

func TestExcludeValidation(t *testing.T) {
	dir := newRepo(t)
	for _, bad := range []string{"/abs", "../up", ".", ""} {
		s := collect(t, dir, func(o *Options) { o.Exclude = []string{".diagnostics", bad} })
		wantQuality(t, s, QualityPartial, "exclude")
	}
	a := collect(t, dir, func(o *Options) { o.Exclude = []string{"b/", "a", "b"} })
	if a.Fields["exclude"] != `["a","b"]` {
		t.Fatalf("exclude field %q", a.Fields["exclude"])
	}
	// Exclusions are part of the identity: they change what is covered.
	if b := collect(t, dir); b.SourceStateID == a.SourceStateID {
		t.Fatal("different exclusions, same id")
	}
	var o Options
	if got := CollectSource(context.Background(), o); got.IdentityQuality != QualityPartial {
		t.Fatalf("zero Options: %s", got.IdentityQuality)
	}
}
