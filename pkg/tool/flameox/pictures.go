package flameox

import (
	"context"
	"fmt"
	"io"

	"github.com/flameox/flameox/pkg/chart"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/runset"
)

// pictureCommands are render comparison, render scaling and report.
func pictureCommands() []*Command {
	return []*Command{
		{Name: "render comparison", Args: "RUN_A RUN_B | BASE_SET CAND_SET --metric M | EXPERIMENT_ID -o FILE.svg|.png",
			Summary: "a comparison as a picture (gonum/plot, SVG or PNG by extension): each variant's values with its median and interval, and each candidate's ratio with its interval against the practical threshold; takes compare's inputs (two runs, two run sets) or an experiment (every variant against the first)",
			MCPTool: "render_picture", Run: renderComparisonCmd},
		{Name: "render scaling", Args: "EXPERIMENT_ID -o FILE.svg|.png",
			Summary: "analyze scaling as a picture: per series the trials and per-size medians with every fitted model over the measured range, and each model's relative residuals",
			CLIOnly: "over MCP it is render_picture with kind scaling (one tool for the three pictures, within the tools/list budget)", Run: renderScalingCmd},
		{Name: "report", Args: "INVESTIGATION_ID -o FILE.html",
			Summary: "an investigation as one self-contained HTML page that opens offline: question, hypotheses, experiments with comparison and scaling plots and flame graphs, recorded comparisons and findings, every number linked to its run, run set, comparison or artifact id",
			CLIOnly: "over MCP it is render_picture with kind report (one tool for the three pictures, within the tools/list budget)", Run: reportCmd},
	}
}

func printPicture(w io.Writer, res *chart.PictureResult, what string) {
	fmt.Fprintf(w, "wrote %s (%d bytes, %s): %d %s\n", cli.Safe(res.Path), res.Bytes, res.Format, res.Drawn, what)
	for _, l := range res.Limitations {
		fmt.Fprintf(w, "  limitation: %s\n", cli.Safe(l))
	}
}

func renderComparisonCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("render comparison", "RUN_A RUN_B -o FILE [--filter F] [--col C] [--row R] [--ignore K] [--threshold T]\n"+
		"       flameox render comparison BASE_SET CAND_SET --metric M -o FILE [--subject S] [--polarity P] [--threshold T] [--confidence C] [--method M]\n"+
		"       flameox render comparison EXPERIMENT_ID -o FILE")
	var req chart.ComparisonRequest
	fs.StringVarP(&req.Output, "output", "o", "", "the picture to write: .svg or .png (outside .diagnostics)")
	req.Sets.Flags(fs)
	fs.StringVar(&req.Bench.Filter, "filter", "", "use only benchmarks matching this benchproc filter, as benchstat -filter")
	fs.StringVar(&req.Bench.Col, "col", "", "split columns by this projection, as benchstat -col")
	fs.StringVar(&req.Bench.Row, "row", "", "split rows by this projection, as benchstat -row")
	fs.StringVar(&req.Bench.Ignore, "ignore", "", "ignore variation in these keys, as benchstat -ignore")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return cli.Usagef("render comparison needs two runs, two run sets (with --metric) or one experiment")
	}
	req.Inputs = fs.Args()
	req.Bench.Threshold = req.Sets.Threshold
	sets := fs.NArg() == 2 && runset.IsID(fs.Arg(0)) && runset.IsID(fs.Arg(1))
	switch {
	case sets && req.Sets.Metric == "":
		return cli.Usagef("drawing two run sets needs --metric M (e.g. process.wall_time or gobench.sec/op)")
	case fs.NArg() == 1:
		for _, name := range []string{"metric", "subject", "polarity", "threshold", "confidence", "method", "seed", "resamples", "filter", "col", "row", "ignore"} {
			if fs.Changed(name) {
				return cli.Usagef("--%s: an experiment is drawn on its declared rule", name)
			}
		}
	case !sets:
		for _, name := range []string{"metric", "subject", "polarity", "confidence", "method", "seed", "resamples"} {
			if fs.Changed(name) {
				return cli.Usagef("--%s belongs to a comparison of two run sets; two runs are drawn as benchstat compares them", name)
			}
		}
	default:
		for _, name := range []string{"filter", "col", "row", "ignore"} {
			if fs.Changed(name) {
				return cli.Usagef("--%s projects a benchstat view of two runs; two run sets are drawn on one --metric", name)
			}
		}
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := chart.RenderComparison(ctx, ws, req, c.Dir)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { printPicture(w, res, "lines") })
}

func renderScalingCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("render scaling", "EXPERIMENT_ID -o FILE [--metric M] [--variant V] [--parameter P]")
	var req chart.ScalingRequest
	fs.StringVarP(&req.Output, "output", "o", "", "the picture to write: .svg or .png (outside .diagnostics)")
	req.ScalingRequest.Flags(fs)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("render scaling needs one EXPERIMENT_ID")
	}
	req.ExperimentID = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := chart.RenderScaling(ctx, ws, req, c.Dir)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { printPicture(w, res, "series") })
}

func reportCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("report", "INVESTIGATION_ID -o FILE.html")
	var req chart.ReportRequest
	fs.StringVarP(&req.Output, "output", "o", "", "the HTML file to write (outside .diagnostics)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("report needs one INVESTIGATION_ID")
	}
	req.InvestigationID = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := chart.Report(ctx, ws, req, c.Dir)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { printPicture(w, res, "experiments") })
}
