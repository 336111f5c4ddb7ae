package foxanalyze

import (
	"context"
	"time"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/workspace"
)

// memoryUsage is fox-analyze memory's synopsis.
const memoryUsage = "usage: fox-analyze memory RUN_ARTIFACT_OR_RUN_SET [--against CANDIDATE] [--limit N] [--points N] [--metric M] [--threshold T] [--record]"

// runMemory is `fox-analyze memory INPUT [--against CANDIDATE] …`: the
// memory recipe of flameox analyze memory (and, for two run sets, the
// comparison that judges the growth) as an analysis_result record, or
// with --record the analysis record for fox-publish.
func runMemory(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "fox-analyze memory", memoryUsage)
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	rec := fs.Bool("record", false, "write an analysis record for fox-publish instead of the result")
	var req compare.MemoryRequest
	req.Flags(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("memory needs one RUN_ARTIFACT_OR_RUN_SET")
	}
	req.Input = fs.Arg(0)
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	started := env.Now()
	res, err := compare.Memory(ctx, ws, req)
	if err != nil {
		return err
	}
	w := record.NewWriter(env.Stdout)
	if *rec {
		r, err := analysis.NewRecord(ws.Root, res.MemoryResult, started, time.Now())
		if err != nil {
			return err
		}
		return w.Write(r)
	}
	return w.Write(record.NewResult("analysis_result", res))
}
