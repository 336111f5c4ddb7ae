package foxgc

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/integrity"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/services/publishing"
	"github.com/flameox/flameox/pkg/workspace"
)

// runValidate is `fox-gc validate [--level quick|standard|full]`: one
// `integrity_result` record; exit 5 when the workspace is not intact.
func runValidate(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "fox-gc validate", usage)
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	level := fs.String("level", "standard", "quick | standard | full")
	maxProblems := fs.Int("max-problems", 100, "problems listed (total counts them all)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	lv, ok := integrity.ParseLevel(*level)
	if !ok {
		return cli.Usagef("--level must be quick, standard or full, not %q", *level)
	}
	if *maxProblems < 1 {
		return cli.Usagef("--max-problems must be at least 1")
	}
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	res, err := integrity.ValidateWith(ctx, ws, lv, integrity.Options{MaxProblems: *maxProblems})
	if err != nil {
		return err
	}
	if err := record.NewWriter(env.Stdout).Write(record.NewResult("integrity_result", res)); err != nil {
		return err
	}
	return Verdict(res)
}

// Verdict is the exit of a validation: nil when valid, else exit 5 with a
// one-line summary (the result itself was written already).
func Verdict(res *integrity.IntegrityResult) error {
	if res.Valid {
		return nil
	}
	return &cli.NegativeResult{Code: fault.ExitIntegrity,
		Message: fmt.Sprintf("%s; `flameox repair` shows what a repair would do", res.Summary())}
}

// runRepair is `fox-gc repair [--apply PLAN_DIGEST]`: a `repair_plan`
// record, or with --apply a `repair_result` record.
func runRepair(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "fox-gc repair", usage)
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	apply := fs.String("apply", "", "carry out the plan with this plan_digest")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	w := record.NewWriter(env.Stdout)
	if *apply == "" {
		plan, err := integrity.Plan(ctx, ws)
		if err != nil {
			return err
		}
		return w.Write(record.NewResult("repair_plan", plan))
	}
	res, err := integrity.Apply(ctx, ws, *apply, publishing.Publisher(ws, env.Now))
	if res != nil && err == nil {
		return w.Write(record.NewResult("repair_result", res))
	}
	return err
}
