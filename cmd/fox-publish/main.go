// Command fox-publish publishes evidence and advances corpus/HEAD; see pkg/tool/foxpublish.
package main

import (
	"os"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/tool/foxpublish"
)

func main() { os.Exit(cli.Main("fox-publish", foxpublish.Run)) }
