package foxanalyze

import (
	"context"
	"fmt"
	"time"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

const usage = `usage: fox-analyze <hotspots|callers|callees|examples|diff> INPUT [FRAME_ID|REGEXP|CANDIDATE] [flags]
       fox-analyze scaling EXPERIMENT_ID [--metric M] [--variant V] [--parameter P] [--limit N] [--record]
       fox-analyze memory RUN_ARTIFACT_OR_RUN_SET [--against CANDIDATE] [--limit N] [--points N] [--metric M] [--threshold T] [--record]
       fox-analyze execution RUN [--against RUN2] [--limit N] [--record]
       fox-analyze pytorch RUN_OR_ARTIFACT [--sort self|total|device|count] [--limit N] [--record]
       fox-analyze failures [--since TIME] [--workload W] [--limit N] [--record]`

// Run is fox-analyze's entry point.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	env.Mode = cli.Records
	if handled, err := cli.HelpVerb(env, usage, args); handled {
		return err
	}
	verb := args[0]
	switch verb {
	case "scaling":
		return runScaling(ctx, env, args[1:])
	case "memory":
		return runMemory(ctx, env, args[1:])
	case "execution":
		return runExecution(ctx, env, args[1:])
	case "pytorch":
		return runPyTorch(ctx, env, args[1:])
	case "failures":
		return runFailures(ctx, env, args[1:])
	}
	fs := cli.NewFlags(env, "fox-analyze "+verb, usage)
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	rec := fs.Bool("record", false, "write an analysis record for fox-publish instead of the result")
	var req analysis.HotspotsRequest
	req.VerbFlags(fs)
	if err := cli.Parse(fs, args[1:]); err != nil {
		return err
	}
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	if req.Input, err = inputOf(env, fs); err != nil {
		return err
	}
	started := env.Now()
	var res analysis.Recordable
	switch verb {
	case "hotspots":
		res, err = analysis.Hotspots(ctx, ws, req)
	case "callers", "callees", "examples":
		if fs.NArg() != 2 {
			return cli.Usagef("%s needs INPUT and a FRAME_ID or a regexp of function names", verb)
		}
		if req.Focus != "" || req.Ignore != "" {
			return cli.Usagef("--focus and --ignore filter hotspots only")
		}
		req := req.Stacks(fs.Arg(1))
		switch verb {
		case "callers":
			res, err = analysis.Callers(ctx, ws, req)
		case "callees":
			res, err = analysis.Callees(ctx, ws, req)
		default:
			res, err = analysis.Examples(ctx, ws, req)
		}
	case "diff":
		if fs.NArg() != 2 {
			return cli.Usagef("diff needs BASE (INPUT) and CANDIDATE")
		}
		if req.Thread != "" || req.Process != "" {
			return cli.Usagef("--thread and --process do not filter a diff")
		}
		res, err = analysis.Diff(ctx, ws, analysis.DiffRequest{Base: req.Input, Candidate: fs.Arg(1), SampleType: req.SampleType,
			Focus: req.Focus, Ignore: req.Ignore, Limit: req.Limit, Cursor: req.Cursor})
	default:
		return cli.Usagef("unknown verb %q", verb)
	}
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

// inputOf returns the INPUT argument, reading records from stdin for "-".
func inputOf(env *cli.Env, fs *pflag.FlagSet) (string, error) {
	if fs.NArg() < 1 {
		return "", cli.Usagef("missing INPUT (a run id, an artifact id, or - for records on stdin)")
	}
	if fs.Arg(0) != "-" {
		return fs.Arg(0), nil
	}
	r := record.NewReader(env.Stdin, "<stdin>")
	last := ""
	for r.Scan() {
		raw, ok := r.Record().(*record.Raw)
		if !ok {
			fmt.Fprintln(env.Stderr, "fox-analyze:", r.Record())
			continue
		}
		switch raw.Record {
		case record.KindRun:
			var rr run.Record
			if raw.Decode(&rr) == nil {
				last = rr.RunID
			}
		case record.KindGeneration:
			var g corpus.GenerationRecord
			if raw.Decode(&g) == nil && len(g.InputRunIDs) > 0 {
				last = g.InputRunIDs[0]
			}
		}
	}
	if err := r.Err(); err != nil {
		return "", err
	}
	if last == "" {
		return "", cli.Usagef("no run or generation record on stdin")
	}
	return last, nil
}
