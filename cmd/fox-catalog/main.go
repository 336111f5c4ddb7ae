// Command fox-catalog is the catalog and query plumbing; see pkg/tool/foxcatalog.
package main

import (
	"os"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/tool/foxcatalog"
)

func main() { os.Exit(cli.Main("fox-catalog", foxcatalog.Run)) }
