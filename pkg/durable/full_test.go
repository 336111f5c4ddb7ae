package durable

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/tinyfs"
)

// TestWritesOnAFullFileSystem: on a real full file system every write
// fails with an error that keeps ENOSPC and becomes STORAGE_FULL naming
// the directory, leaves the old content and no temporary or partial file.
func TestWritesOnAFullFileSystem(t *testing.T) {
	tfs := tinyfs.Mount(t, 1<<20)
	big := []byte(strings.Repeat("x", 64<<10))
	tests := []struct {
		name  string
		write func(path string) error
	}{
		{"WriteFile", func(p string) error { return WriteFile(p, big, 0o600) }},
		{"WriteJSON", func(p string) error { return WriteJSON(p, map[string]string{"k": string(big)}, 0o600) }},
		{"WriteVolatile", func(p string) error { return WriteVolatile(p, big, 0o600) }},
		{"CreateExclusive", func(p string) error { return CreateExclusive(p+".new", big, 0o600) }},
		{"CreateExclusiveAlias", func(p string) error { return CreateExclusiveAlias(p+".rev", p+".alias", big, 0o600) }},
		{"WriteSynced", func(p string) error { return WriteSynced(p+".staged", big, 0o600) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(tfs.Dir, tt.name)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "f.json")
			if err := WriteFile(path, []byte("old\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			tfs.Fill(t, 0)
			defer tfs.Free(t)
			err := tt.write(path)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("err %v, want ENOSPC in its chain", err)
			}
			fe := fault.As(err)
			if fe.Code != fault.StorageFull || fe.Details["directory"] != dir || !fe.Retryable {
				t.Fatalf("%+v", fe)
			}
			if strings.Count(fe.Message, dir) > 1 {
				t.Errorf("the message repeats the path: %s", fe.Message)
			}
			if got := read(t, path); got != "old\n" {
				t.Fatalf("old content lost: %q", got)
			}
			noTemps(t, dir)
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("left behind: %v", entries)
			}
		})
	}
}
