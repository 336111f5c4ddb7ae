package flameox

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/spf13/pflag"
)

func analyzeHotspots(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("analyze hotspots", "RUN_OR_ARTIFACT [--limit N] [--sample-type T] [--focus RE] [--ignore RE] [--thread T] [--process P] [--format text|markdown|json] [--record]")
	var req analysis.HotspotsRequest
	req.Flags(fs, 20)
	format := fs.String("format", "text", "output: text (go tool pprof -top's columns), markdown, or json (as --json)")
	rec := fs.Bool("record", false, "persist the analysis (with its commit and inputs) in the corpus")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := c.outputFormat(*format, "text", "markdown"); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("analyze hotspots needs one RUN_OR_ARTIFACT")
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
	return c.emit(out, func(w io.Writer) {
		if *format == "markdown" {
			renderHotspotsMarkdown(w, res, out.Recorded)
			return
		}
		renderHotspots(w, res, out.Recorded, c.Env.Width())
	})
}

// record persists a result as an analysis in a new generation.
func (c *Context) record(ctx context.Context, res analysis.Recordable, started time.Time) (*analysis.Recorded, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, err
	}
	return analysis.Persist(ctx, c.publisher(ws), res, started, c.Env.Now())
}

// pprofPrefix is the width of go tool pprof -top's columns before a name:
// "%10s %s %s %10s %s  " with six-cell percentages.
const pprofPrefix = 10 + 1 + 6 + 1 + 6 + 1 + 10 + 1 + 6 + 2

// hotspotsHeader is the lines above the table: the choice of profile
// first when there was one (a run id read another profile than the user
// may expect), then pprof's header lines (type, duration and total,
// active filters, what is shown of how many).
func hotspotsHeader(res *analysis.HotspotsResult, vf analysis.ValueFormat) []string {
	var h []string
	if res.SourceNote != "" {
		h = append(h, cli.Safe(res.SourceNote))
	}
	st := res.SampleType
	h = append(h, fmt.Sprintf("Profile: %s (%s), run %s, commit %s", cli.Name(res.Source.DisplayName), res.Source.ArtifactID, res.Source.RunID, corpus.Short(res.CorpusCommitID)))
	h = append(h, "Type: "+cli.Name(st.Type))
	total := vf.Format(st.Total)
	if d := res.DurationNanos; d > 0 {
		ratio := ""
		if ns, u := analysis.Scale(st.Total, st.Unit, "nanoseconds"); u == "ns" && ns != 0 {
			ratio = " (" + analysis.Percentage(int64(ns), d) + ")"
		}
		h = append(h, fmt.Sprintf("Duration: %s, Total samples = %s%s", analysis.HumanDuration(d), total, ratio))
	}
	h = append(h, fmt.Sprintf("Sample records: %d; symbolized: %s", st.Samples, strings.TrimSpace(analysis.Percentage(int64(res.SymbolizedFraction*1e6), 1e6))))
	if p := res.Parameters; p.Focus != "" || p.Ignore != "" || p.Thread != "" || p.Process != "" {
		h = append(h, "Active filters:")
		for _, f := range [][2]string{{"focus", p.Focus}, {"ignore", p.Ignore}, {"thread", p.Thread}, {"process", p.Process}} {
			if f[1] != "" {
				h = append(h, "   "+f[0]+"="+cli.Cut(f[1], 80))
			}
		}
	}
	h = append(h, fmt.Sprintf("Showing nodes accounting for %s, %s of %s total", vf.Format(res.ShownSelf),
		strings.TrimSpace(analysis.Percentage(res.ShownSelf, st.Total)), total))
	first := 1
	if len(res.Rows) > 0 {
		first = res.Rows[0].Rank
	}
	switch {
	case len(res.Rows) == 0:
		h = append(h, fmt.Sprintf("No nodes shown out of %d", res.Total))
	case first == 1 && int64(len(res.Rows)) < res.Total:
		h = append(h, fmt.Sprintf("Showing top %d nodes out of %d", len(res.Rows), res.Total))
	case first > 1:
		h = append(h, fmt.Sprintf("Showing nodes %d-%d out of %d", first, first+len(res.Rows)-1, res.Total))
	}
	return h
}

// nodeName is a row's name as pprof prints it, with its inline label, and
// the markers perf report users read: " [k]" for a kernel frame, the
// shared object's name for a frame outside the page's main module.
func nodeName(r analysis.HotspotRow, mainModule string, width int) string {
	suffix := ""
	if r.Inline != "" {
		suffix = " (" + r.Inline + ")"
	}
	switch {
	case isKernel(r.Module):
		suffix += " [k]"
	case r.Module != "" && r.Module != mainModule && !r.Unsymbolized:
		suffix += " (" + cli.CutMiddle(filepath.Base(r.Module), min(40, max(width/3, 8))) + ")"
	}
	// Cut in the middle: a name's package and its function (or a JIT
	// frame's file and line) both stay visible.
	return cli.CutMiddle(r.Function, max(width-utf8.RuneCountInString(suffix), 8)) + suffix
}

// isKernel reports whether a module is the kernel as perf names it
// ([kernel.kallsyms], [kernel.vmlinux]).
func isKernel(module string) bool { return strings.HasPrefix(module, "[kernel") }

// mainModule is the module most of a page's rows come from (no marker).
func mainModule(rows []analysis.HotspotRow) string {
	n := map[string]int{}
	best := ""
	for _, r := range rows {
		if r.Module == "" || isKernel(r.Module) {
			continue
		}
		n[r.Module]++
		if n[r.Module] > n[best] || (n[r.Module] == n[best] && r.Module < best) {
			best = r.Module
		}
	}
	return best
}

// renderHotspots prints go tool pprof -top's table (flat, flat%, sum%,
// cum, cum%, name) under its header; names are cut to the line width.
func renderHotspots(w io.Writer, res *analysis.HotspotsResult, rec *analysis.Recorded, width int) {
	vf := res.HotspotsFormat()
	for _, l := range hotspotsHeader(res, vf) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "%10s %5s%% %5s%% %10s %5s%%\n", "flat", "flat", "sum", "cum", "cum")
	mm := mainModule(res.Rows)
	total := res.SampleType.Total
	for _, r := range res.Rows {
		fmt.Fprintf(w, "%10s %s %s %10s %s  %s\n", vf.Format(r.Self), analysis.Percentage(r.Self, total), analysis.Percentage(r.SumSelf, total),
			vf.Format(r.Inclusive), analysis.Percentage(r.Inclusive, total), nodeName(r, mm, width-pprofPrefix))
	}
	hotspotsFooter(w, res, rec)
}

func hotspotsFooter(w io.Writer, res *analysis.HotspotsResult, rec *analysis.Recorded) {
	if res.Truncated {
		fmt.Fprintf(w, "more: --cursor %s\n", res.Cursor)
	}
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

// renderHotspotsMarkdown prints the same header and table as a Markdown
// document (for issues and reviews): names in code spans.
func renderHotspotsMarkdown(w io.Writer, res *analysis.HotspotsResult, rec *analysis.Recorded) {
	vf := res.HotspotsFormat()
	for _, l := range hotspotsHeader(res, vf) {
		fmt.Fprintf(w, "%s  \n", mdText(l))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| flat | flat% | sum% | cum | cum% | name |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|:---|")
	mm := mainModule(res.Rows)
	total := res.SampleType.Total
	for _, r := range res.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", vf.Format(r.Self), strings.TrimSpace(analysis.Percentage(r.Self, total)),
			strings.TrimSpace(analysis.Percentage(r.SumSelf, total)), vf.Format(r.Inclusive), strings.TrimSpace(analysis.Percentage(r.Inclusive, total)),
			mdCode(nodeName(r, mm, cli.NameWidth)))
	}
	fmt.Fprintln(w)
	hotspotsFooter(w, res, rec)
}

// mdText escapes the characters Markdown would read as markup.
func mdText(s string) string {
	return strings.NewReplacer("\\", "\\\\", "|", "\\|", "*", "\\*", "_", "\\_", "`", "\\`", "<", "&lt;", ">", "&gt;", "[", "\\[").Replace(s)
}

// mdCode puts an (already Safe) name in a code span a table cell keeps.
func mdCode(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + s + " " + fence
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
	fs := c.flags(name, "RUN_OR_ARTIFACT FRAME_OR_REGEXP [--limit N] [--sample-type T] [--thread T] [--process P] [--cursor C]")
	req.Flags(fs, defLimit)
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
			return cli.Usagef("%s needs RUN_OR_ARTIFACT and a FRAME_ID or a regexp of function names", name)
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
			if res.SourceNote != "" {
				fmt.Fprintln(w, cli.Safe(res.SourceNote))
			}
			matches(w, res.Matches, res.Focus.FrameID, c.Env.Width())
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
		return cli.Usagef("stacks examples needs RUN_OR_ARTIFACT and a FRAME_ID or a regexp of function names")
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
		if res.SourceNote != "" {
			fmt.Fprintln(w, cli.Safe(res.SourceNote))
		}
		matches(w, res.Matches, res.Focus.FrameID, c.Env.Width())
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

// matches lists the frames a regexp named, when it named more than one:
// the one shown is marked, the others carry the frame id to ask for.
func matches(w io.Writer, ms []analysis.Frame, shown string, width int) {
	if len(ms) < 2 {
		return
	}
	fmt.Fprintf(w, "%d matching frames (cum), heaviest first:\n", len(ms))
	for _, m := range ms {
		mark := " "
		if m.FrameID == shown {
			mark = ">"
		}
		fmt.Fprintf(w, "%s %6.2f%%  %s  %s\n", mark, 100*m.InclusiveFraction, m.FrameID, cli.Cut(m.Function, max(width-82, 20)))
	}
}

func openCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("open", "RUN_OR_ARTIFACT [--launch]")
	launch := fs.Bool("launch", false, "run the viewer (CLI only; refused with --json)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("open needs one RUN_OR_ARTIFACT (a run id opens the profile its analyses read)")
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
			if plan.SourceNote != "" {
				fmt.Fprintf(w, "# %s\n", cli.Safe(plan.SourceNote))
			}
			fmt.Fprintf(w, "%s\n", quoteArgv(plan.Argv))
			if plan.Note != "" {
				fmt.Fprintf(w, "# %s\n", cli.Safe(plan.Note))
			}
			if plan.URL != "" {
				fmt.Fprintf(w, "# then open %s (the port was free when this was planned; if it is taken, run flameox open again)\n", plan.URL)
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
	c.Env.Infof("flameox: launching %s (Ctrl-C to stop)\n", quoteArgv(plan.Argv))
	if plan.URL != "" {
		c.Env.Infof("flameox: the viewer serves %s\n", plan.URL)
	}
	_, err = broker.Run(ctx, broker.Spec{Argv: plan.Argv, Dir: ws.ProjectRoot, Env: env, Stdin: c.Env.Stdin,
		Stdout: c.Env.Stdout, Stderr: c.Env.Stderr, StdoutLimit: 1 << 30, StderrLimit: 1 << 30})
	if fault.Is(err, fault.ProcessCancelled) {
		return nil
	}
	return err
}
