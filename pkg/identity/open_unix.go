//go:build unix

package identity

import (
	"os"
	"syscall"
)

// openNoFollow opens a file for reading without following a symlink in the
// last component (O_NOFOLLOW) and without blocking on a FIFO swapped in
// after it was inspected (O_NONBLOCK).
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}
