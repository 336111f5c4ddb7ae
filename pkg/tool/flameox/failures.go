package flameox

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/workspace"
)

// failuresCommands are analyze failures.
func failuresCommands() []*Command {
	return []*Command{{Name: "analyze failures",
		Summary: "are failures clustered rather than isolated: every attempt (captures, imports, trials) with its failures grouped by collector, workload, parameter, environment, source state, outcome, exit code or signal and error shape, with the successes of each, and the candidate explanations side by side",
		MCPTool: "analyze_failures", Run: analyzeFailures}}
}

func analyzeFailures(ctx context.Context, c *Context, args []string) error {
	var req analysis.FailuresRequest
	var res *analysis.FailuresResult
	return recipeCmd{name: "analyze failures", records: "its commit and the runs it names", flags: req.Flags,
		synopsis:  "[--since TIME] [--workload W] [--limit N] [--format text|markdown|json] [--record]",
		wrongArgs: "analyze failures takes no arguments (filters are --since and --workload)",
		run: func(ctx context.Context, ws *workspace.Workspace, _ []string) (analysis.Recordable, error) {
			var err error
			res, err = analysis.Failures(ctx, ws, req)
			return res, err
		},
		emit: func(rec *analysis.Recorded, md bool) error {
			out := analysis.FailuresOutput{FailuresResult: res, Recorded: rec}
			return c.emit(out, func(w io.Writer) { renderFailures(w, res, rec, md) })
		}}.exec(ctx, c, args)
}

// groupValue is how a group's value reads: digests shortened, labels
// (a workload's name, a collector's version) preferred.
func groupValue(g analysis.FailureGroup) string {
	v := g.Value
	if g.Label != "" {
		v = g.Label
	}
	if strings.HasPrefix(v, "sha256:") {
		v = corpus.Short(v)
	}
	return cli.Name(v)
}

// renderFailures prints the summary, the groups as a table, the candidate
// explanations side by side, and the limitations; as Markdown the same
// under headings.
func renderFailures(w io.Writer, res *analysis.FailuresResult, rec *analysis.Recorded, md bool) {
	sum := res.Summary
	line := func(label, text string) {
		if md {
			fmt.Fprintf(w, "- **%s** %s\n", label, text)
			return
		}
		fmt.Fprintf(w, "%-12s %s\n", label, text)
	}
	if md {
		fmt.Fprint(w, "### flameox analyze failures\n\n")
	}
	line("commit", corpus.Short(res.CorpusCommitID))
	var kinds []string
	for _, k := range sum.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d (%d failed)", k.Kind, k.Attempts, k.Failed))
	}
	att := fmt.Sprintf("%d: %d succeeded, %d failed", sum.Attempts, sum.Succeeded, sum.Failed)
	if len(kinds) > 0 {
		att += "; " + strings.Join(kinds, ", ")
	}
	line("attempts", att)
	line("answer", cli.Safe(sum.Answer))
	if len(res.Groups) > 0 {
		header := []string{"DIMENSION", "VALUE", "FAILED", "SUCCEEDED", "RATE", "ELSEWHERE OK", "FIRST", "LAST", "RUNS"}
		row := func(g analysis.FailureGroup) []string {
			var runs []string
			for _, r := range g.Representatives {
				runs = append(runs, refText(r))
			}
			fails := fmt.Sprint(g.Failures)
			if g.Isolated {
				fails += " isolated"
			}
			return []string{g.Dimension, groupValue(g), fails, fmt.Sprint(g.Succeeded), fmt.Sprintf("%.0f%%", 100*g.FailureRate),
				fmt.Sprint(g.SucceededElsewhere), g.FirstSeen.Format("2006-01-02 15:04:05"), g.LastSeen.Format("2006-01-02 15:04:05"), strings.Join(runs, " ")}
		}
		fmt.Fprintln(w)
		if md {
			fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
			for _, g := range res.Groups {
				cells := row(g)
				for i := range cells {
					cells[i] = strings.ReplaceAll(cells[i], "|", `\|`)
				}
				fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
			}
		} else {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, strings.Join(header, "\t"))
			for _, g := range res.Groups {
				cells := row(g)
				cells[1] = cli.Cut(cells[1], 60)
				fmt.Fprintln(tw, strings.Join(cells, "\t"))
			}
			tw.Flush()
		}
		fmt.Fprintf(w, "%d of %d groups", res.Returned, res.Total)
		if res.Truncated {
			fmt.Fprint(w, "; more with --limit")
		}
		fmt.Fprintln(w)
	}
	if len(res.Explanations) > 0 {
		if md {
			fmt.Fprint(w, "\n#### Candidate explanations, side by side\n\n")
		} else {
			fmt.Fprintf(w, "\ncandidate explanations, side by side (%d of %d):\n", len(res.Explanations), res.ExplanationsTotal)
		}
		for _, e := range res.Explanations {
			v := e.Value
			if e.Label != "" {
				v = e.Label
			}
			if strings.HasPrefix(v, "sha256:") {
				v = corpus.Short(v)
			}
			text := fmt.Sprintf("%s %s: %s, %d failed / %d succeeded: %s", e.Dimension, cli.Name(v), e.Strength, e.Failures, e.Succeeded, cli.Safe(e.Evidence))
			if len(e.Indistinguishable) > 0 {
				var others []string
				for _, o := range e.Indistinguishable {
					d, val, _ := strings.Cut(o, "=")
					if strings.HasPrefix(val, "sha256:") {
						val = corpus.Short(val)
					}
					others = append(others, d+" "+cli.Name(val))
				}
				text += "; the data cannot separate it from " + strings.Join(others, ", ")
			}
			if md {
				fmt.Fprintf(w, "- %s\n", text)
			} else {
				fmt.Fprintf(w, "  %s\n", text)
			}
		}
	}
	if len(res.Limitations) > 0 {
		fmt.Fprintln(w)
	}
	for _, l := range res.Limitations {
		line("limitation", cli.Safe(l))
	}
	for _, n := range res.NextSteps {
		line("next", cli.Safe(n))
	}
	if rec != nil {
		line("recorded", fmt.Sprintf("as analysis %s in commit %s", rec.AnalysisID, corpus.Short(rec.CorpusCommitID)))
	}
}

// refText names one attempt: its run, or its trial when it has none.
func refText(r analysis.FailureRef) string {
	if r.RunID != "" {
		return r.RunID
	}
	return r.TrialID
}
