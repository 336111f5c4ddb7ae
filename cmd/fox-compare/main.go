// Command fox-compare compares frozen run sets; see pkg/tool/foxcompare.
package main

import (
	"os"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/tool/foxcompare"
)

func main() { os.Exit(cli.Main("fox-compare", foxcompare.Run)) }
