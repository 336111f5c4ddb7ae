//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalColumns returns the width of the terminal f is, or 0 when it is
// not a terminal.
func terminalColumns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}
