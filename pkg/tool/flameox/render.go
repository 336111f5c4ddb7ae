package flameox

import (
	"context"
	"fmt"
	"io"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
)

// renderCommands are render flamegraph.
func renderCommands() []*Command {
	return []*Command{{Name: "render flamegraph", Args: "RUN_OR_ARTIFACT -o FILE.svg",
		Summary: "a profile as an SVG flame graph (or --icicle, or --diff BASE) that opens offline, with search and click-to-zoom, coloured by package",
		CLIOnly: "over MCP the same picture is export_profile with format flamegraph (one tool for both, within the tools/list budget)", Run: renderFlameGraph}}
}

func renderFlameGraph(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("render flamegraph", "RUN_OR_ARTIFACT -o FILE.svg [--diff BASE] [--sample-type T] [--icicle] [--width PX]")
	var req analysis.FlameGraphRequest
	fs.StringVarP(&req.Output, "output", "o", "", "the SVG file to write (outside .diagnostics)")
	fs.StringVar(&req.SampleType, "sample-type", "", "sample type (default: the profile's default, as go tool pprof picks)")
	fs.BoolVar(&req.Icicle, "icicle", false, "draw the root at the top (an icicle graph)")
	fs.IntVar(&req.Width, "width", 0, "width in pixels (default 1200)")
	fs.StringVar(&req.Diff, "diff", "", "a base run or artifact: a differential flame graph, red where RUN grew from it, blue where it shrank")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("render flamegraph needs one RUN_OR_ARTIFACT")
	}
	req.Input = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := analysis.FlameGraph(ctx, ws, req, c.Dir)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "wrote %s (%d bytes): %d frames, %d levels, %s %d %s (%s)\n", cli.Safe(res.Path), res.Bytes, res.Frames, res.Depth,
			res.SampleType, res.Total, res.Unit, cli.Name(res.Source.DisplayName))
		for _, l := range res.Limitations {
			fmt.Fprintf(w, "  limitation: %s\n", cli.Safe(l))
		}
	})
}
