package foxanalyze

import (
	"context"
	"time"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/workspace"
)

// runScaling is `fox-analyze scaling EXPERIMENT_ID [--metric M] [--variant
// V] [--parameter P] [--limit N] [--record]`: the scaling analysis of
// flameox analyze scaling as an analysis_result record, or with --record
// the analysis record for fox-publish. It has its own flags: none of the
// profile verbs' apply.
func runScaling(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "fox-analyze scaling", "usage: fox-analyze scaling EXPERIMENT_ID [--metric M] [--variant V] [--parameter P] [--limit N] [--record]")
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	rec := fs.Bool("record", false, "write an analysis record for fox-publish instead of the result")
	var req analysis.ScalingRequest
	req.Flags(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("scaling needs one EXPERIMENT_ID")
	}
	req.ExperimentID = fs.Arg(0)
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	started := env.Now()
	res, err := analysis.Scaling(ctx, ws, req)
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
