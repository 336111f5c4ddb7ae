// Command fox-gc is integrity validation, repair and retention; see pkg/tool/foxgc.
package main

import (
	"os"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/tool/foxgc"
)

func main() { os.Exit(cli.Main("fox-gc", foxgc.Run)) }
