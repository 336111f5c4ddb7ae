// Command fox-analyze runs read-only analyses; see pkg/tool/foxanalyze.
package main

import (
	"os"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/tool/foxanalyze"
)

func main() { os.Exit(cli.Main("fox-analyze", foxanalyze.Run)) }
