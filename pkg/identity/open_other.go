//go:build !unix

package identity

import (
	"errors"
	"os"
)

// openNoFollow is unix-only; elsewhere untracked inputs are reported missing
// rather than read through a link.
func openNoFollow(string) (*os.File, error) {
	return nil, errors.New("opening without following symlinks is not supported on this platform")
}
