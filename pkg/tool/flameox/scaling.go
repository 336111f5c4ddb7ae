package flameox

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/stats"
	"github.com/flameox/flameox/pkg/workspace"
)

// scalingCommands are analyze scaling.
func scalingCommands() []*Command {
	return []*Command{{Name: "analyze scaling", Args: "EXPERIMENT_ID",
		Summary: "how an experiment's cost grows with its input size: per-input medians over every attempted trial, the declared models fitted (AICc), a model chosen only by a clear margin, and the frames that follow the input",
		MCPTool: "analyze_scaling", Run: analyzeScaling}}
}

func analyzeScaling(ctx context.Context, c *Context, args []string) error {
	var req analysis.ScalingRequest
	var res *analysis.ScalingResult
	return recipeCmd{name: "analyze scaling", records: "its commit and input runs", positional: 1, flags: req.Flags,
		synopsis:  "EXPERIMENT_ID [--metric M] [--variant V] [--parameter P] [--limit N] [--format text|markdown|json] [--record]",
		wrongArgs: "analyze scaling needs one EXPERIMENT_ID",
		run: func(ctx context.Context, ws *workspace.Workspace, pos []string) (analysis.Recordable, error) {
			req.ExperimentID = pos[0]
			var err error
			res, err = analysis.Scaling(ctx, ws, req)
			return res, err
		},
		emit: func(rec *analysis.Recorded, md bool) error {
			out := analysis.ScalingOutput{ScalingResult: res, Recorded: rec}
			return c.emit(out, func(w io.Writer) { renderScaling(w, res, rec, md) })
		}}.exec(ctx, c, args)
}

// num prints a measured value compactly.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func optNum(v *float64) string {
	if v == nil {
		return "-"
	}
	return num(*v)
}

// renderScaling prints each series' points, fits and choice, then the
// correlated frames; as Markdown the same in tables.
func renderScaling(w io.Writer, res *analysis.ScalingResult, rec *analysis.Recorded, md bool) {
	row := func(cells ...string) {
		if md {
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
			return
		}
		fmt.Fprintln(w, "  "+strings.Join(cells, "  "))
	}
	head := func(cells ...string) {
		row(cells...)
		if md {
			fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(cells)))
		}
	}
	title := func(s string) {
		if md {
			fmt.Fprintf(w, "\n#### %s\n\n", mdText(s))
			return
		}
		fmt.Fprintln(w, s)
	}
	if md {
		fmt.Fprintf(w, "### flameox analyze scaling: `%s` over `%s`\n\n", res.Parameters.Metric, res.Parameters.Parameter)
	}
	fmt.Fprintf(w, "experiment   %s\n", cli.Safe(res.ExperimentID))
	if md {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "metric       %s over %s\n", cli.Safe(res.Parameters.Metric), cli.Safe(res.Parameters.Parameter))
	if md {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "trials       %d attempted, %d succeeded\n", res.AttemptedTrials, res.SucceededTrials)
	for _, s := range res.Series {
		name := s.Variant
		for _, k := range slices.Sorted(maps.Keys(s.Factors)) {
			if s.Factors[k] != s.Variant {
				name += fmt.Sprintf(" %s=%s", k, s.Factors[k])
			}
		}
		title(fmt.Sprintf("series %s (%s)", cli.Safe(name), cli.Safe(s.Unit)))
		head("input", "attempted", "succeeded", "median", "mad", "min", "max")
		for _, p := range s.Points {
			row(num(p.Input), strconv.Itoa(p.Attempted), strconv.Itoa(p.Succeeded), optNum(p.Median), optNum(p.MAD), optNum(p.Min), optNum(p.Max))
		}
		if md {
			fmt.Fprintln(w)
		}
		head("model", "formula", "a (se)", "b (se)", "rel rms", "aicc", "delta", "lack-of-fit p")
		for _, f := range s.Fits {
			b := "-"
			if f.Slope != nil {
				b = fmt.Sprintf("%s (%s)", num(*f.Slope), num(*f.SlopeSE))
			}
			row(f.Model, f.Formula, fmt.Sprintf("%s (%s)", num(f.Intercept), num(f.InterceptSE)), b, num(f.RelativeRMS),
				optFixed(f.AICc), optFixed(f.DeltaAICc), optNum(f.LackOfFitP))
		}
		for _, m := range stats.Models {
			if why, ok := s.NotFitted[m]; ok {
				row(m, "not fitted: "+why)
			}
		}
		if md {
			fmt.Fprintln(w)
		}
		verdict := s.Choice.Decision
		switch s.Choice.Decision {
		case stats.Chosen:
			verdict += " " + s.Choice.Model
		case stats.Indistinguishable:
			verdict += " " + strings.Join(s.Choice.Candidates, ", ")
		}
		if md {
			verdict = "**" + verdict + "**"
		}
		fmt.Fprintf(w, "choice       %s: %s\n", verdict, cli.Safe(s.Choice.Reason))
		if md {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "range        %s..%s measured; no prediction outside it\n", num(s.MeasuredMin), num(s.MeasuredMax))
	}
	if len(res.Frames) > 0 {
		title(fmt.Sprintf("frames following %s (%s, %d tested, Benjamini–Hochberg q)", res.Parameters.Parameter, res.FrameSampleType, res.FramesTested))
		head("variant", "measure", "rho", "q", "runs", "function")
		for _, f := range res.Frames {
			fn := cli.Safe(f.Function)
			if md {
				fn = mdCode(f.Function)
			}
			row(cli.Safe(f.Variant), f.Measure, fmt.Sprintf("%+.2f", f.Rho), num(f.Q), strconv.Itoa(f.Runs), fn)
		}
		if res.Truncated {
			fmt.Fprintf(w, "more: %d of %d frames shown (--limit)\n", res.Returned, res.Total)
		}
	}
	if md {
		fmt.Fprintln(w)
	}
	for _, l := range res.Limitations {
		fmt.Fprintf(w, "limitation: %s\n", cli.Safe(l))
	}
	if rec != nil {
		fmt.Fprintf(w, "recorded as analysis %s in commit %s\n", rec.AnalysisID, corpus.Short(rec.CorpusCommitID))
	}
	if md {
		fmt.Fprintf(w, "\n<sub>corpus commit `%s`</sub>\n", res.CorpusCommitID)
	}
}

func optFixed(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 1, 64)
}
