package retention

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMoveRefusesLinkedComponents: a symlink swapped in for a directory
// between the workspace and a path gc moves is refused, and nothing
// outside the workspace moves.
func TestMoveRefusesLinkedComponents(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "f"), []byte("keep me"), 0o600)
	os.MkdirAll(filepath.Join(root, "evidence", "runs"), 0o700)
	os.Symlink(outside, filepath.Join(root, "evidence", "runs", "generation=x"))
	os.Symlink(outside, filepath.Join(root, "trash"))
	os.MkdirAll(filepath.Join(root, "staging", "s"), 0o700)
	os.WriteFile(filepath.Join(root, "staging", "s", "payload"), []byte("p"), 0o600)
	tests := []struct{ name, src, dst string }{
		{"through a linked source directory", "evidence/runs/generation=x/f", "objects/f"},
		{"a linked source", "evidence/runs/generation=x", "objects/g"},
		{"into a linked trash", "staging/s", "trash/id/objects/staging/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := moveDurably(root, filepath.Join(root, tt.src), filepath.Join(root, tt.dst)); err == nil {
				t.Fatal("moved through a symlink")
			}
			if b, err := os.ReadFile(filepath.Join(outside, "f")); err != nil || string(b) != "keep me" {
				t.Fatal("a file outside the workspace moved")
			}
		})
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("something was created outside the workspace: %v", ents)
	}
	if _, err := os.Lstat(filepath.Join(root, "staging", "s", "payload")); err != nil {
		t.Fatal("the staging directory moved into the linked trash")
	}
}
