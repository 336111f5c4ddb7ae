package flameox

import (
	"context"
	"fmt"
	"io"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
)

// exportCommands are export pprof|collapsed|speedscope.
func exportCommands() []*Command {
	return []*Command{{Name: "export", Args: "pprof|collapsed|speedscope RUN_OR_ARTIFACT -o FILE",
		Summary: "a profile in another tool's format: pprof (go tool pprof gives the same -top), collapsed stacks (FlameGraph.pl, inferno), speedscope JSON",
		MCPTool: "export_profile", Run: exportCmd}}
}

func exportCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("export", "pprof|collapsed|speedscope RUN_OR_ARTIFACT -o FILE [--sample-type T]")
	var req analysis.ExportRequest
	fs.StringVarP(&req.Output, "output", "o", "", "the file to write (outside .diagnostics)")
	fs.StringVar(&req.SampleType, "sample-type", "", "sample type for collapsed and speedscope (default: the profile's default, as go tool pprof picks)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return cli.Usagef("export needs a FORMAT (pprof, collapsed or speedscope) and a RUN_OR_ARTIFACT (a whole corpus: flameox export corpus --to DIR)")
	}
	req.Format, req.Input = fs.Arg(0), fs.Arg(1)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := analysis.Export(ctx, ws, req, c.Dir)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "wrote %s (%s, %d bytes) from %s (%s)\n", cli.Safe(res.Path), res.Format, res.Bytes, cli.Name(res.Source.DisplayName), res.Source.ArtifactID)
		fmt.Fprintf(w, "  %s: %d stack(s), total %d %s\n", res.SampleType, res.Stacks, res.Total, res.Unit)
		for _, l := range res.Limitations {
			fmt.Fprintf(w, "  limitation: %s\n", cli.Safe(l))
		}
	})
}
