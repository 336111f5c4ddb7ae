package foxanalyze

import (
	"context"
	"time"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// Synopses of the recipe verbs.
const (
	executionUsage = "usage: fox-analyze execution RUN [--against RUN2] [--limit N] [--record]"
	pytorchUsage   = "usage: fox-analyze pytorch RUN_OR_ARTIFACT [--sort self|total|device|count] [--limit N] [--record]"
	failuresUsage  = "usage: fox-analyze failures [--since TIME] [--workload W] [--limit N] [--record]"
)

// recipe runs one analysis verb with its own flags: the result as an
// analysis_result record, or with --record the analysis record for
// fox-publish. args is the number of positional arguments it takes.
func recipe(ctx context.Context, env *cli.Env, name, usage string, args []string, positional int,
	flags func(*pflag.FlagSet), run func(context.Context, *workspace.Workspace, []string) (analysis.Recordable, error)) error {
	fs := cli.NewFlags(env, "fox-analyze "+name, usage)
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	rec := fs.Bool("record", false, "write an analysis record for fox-publish instead of the result")
	flags(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != positional {
		return cli.Usagef("%s", usage)
	}
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	started := env.Now()
	res, err := run(ctx, ws, fs.Args())
	if err != nil {
		return err
	}
	w := record.NewWriter(env.Stdout)
	if *rec {
		r, err := analysis.NewRecord(ws.Root, res, started, time.Now())
		if err != nil {
			return err
		}
		return w.Write(r)
	}
	return w.Write(record.NewResult("analysis_result", res))
}

// runExecution is `fox-analyze execution RUN [--against RUN2]`, the
// execution recipe of flameox analyze execution.
func runExecution(ctx context.Context, env *cli.Env, args []string) error {
	var req analysis.ExecutionRequest
	return recipe(ctx, env, "execution", executionUsage, args, 1, req.Flags,
		func(ctx context.Context, ws *workspace.Workspace, pos []string) (analysis.Recordable, error) {
			req.Input = pos[0]
			return analysis.Execution(ctx, ws, req)
		})
}

// runFailures is `fox-analyze failures`, the failures recipe of flameox
// analyze failures.
func runFailures(ctx context.Context, env *cli.Env, args []string) error {
	var req analysis.FailuresRequest
	return recipe(ctx, env, "failures", failuresUsage, args, 0, req.Flags,
		func(ctx context.Context, ws *workspace.Workspace, _ []string) (analysis.Recordable, error) {
			return analysis.Failures(ctx, ws, req)
		})
}

// runPyTorch is `fox-analyze pytorch RUN_OR_ARTIFACT`, the pytorch recipe
// of flameox analyze pytorch.
func runPyTorch(ctx context.Context, env *cli.Env, args []string) error {
	var req analysis.PyTorchRequest
	return recipe(ctx, env, "pytorch", pytorchUsage, args, 1, req.Flags,
		func(ctx context.Context, ws *workspace.Workspace, pos []string) (analysis.Recordable, error) {
			req.Input = pos[0]
			return analysis.PyTorch(ctx, ws, req)
		})
}
