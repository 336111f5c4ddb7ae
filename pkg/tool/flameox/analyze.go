package flameox

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/spf13/pflag"
)

func analyzeHotspots(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("analyze hotspots", "RUN_OR_ARTIFACT [--limit N] [--sample-type T] [--thread T] [--process P] [--record]")
	var req analysis.HotspotsRequest
	fs.IntVar(&req.Limit, "limit", 20, "frames to return (max 1000)")
	fs.StringVar(&req.SampleType, "sample-type", "", "sample type (default: the profile's default)")
	fs.StringVar(&req.Thread, "thread", "", "only samples of this thread")
	fs.StringVar(&req.Process, "process", "", "only samples of this process")
	fs.StringVar(&req.Cursor, "cursor", "", "continue after a previous page")
	rec := fs.Bool("record", false, "persist the analysis (with its commit and inputs) in the corpus")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("flameox analyze hotspots needs one RUN_OR_ARTIFACT")
	}
	req.Input = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	started := c.Env.Now()
	res, err := analysis.Hotspots(ctx, ws, req)
	if err != nil {
		return err
	}
	out := analysis.HotspotsOutput{HotspotsResult: res}
	if *rec {
		if out.Recorded, err = c.record(ctx, res, started); err != nil {
			return err
		}
	}
	return c.emit(out, func(w io.Writer) { renderHotspots(w, res, out.Recorded) })
}

// record persists a result as an analysis in a new generation.
func (c *Context) record(ctx context.Context, res analysis.Recordable, started time.Time) (*analysis.Recorded, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, err
	}
	return analysis.Persist(ctx, c.publisher(ws), res, started, c.Env.Now())
}

func renderHotspots(w io.Writer, res *analysis.HotspotsResult, rec *analysis.Recorded) {
	fmt.Fprintf(w, "%s of %s (%s), run %s\n", cli.Name(res.SampleType.Type), cli.Name(res.Source.DisplayName), res.Source.ArtifactID, res.Source.RunID)
	fmt.Fprintf(w, "total %s over %d sample record(s); %.1f%% symbolized; commit %s\n",
		formatValue(res.SampleType.Total, res.SampleType.Unit), res.SampleType.Samples, 100*res.SymbolizedFraction, corpus.Short(res.CorpusCommitID))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flat\tflat%\tcum\tcum%\t function\t")
	for _, r := range res.Rows {
		loc := ""
		if r.File != "" {
			loc = "  " + cli.Name(r.File)
		}
		fmt.Fprintf(tw, "%s\t%.2f%%\t%s\t%.2f%%\t %s%s\t\n", formatValue(r.Self, res.SampleType.Unit), 100*r.SelfFraction,
			formatValue(r.Inclusive, res.SampleType.Unit), 100*r.InclusiveFraction, cli.Name(r.Function), loc)
	}
	tw.Flush()
	footer(w, res.Returned, res.Total, res.Truncated, res.Cursor)
	for _, l := range res.Limitations {
		fmt.Fprintf(w, "limitation: %s\n", cli.Safe(l))
	}
	if len(res.Rows) > 0 {
		fmt.Fprintf(w, "top frame id: %s\n", res.Rows[0].FrameID)
	}
	for _, n := range res.NextSteps {
		fmt.Fprintf(w, "next: %s\n", n)
	}
	if rec != nil {
		fmt.Fprintf(w, "recorded as analysis %s in commit %s\n", rec.AnalysisID, corpus.Short(rec.CorpusCommitID))
	}
}

func formatValue(v int64, unit string) string {
	switch unit {
	case "nanoseconds":
		return fmt.Sprintf("%.2fs", float64(v)/1e9)
	case "bytes":
		return bytesHuman(v)
	}
	return fmt.Sprint(v)
}

func stacksFlags(c *Context, name string, req *analysis.StacksRequest, defLimit int) *pflag.FlagSet {
	fs := c.flags(name, "RUN_OR_ARTIFACT FRAME_ID [--limit N] [--sample-type T] [--thread T] [--process P] [--cursor C]")
	fs.IntVar(&req.Limit, "limit", defLimit, "rows to return (max 1000)")
	fs.StringVar(&req.SampleType, "sample-type", "", "sample type (default: the profile's default)")
	fs.StringVar(&req.Thread, "thread", "", "only samples of this thread")
	fs.StringVar(&req.Process, "process", "", "only samples of this process")
	fs.StringVar(&req.Cursor, "cursor", "", "continue after a previous page")
	return fs
}

func stacksEdges(callers bool) func(ctx context.Context, c *Context, args []string) error {
	return func(ctx context.Context, c *Context, args []string) error {
		name := "stacks callees"
		if callers {
			name = "stacks callers"
		}
		var req analysis.StacksRequest
		fs := stacksFlags(c, name, &req, 20)
		if err := c.parse(fs, args); err != nil {
			return err
		}
		if fs.NArg() != 2 {
			return cli.Usagef("flameox %s needs RUN_OR_ARTIFACT and FRAME_ID", name)
		}
		req.Input, req.FrameID = fs.Arg(0), fs.Arg(1)
		ws, err := c.workspace()
		if err != nil {
			return err
		}
		fn := analysis.Callees
		if callers {
			fn = analysis.Callers
		}
		res, err := fn(ctx, ws, req)
		if err != nil {
			return err
		}
		return c.emit(res, func(w io.Writer) {
			dir := "callees of"
			if callers {
				dir = "callers of"
			}
			fmt.Fprintf(w, "%s %s (%s, cum %s)\n", dir, cli.Name(res.Focus.Function), cli.Name(res.SampleType.Type), formatValue(res.Focus.Inclusive, res.SampleType.Unit))
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			for _, e := range res.Edges {
				fmt.Fprintf(tw, "  %s\t%.1f%%\t%s\t%s\n", formatValue(e.Value, res.SampleType.Unit), 100*e.Fraction, cli.Name(e.Function), e.FrameID)
			}
			tw.Flush()
			footer(w, res.Returned, res.Total, res.Truncated, res.Cursor)
			for _, l := range res.Limitations {
				fmt.Fprintf(w, "limitation: %s\n", cli.Safe(l))
			}
		})
	}
}

func stacksExamples(ctx context.Context, c *Context, args []string) error {
	var req analysis.StacksRequest
	fs := stacksFlags(c, "stacks examples", &req, 5)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return cli.Usagef("flameox stacks examples needs RUN_OR_ARTIFACT and FRAME_ID")
	}
	req.Input, req.FrameID = fs.Arg(0), fs.Arg(1)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := analysis.Examples(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "stacks through %s (%s)\n", cli.Name(res.Focus.Function), cli.Name(res.SampleType.Type))
		for i, ex := range res.Examples {
			fmt.Fprintf(w, "#%d  %s (%.1f%% of the frame)", i+1, formatValue(ex.Value, res.SampleType.Unit), 100*ex.Fraction)
			if ex.Thread != "" {
				fmt.Fprintf(w, "  thread %s", cli.Name(ex.Thread))
			}
			fmt.Fprintln(w)
			if ex.Truncated {
				fmt.Fprintf(w, "    … %d root-side frames omitted\n", ex.Depth-len(ex.Frames))
			}
			for _, f := range ex.Frames {
				mark := "  "
				if f.Focus {
					mark = "> "
				}
				fmt.Fprintf(w, "  %s%s\n", mark, cli.Name(f.Function))
			}
		}
		footer(w, res.Returned, res.Total, res.Truncated, res.Cursor)
		for _, l := range res.Limitations {
			fmt.Fprintf(w, "limitation: %s\n", cli.Safe(l))
		}
	})
}

func openCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("open", "ARTIFACT_ID [--launch]")
	launch := fs.Bool("launch", false, "run the viewer (CLI only; refused with --json)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("flameox open needs one ARTIFACT_ID")
	}
	if *launch && c.JSON {
		return fault.New(fault.ExecutionRefused, "--launch runs an interactive viewer and cannot be combined with --json").
			Fix("Use `flameox open ID --json` for the plan, or `flameox open ID --launch` in a terminal.")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	plan, err := analysis.Viewer(ctx, ws, all.Registry(), fs.Arg(0))
	if err != nil {
		return err
	}
	if !*launch {
		return c.emit(plan, func(w io.Writer) {
			fmt.Fprintf(w, "%s\n", quoteArgv(plan.Argv))
			if plan.Note != "" {
				fmt.Fprintf(w, "# %s\n", cli.Safe(plan.Note))
			}
			for _, r := range plan.Remediation {
				fmt.Fprintf(w, "# %s\n", cli.Safe(r))
			}
		})
	}
	if !plan.Available {
		return fault.New(fault.CapabilityUnavailable, "%s is not installed", plan.Argv[0]).Fix(plan.Remediation...)
	}
	env, _ := broker.ChildEnv(c.Env.Environ(), []string{"PATH", "HOME", "DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "TERM", "LANG", "LC_*", "XDG_*", "GOPATH", "GOCACHE", "GOROOT"}, nil, nil)
	fmt.Fprintf(c.Env.Stderr, "flameox: launching %s (Ctrl-C to stop)\n", quoteArgv(plan.Argv))
	_, err = broker.Run(ctx, broker.Spec{Argv: plan.Argv, Dir: ws.ProjectRoot, Env: env, Stdin: c.Env.Stdin,
		Stdout: c.Env.Stdout, Stderr: c.Env.Stderr, StdoutLimit: 1 << 30, StderrLimit: 1 << 30})
	if fault.Is(err, fault.ProcessCancelled) {
		return nil
	}
	return err
}

var _ = strings.Join
