package identity

import (
	"os"
	"path/filepath"
	"testing"
)

// readHead agrees with `git rev-parse HEAD^{commit}` wherever it answers,
// and leaves every unusual layout to git.
func TestReadHead(t *testing.T) {
	check := func(t *testing.T, dir string, wantOK bool) {
		t.Helper()
		head, ok := readHead(dir)
		if ok != wantOK {
			t.Fatalf("readHead ok = %v, want %v", ok, wantOK)
		}
		if ok {
			if want := gitCmd(t, dir, "rev-parse", "HEAD^{commit}"); head != want {
				t.Fatalf("readHead = %s, git says %s", head, want)
			}
		}
	}
	t.Run("branch", func(t *testing.T) { check(t, newRepo(t), true) })
	t.Run("packed", func(t *testing.T) {
		dir := newRepo(t)
		gitCmd(t, dir, "pack-refs", "--all")
		if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "main")); err == nil {
			t.Fatal("ref still loose")
		}
		check(t, dir, true)
	})
	t.Run("detached", func(t *testing.T) {
		dir := newRepo(t)
		gitCmd(t, dir, "checkout", "-q", "--detach")
		check(t, dir, true)
	})
	t.Run("unborn", func(t *testing.T) {
		dir := t.TempDir()
		gitCmd(t, dir, "init", "-q")
		check(t, dir, false)
	})
	t.Run("worktree file", func(t *testing.T) {
		dir := newRepo(t)
		wt := filepath.Join(t.TempDir(), "wt")
		gitCmd(t, dir, "worktree", "add", "-q", wt)
		check(t, wt, false)
	})
	t.Run("core.worktree", func(t *testing.T) {
		dir := newRepo(t)
		gitCmd(t, dir, "config", "core.worktree", t.TempDir())
		check(t, dir, false)
	})
	t.Run("include", func(t *testing.T) {
		dir := newRepo(t)
		gitCmd(t, dir, "config", "include.path", "/dev/null")
		check(t, dir, false)
	})
	t.Run("symbolic chain", func(t *testing.T) {
		dir := newRepo(t)
		gitCmd(t, dir, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
		gitCmd(t, dir, "symbolic-ref", "HEAD", "refs/heads/alias")
		check(t, dir, false)
	})
	t.Run("no repository", func(t *testing.T) { check(t, t.TempDir(), false) })
	t.Run("oversized HEAD", func(t *testing.T) {
		dir := newRepo(t)
		head := filepath.Join(dir, ".git", "HEAD")
		b, _ := os.ReadFile(head)
		if err := os.WriteFile(head, append(b, make([]byte, 8<<10)...), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, dir, false)
	})
	t.Run("symlinked .git", func(t *testing.T) {
		repo := newRepo(t)
		dir := t.TempDir()
		if err := os.Symlink(filepath.Join(repo, ".git"), filepath.Join(dir, ".git")); err != nil {
			t.Fatal(err)
		}
		check(t, dir, false)
	})
}

// plainConfig never panics, and refuses any config that relocates the
// work tree, whatever surrounds the key.
func FuzzPlainConfig(f *testing.F) {
	f.Add("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
	f.Add("[core]\n\tbare = true\n")
	f.Add("[include]\n\tpath = x\n")
	f.Add("[extensions]\n\trefStorage = reftable\n")
	f.Fuzz(func(t *testing.T, cfg string) {
		plainConfig([]byte(cfg))
		if plainConfig([]byte(cfg + "\n[core]\n\tworktree = /elsewhere\n")) {
			t.Fatalf("accepted a relocated work tree after %q", cfg)
		}
	})
}
