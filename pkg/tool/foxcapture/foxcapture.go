// Package foxcapture is fox-capture, the plumbing tool that turns evidence
// into runs. It is the only tool that starts subprocesses (through
// pkg/broker) and the only one that stages and registers native artifacts.
//
// Usage:
//
//	fox-capture import [--kind K] [--sensitivity S] [--media-type T] [--producer P] PATH...
//
// Each import creates a new run and writes one `run` record (JSON line) on
// stdout; pipe them into fox-publish. Human messages go to stderr. Exit
// codes are those of every flameox tool (docs/exit-codes.md); `run` writes
// its run record and then exits with the status of the run's outcome
// (capture.RunExit), exactly as `flameox capture run` does.
package foxcapture

import (
	"context"
	"errors"
	"fmt"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/services"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
)

const usage = `usage: fox-capture <verb> [flags]

Verbs:
  import PATH...                                            import existing artifacts, one new run each
  plan ADAPTER --workload NAME [--parameters K=V,...|JSON]  print the capture plan (one capture_plan record)
  run ADAPTER --workload NAME [--parameters K=V,...|JSON]   capture an approved workload (one run record)
  recover                                                   close runs whose owner is provably gone (one recovery record)
  experiment plan NAME --adapter A                          print every trial of a declared experiment (one experiment_plan record)
  experiment run NAME --adapter A                           run every trial: experiment, variant, run, trial records, then experiment_run`

// Run is fox-capture's entry point.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	env.Mode = cli.Records
	if handled, err := cli.HelpVerb(env, usage, args); handled {
		return err
	}
	switch args[0] {
	case "import":
		return importCmd(ctx, env, args[1:])
	case "plan", "run", "recover":
		return captureCmd(ctx, env, args[0], args[1:])
	case "experiment":
		return experimentCmd(ctx, env, args[1:])
	}
	return cli.Usagef("unknown verb %q", args[0])
}

func importCmd(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "fox-capture import", "usage: fox-capture import [flags] PATH...")
	var imp capture.ImportRequest
	var wsDir string
	fs.StringVar(&wsDir, "workspace", "", "workspace directory (default: nearest .diagnostics)")
	imp.Flags(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("import needs at least one PATH")
	}
	ws, err := workspace.Discover(env.Dir, wsDir)
	if err != nil {
		return err
	}
	svc := services.Capture(ws, env.Now, env.Environ)
	w := record.NewWriter(env.Stdout)
	for _, path := range fs.Args() {
		req := imp
		req.Path = path
		req.RequestedBy = "cli"
		res, err := svc.ImportFrom(ctx, env.Dir, req)
		if err != nil {
			return err
		}
		if err := w.Write(run.NewRecord(ws.Root, res.Run)); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "fox-capture: imported %s as %s (run %s)\n", cli.Safe(path), res.ArtifactID, res.Run.RunID)
	}
	return nil
}

func captureCmd(ctx context.Context, env *cli.Env, verb string, args []string) error {
	fs := cli.NewFlags(env, "fox-capture "+verb, "usage: fox-capture "+verb+" [ADAPTER --workload NAME [--parameters KEY=VALUE[,KEY=VALUE]|JSON]...]")
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	name := fs.String("workload", "", "declared workload name")
	params := fs.StringArray("parameters", nil, workload.ParametersUsage)
	quiet := fs.BoolP("quiet", "q", false, "run: print no progress on stderr (progress shows only on a terminal)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	svc := services.Capture(ws, env.Now, env.Environ)
	w := record.NewWriter(env.Stdout)
	if verb == "recover" {
		res, err := svc.Recover(ctx)
		if err != nil {
			return err
		}
		if err := w.Write(record.NewResult("recovery", res)); err != nil {
			return err
		}
		store := &run.Store{Root: ws.Root}
		for _, r := range res.Closed {
			if m, err := store.Get(r.RunID); err == nil {
				if err := w.Write(run.NewRecord(ws.Root, m)); err != nil {
					return err
				}
			}
		}
		// A crashed experiment's remaining trials and its run sets, after
		// the runs they name; written, its journal is closed.
		for _, e := range res.Experiments {
			for i := range e.Trials {
				if err := w.Write(inquiry.New(ws.Root, &e.Trials[i])); err != nil {
					return err
				}
			}
			sets, err := capture.VariantRunSets(ctx, ws.Root, e.Result, true)
			if err != nil {
				return err
			}
			for i := range sets {
				if err := w.Write(inquiry.New(ws.Root, &sets[i])); err != nil {
					return err
				}
			}
			if err := svc.CloseJournal(e.ExperimentID, "recovered"); err != nil {
				return err
			}
		}
		return nil
	}
	if fs.NArg() != 1 || *name == "" {
		return cli.Usagef("%s needs ADAPTER and --workload NAME", verb)
	}
	values, err := workload.ParseParameterArgs(*params)
	if err != nil {
		return err
	}
	req := capture.PlanRequest{Adapter: fs.Arg(0), Workload: *name, Parameters: values}
	if verb == "plan" {
		p, err := svc.Plan(ctx, req)
		if err != nil {
			return err
		}
		return w.Write(record.NewResult("capture_plan", p))
	}
	if env.StderrTerminal && !*quiet {
		defer svc.ShowProgress(env.Stderr, env.Now)()
	}
	res, err := svc.Execute(ctx, req)
	var ab *capture.Abandoned
	if errors.As(err, &ab) {
		// The run is terminal: its record goes first, so fox-publish still
		// publishes it, then the error record says why it never ran.
		if werr := w.Write(run.NewRecord(ws.Root, ab.Run)); werr != nil {
			return werr
		}
		return ab.Err
	}
	if err != nil {
		return err
	}
	if err := w.Write(run.NewRecord(ws.Root, res.Run)); err != nil {
		return err
	}
	return capture.RunExit(res.Run)
}
