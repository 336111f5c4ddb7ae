package flameox

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/stats"
)

// gate is --fail-on: the decisions that make a finished comparison exit 1.
type gate map[string]bool

// parseGate reads --fail-on: regression and inconclusive, comma-separated.
func parseGate(s string) (gate, error) {
	g := gate{}
	if s == "" {
		return g, nil
	}
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(f); f {
		case "regression":
			g[string(stats.MeaningfulRegression)] = true
		case "inconclusive":
			g[string(stats.Inconclusive)] = true
		default:
			return nil, cli.Usagef("--fail-on takes regression and inconclusive, not %q", f)
		}
	}
	return g, nil
}

// confirmCmd runs the confirmatory comparison of two frozen run sets and
// renders it as text or a pull-request comment (or JSON); an invalid
// comparison exits 6 (COMPARISON_INVALID), then --fail-on may exit 1.
func confirmCmd(ctx context.Context, c *Context, req compare.ConfirmRequest, format, failOn string) error {
	g, err := parseGate(failOn)
	if err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := compare.Confirm(ctx, ws, req)
	if err != nil {
		return err
	}
	err = c.emit(res, func(w io.Writer) {
		if format == "markdown" {
			renderComparisonMarkdown(w, res)
			return
		}
		renderComparison(w, res)
	})
	if err != nil {
		return err
	}
	if err := compare.Exit(res); err != nil {
		return err
	}
	if g[res.Decision] {
		return &cli.NegativeResult{Message: fmt.Sprintf("the decision is %s (--fail-on %s)", res.Decision, failOn)}
	}
	return nil
}

// verdict is a comparison's one-line answer: how the candidate differs,
// with its interval, from how many blocks, or why there is no answer.
func verdict(c *compare.Comparison) string {
	if c.Ratio == nil || c.Degenerate {
		return fmt.Sprintf("no interval from %d complete block(s): %s", c.Pairs, c.Decision)
	}
	change := func(r float64) string {
		switch d := (r - 1) * 100; {
		case math.Abs(d) < 0.05:
			return "unchanged"
		case d < 0:
			return fmt.Sprintf("%.1f%% lower", -d)
		default:
			return fmt.Sprintf("%.1f%% higher", d)
		}
	}
	return fmt.Sprintf("the candidate is %s (%g%% CI: %s to %s) from %d complete blocks",
		change(*c.Ratio), c.Confidence*100, change(*c.RatioLow), change(*c.RatioHigh), c.Pairs)
}

// renderComparisonMarkdown prints a comparison as a pull-request comment:
// the verdict, the decision and validity, the sides' counts, every
// mismatch and limitation.
func renderComparisonMarkdown(w io.Writer, c *compare.Comparison) {
	what := "`" + cli.Name(c.Metric) + "`"
	if c.Subject != "" {
		what += " of `" + cli.Name(c.Subject) + "`"
	}
	fmt.Fprintf(w, "### flameox compare: %s\n\n", what)
	fmt.Fprintf(w, "**%s**, **%s**: %s.\n\n", c.Decision, c.Validity, verdict(c))
	if c.Ratio != nil {
		how := c.Method
		if c.Resamples > 0 {
			how = fmt.Sprintf("%s, %d resamples, seed %d", c.Method, c.Resamples, c.Seed)
		}
		fmt.Fprintf(w, "Ratio candidate / baseline %.4f, interval [%.4f, %.4f] at %g (%s); %s; practical threshold %g.\n\n",
			*c.Ratio, *c.RatioLow, *c.RatioHigh, c.Confidence, how, c.Polarity, c.Threshold)
	}
	fmt.Fprintln(w, "| | baseline | candidate |")
	fmt.Fprintln(w, "| --- | --- | --- |")
	fmt.Fprintf(w, "| run set | `%s` | `%s` |\n", cli.Name(c.Baseline.RunSetID), cli.Name(c.Candidate.RunSetID))
	for _, row := range []struct {
		name string
		b, k int
	}{{"attempted", c.Baseline.Attempted, c.Candidate.Attempted}, {"eligible", c.Baseline.Eligible, c.Candidate.Eligible},
		{"failed", c.Baseline.Failed, c.Candidate.Failed}, {"excluded", c.Baseline.Excluded, c.Candidate.Excluded},
		{"paired", c.Baseline.Paired, c.Candidate.Paired}} {
		fmt.Fprintf(w, "| %s | %d | %d |\n", row.name, row.b, row.k)
	}
	if len(c.Mismatches) > 0 {
		fmt.Fprintln(w, "\nMismatches:")
		for _, m := range c.Mismatches {
			mark := ""
			if m.Critical {
				mark = " (critical)"
			}
			fmt.Fprintf(w, "- %s%s: %s\n", cli.Name(m.What), mark, cli.Safe(m.Detail))
		}
	}
	renderProfileChangesMarkdown(w, c.ProfileChanges)
	if len(c.Limitations) > 0 {
		fmt.Fprintln(w, "\nLimitations:")
		for _, l := range c.Limitations {
			fmt.Fprintf(w, "- %s\n", cli.Safe(l))
		}
	}
	fmt.Fprintf(w, "\n<sub>corpus commit `%s`</sub>\n", cli.Name(c.CorpusCommitID))
}
