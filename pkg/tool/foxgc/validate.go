package foxgc

import (
	"context"

	"github.com/flameox/flameox/pkg/cli"
)

// runValidate is `fox-gc validate` (filled by pkg/integrity's work).
func runValidate(ctx context.Context, env *cli.Env, args []string) error {
	return cli.Usagef("validate is not built yet")
}

// runRepair is `fox-gc repair`.
func runRepair(ctx context.Context, env *cli.Env, args []string) error {
	return cli.Usagef("repair is not built yet")
}
