package flameox

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
)

// traceCommands are trace window.
func traceCommands() []*Command {
	return []*Command{{Name: "trace window", Args: "ARTIFACT_OR_RUN",
		Summary: "the slices of an imported Chrome/Kineto trace that overlap a time range (ns from the trace's start), in start order, with their track, thread, category and nesting depth; keyset pages (--cursor)",
		MCPTool: "get_trace_window", Run: traceWindow}}
}

func traceWindow(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("trace window", "ARTIFACT_OR_RUN [--start NS] [--end NS] [--track T] [--limit N] [--cursor C]")
	var req analysis.TraceWindowRequest
	req.Flags(fs)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("trace window needs one ARTIFACT_OR_RUN")
	}
	req.Input = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := analysis.TraceWindow(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { renderTraceWindow(w, res) })
}

// renderTraceWindow prints the window's slices as a table; names come from
// the trace and are made safe (cli.Name) before they reach the terminal.
func renderTraceWindow(w io.Writer, r *analysis.TraceWindowResult) {
	fmt.Fprintf(w, "trace %s (%s), commit %s\n", r.Source.ArtifactID, cli.Name(r.Source.DisplayName), corpus.Short(r.CorpusCommitID))
	fmt.Fprintf(w, "window [%d, %d) ns of %d ns; %d slices overlap, %d shown\n", r.Parameters.StartNS, r.Parameters.EndNS, r.SpanNS, r.Total, r.Returned)
	if len(r.Slices) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "start_ns\tduration_ns\ttrack\tthread\tdepth\tcategory\tname")
		for _, s := range r.Slices {
			cat := s.Category
			if s.Device {
				cat += " (device)"
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%d\t%s\t%s\n", s.StartNS, s.DurationNS, s.TrackID, cli.Name(s.Thread), s.Depth, cli.Name(cat), cli.Name(s.Name))
		}
		tw.Flush()
	}
	if r.Truncated {
		fmt.Fprintf(w, "more: --cursor %s\n", r.Cursor)
	}
	for _, l := range r.Limitations {
		fmt.Fprintln(w, "note: "+cli.Safe(l))
	}
}
