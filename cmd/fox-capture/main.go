// Command fox-capture imports and captures evidence; see pkg/tool/foxcapture.
package main

import (
	"os"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/tool/foxcapture"
)

func main() { os.Exit(cli.Main("fox-capture", foxcapture.Run)) }
