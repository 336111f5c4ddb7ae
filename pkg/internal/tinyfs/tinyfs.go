package tinyfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// FS is a mounted tiny file system.
type FS struct {
	// Dir is the mount point.
	Dir    string
	filler string
}

// Mount mounts a tmpfs of size bytes under t.TempDir() and unmounts it when
// the test ends, or skips the test saying why it cannot.
func Mount(t testing.TB, size int64) *FS {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tinyfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mount(dir, size); err != nil {
		unable(t, err)
	}
	// Registered after t.TempDir's own cleanup, so it runs first.
	t.Cleanup(func() { unmount(dir) })
	return &FS{Dir: dir, filler: filepath.Join(dir, ".filler")}
}

// Fill writes a filler file until the file system is full, then shrinks it
// so that about leave bytes are free (the file system counts whole pages).
func (f *FS) Fill(t testing.TB, leave int64) {
	t.Helper()
	file, err := os.OpenFile(f.filler, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	if err != nil {
		return // not even room for the filler: full already
	}
	defer file.Close()
	if _, err := file.Seek(0, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := file.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	st, err := file.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := file.Truncate(max(0, st.Size()-leave)); err != nil {
		t.Fatal(err)
	}
}

// Free removes the filler file.
func (f *FS) Free(t testing.TB) {
	t.Helper()
	if err := os.Remove(f.filler); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// unable skips: the test needs a mount this machine does not allow. Under
// CI=true it fails only when the mount should have worked: root holding
// CAP_SYS_ADMIN, refused for a reason other than a policy (EPERM, EACCES
// from a container's seccomp or LSM profile, which a CI runner may apply).
func unable(t testing.TB, err error) {
	t.Helper()
	if testenv.CI() && os.Geteuid() == 0 && hasSysAdmin() &&
		!errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EACCES) {
		t.Fatalf("CI=true, root with CAP_SYS_ADMIN, yet a tmpfs could not be mounted: %v", err)
	}
	testenv.Skip(t, "tmpfs mount", "not allowed", "needs a tiny tmpfs to fill (%v): run as root with CAP_SYS_ADMIN to test full-disk behaviour", err)
}
