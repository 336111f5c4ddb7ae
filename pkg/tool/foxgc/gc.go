package foxgc

import (
	"context"

	"github.com/flameox/flameox/pkg/cli"
)

// runRetention is `fox-gc gc|restore|purge` (filled by pkg/retention's work).
func runRetention(ctx context.Context, env *cli.Env, verb string, args []string) error {
	return cli.Usagef("%s is not built yet", verb)
}

// runQuarantine is `fox-gc quarantine list|show|restore`.
func runQuarantine(ctx context.Context, env *cli.Env, args []string) error {
	return cli.Usagef("quarantine is not built yet")
}
