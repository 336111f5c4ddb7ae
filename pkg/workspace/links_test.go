package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

// TestOpenRefusesLinks: a symbolic link among the workspace's own
// directories and files (here pointing outside the project) makes Open
// fail with WORKSPACE_INVALID naming it; a link to the workspace itself
// does not.
func TestOpenRefusesLinks(t *testing.T) {
	for _, rel := range []string{"runs", "artifacts/sha256", "artifacts/sha256/ab", "corpus/commits", "corpus/HEAD", "evidence/runs", "config.toml", "staging"} {
		t.Run(rel, func(t *testing.T) {
			dir := t.TempDir()
			initAt(t, dir)
			root := filepath.Join(dir, DirName)
			outside := t.TempDir()
			p := filepath.Join(root, rel)
			if _, err := os.Lstat(p); err == nil {
				if err := os.Rename(p, filepath.Join(outside, "moved")); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Mkdir(filepath.Join(outside, "moved"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(outside, "moved"), p); err != nil {
				t.Fatal(err)
			}
			_, err := Open(root)
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.WorkspaceInvalid || fe.Details["file"] != rel {
				t.Fatalf("Open with %s a link: %v", rel, err)
			}
		})
	}
	dir := t.TempDir()
	initAt(t, dir)
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(filepath.Join(dir, DirName), link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(link); err != nil {
		t.Fatalf("a link to the workspace: %v", err)
	}
}
