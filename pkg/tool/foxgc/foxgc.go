package foxgc

import (
	"context"

	"github.com/flameox/flameox/pkg/cli"
)

const usage = `usage: fox-gc <verb> [flags]

Verbs:
  validate [--level quick|standard|full]
  repair [--apply PLAN_DIGEST]
  gc [--apply] | restore TRASH_ID | purge [--older-than D]
  quarantine list|show|restore`

// Run is fox-gc's entry point.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	env.Mode = cli.Records
	if handled, err := cli.HelpVerb(env, usage, args); handled {
		return err
	}
	switch args[0] {
	case "validate":
		return runValidate(ctx, env, args[1:])
	case "repair":
		return runRepair(ctx, env, args[1:])
	case "gc", "restore", "purge":
		return runRetention(ctx, env, args[0], args[1:])
	case "quarantine":
		return runQuarantine(ctx, env, args[1:])
	}
	return cli.Usagef("unknown verb %q\n%s", args[0], usage)
}
