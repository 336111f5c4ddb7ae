//go:build !unix

package cli

import "os"

// terminalColumns is 0 (unknown) where flameox cannot ask the terminal.
func terminalColumns(*os.File) int { return 0 }
