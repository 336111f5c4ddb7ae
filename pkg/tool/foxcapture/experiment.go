package foxcapture

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/experiment"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/services"
	"github.com/flameox/flameox/pkg/workspace"
)

// experimentCmd is `fox-capture experiment plan|run NAME --adapter A`.
// run writes, in order: the investigation (when it opens one), the
// experiment and variant records before any trial; each trial's run
// record as soon as the run is terminal; each block's trial records; and
// last an experiment_run record with the whole result. Piped into
// fox-publish, every record is published.
func experimentCmd(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) == 0 || (args[0] != "plan" && args[0] != "run") {
		return cli.Usagef("experiment needs plan or run")
	}
	verb := args[0]
	fs := cli.NewFlags(env, "fox-capture experiment "+verb, "usage: fox-capture experiment "+verb+" NAME --adapter ADAPTER [--investigation ID] [--hypothesis ID]")
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	var req capture.ExperimentRequest
	fs.StringVar(&req.Adapter, "adapter", "", "adapter that captures every trial (required)")
	fs.StringVar(&req.InvestigationID, "investigation", "", "investigation the experiment belongs to (default: open one)")
	fs.StringVar(&req.HypothesisID, "hypothesis", "", "hypothesis the experiment tests")
	quiet := fs.BoolP("quiet", "q", false, "run: print no progress on stderr")
	if err := cli.Parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 || req.Adapter == "" {
		return cli.Usagef("experiment %s needs NAME and --adapter ADAPTER", verb)
	}
	req.Experiment = fs.Arg(0)
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	svc := services.Capture(ws, env.Now, env.Environ)
	w := record.NewWriter(env.Stdout)
	if verb == "plan" {
		p, err := svc.PlanExperiment(ctx, req)
		if err != nil {
			return err
		}
		return w.Write(record.NewResult("experiment_plan", p))
	}
	sink := capture.ExperimentSink{
		Declared: func(bodies []any) error {
			for _, b := range bodies {
				if err := w.Write(inquiry.New(ws.Root, b)); err != nil {
					return err
				}
			}
			return nil
		},
		Ran: func(res *capture.Result) error { return w.Write(run.NewRecord(ws.Root, res.Run)) },
		Trials: func(ts []inquiry.Trial) error {
			for i := range ts {
				if err := w.Write(inquiry.New(ws.Root, &ts[i])); err != nil {
					return err
				}
			}
			return nil
		},
	}
	if env.StderrTerminal && !*quiet {
		sink.Trial = func(t experiment.Trial, of int) {
			fmt.Fprintf(env.Stderr, "fox-capture: trial %d/%d  %s  %s\n", t.Index, of, t.BlockID, cli.Safe(t.Variant))
		}
	}
	res, err := svc.RunExperiment(ctx, req, sink)
	if err != nil {
		return err
	}
	// One run set per variant, pinned at the HEAD the runs were captured
	// against: fox-publish publishes the runs above it in the same stream.
	sets, err := capture.VariantRunSets(context.WithoutCancel(ctx), ws.Root, res, true)
	if err != nil {
		return err
	}
	res.RunSets = sets
	for i := range sets {
		if err := w.Write(inquiry.New(ws.Root, &sets[i])); err != nil {
			return err
		}
	}
	if err := w.Write(record.NewResult("experiment_run", res)); err != nil {
		return err
	}
	return capture.ExperimentExit(res)
}
