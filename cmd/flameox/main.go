// Command flameox is the porcelain over flameox's tools; see pkg/tool/flameox.
package main

import (
	"os"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/tool/flameox"
)

func main() { os.Exit(cli.Main("flameox", flameox.Run)) }
