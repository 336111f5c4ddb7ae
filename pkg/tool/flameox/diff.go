package flameox

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
)

// diffCommands are the profile-diff commands (analyze diff).
func diffCommands() []*Command {
	return []*Command{
		{Name: "analyze diff", Args: "BASE CANDIDATE", Summary: "functions whose self and inclusive values changed between two profiles, ranked as go tool pprof -top -diff_base=BASE CANDIDATE ranks them (--format text, markdown or json)",
			MCPTool: "analyze_diff", Run: analyzeDiff},
	}
}

func analyzeDiff(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("analyze diff", "BASE CANDIDATE [--sample-type T] [--limit N] [--focus RE] [--ignore RE] [--cursor C] [--format text|markdown|json]")
	var req analysis.DiffRequest
	req.Flags(fs, 20)
	format := fs.String("format", "text", "output: text (go tool pprof -top's columns, signed), markdown, or json (as --json)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := c.outputFormat(*format, "text", "markdown"); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return cli.Usagef("analyze diff needs BASE and CANDIDATE (run ids or artifact ids of two profiles)")
	}
	req.Base, req.Candidate = fs.Arg(0), fs.Arg(1)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := analysis.Diff(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		if *format == "markdown" {
			renderDiffMarkdown(w, res)
			return
		}
		renderDiff(w, res, c.Env.Width())
	})
}

// signed prints a delta with its sign ("+1.20s", "-30ms", "0").
func signed(vf analysis.ValueFormat, v int64) string {
	s := vf.Format(v)
	if v > 0 {
		return "+" + s
	}
	return s
}

// diffHeader is the lines above the table: both profiles, the sample
// type, the method, and what the rows account for.
func diffHeader(res *analysis.DiffResult, vf analysis.ValueFormat) []string {
	var h []string
	for _, s := range []struct {
		label string
		side  analysis.DiffSide
	}{{"Base", res.Base}, {"Candidate", res.Candidate}} {
		if s.side.SourceNote != "" {
			h = append(h, strings.ToLower(s.label)+": "+cli.Safe(s.side.SourceNote))
		}
		line := fmt.Sprintf("%s: %s (%s), run %s, total %s", s.label, cli.Name(s.side.Source.DisplayName), s.side.Source.ArtifactID,
			s.side.Source.RunID, vf.Format(s.side.SampleType.Total))
		if d := s.side.DurationNanos; d > 0 {
			line += ", duration " + analysis.HumanDuration(d)
		}
		h = append(h, line)
	}
	h = append(h, "Type: "+cli.Name(res.Parameters.SampleType)+", commit "+corpus.Short(res.CorpusCommitID))
	h = append(h, "Method: "+res.Method)
	if p := res.Parameters; p.Focus != "" || p.Ignore != "" {
		h = append(h, "Active filters:")
		for _, f := range [][2]string{{"focus", p.Focus}, {"ignore", p.Ignore}} {
			if f[1] != "" {
				h = append(h, "   "+f[0]+"="+cli.Cut(f[1], 80))
			}
		}
	}
	base := res.Base.SampleType.Total
	h = append(h, fmt.Sprintf("Showing nodes accounting for %s, %s of %s base total; candidate total %s (%s)", signed(vf, res.ShownDelta),
		strings.TrimSpace(analysis.Percentage(res.ShownDelta, base)), vf.Format(base), vf.Format(res.Candidate.SampleType.Total), signed(vf, res.TotalDelta)))
	switch first := 1; {
	case len(res.Rows) == 0:
		h = append(h, "No changed nodes")
	case res.Rows[0].Rank > 1:
		first = res.Rows[0].Rank
		h = append(h, fmt.Sprintf("Showing changed nodes %d-%d out of %d", first, first+len(res.Rows)-1, res.Total))
	case int64(len(res.Rows)) < res.Total:
		h = append(h, fmt.Sprintf("Showing top %d changed nodes out of %d (%d new, %d gone)", len(res.Rows), res.Total, res.Added, res.Removed))
	default:
		h = append(h, fmt.Sprintf("%d changed nodes (%d new, %d gone)", res.Total, res.Added, res.Removed))
	}
	return h
}

// diffName is a row's name with a marker for a function on one side only.
func diffName(r analysis.DiffRow, width int) string {
	suffix := ""
	switch r.Presence {
	case "candidate_only":
		suffix = " (new)"
	case "base_only":
		suffix = " (gone)"
	}
	return cli.Cut(r.Function, max(width-len(suffix), 8)) + suffix
}

// renderDiff prints go tool pprof -top -diff_base's table: flat and cum
// deltas (signed), their percentages of the base's total, sum%, name.
func renderDiff(w io.Writer, res *analysis.DiffResult, width int) {
	vf := res.Format()
	for _, l := range diffHeader(res, vf) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "%10s %5s%% %5s%% %10s %5s%%\n", "flat", "flat", "sum", "cum", "cum")
	total := res.Base.SampleType.Total
	for _, r := range res.Rows {
		fmt.Fprintf(w, "%10s %s %s %10s %s  %s\n", signed(vf, r.SelfDelta), analysis.Percentage(r.SelfDelta, total), analysis.Percentage(r.SumDelta, total),
			signed(vf, r.InclusiveDelta), analysis.Percentage(r.InclusiveDelta, total), diffName(r, width-pprofPrefix))
	}
	diffFooter(w, res)
}

func diffFooter(w io.Writer, res *analysis.DiffResult) {
	if res.Truncated {
		fmt.Fprintf(w, "more: --cursor %s\n", res.Cursor)
	}
	for _, l := range res.Limitations {
		fmt.Fprintf(w, "limitation: %s\n", cli.Safe(l))
	}
	for _, n := range res.NextSteps {
		fmt.Fprintf(w, "next: %s\n", n)
	}
}

// renderDiffMarkdown prints the header and a table with both sides'
// values beside the deltas, for a pull request or an issue.
func renderDiffMarkdown(w io.Writer, res *analysis.DiffResult) {
	vf := res.Format()
	for _, l := range diffHeader(res, vf) {
		fmt.Fprintf(w, "%s  \n", mdText(l))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| flat Δ | flat Δ% | base flat | cand flat | cum Δ | cum Δ% | base cum | cand cum | name |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|:---|")
	total := res.Base.SampleType.Total
	pct := func(v int64) string {
		p := strings.TrimSpace(analysis.Percentage(v, total))
		if v < 0 {
			return "-" + p
		}
		if v > 0 {
			return "+" + p
		}
		return p
	}
	for _, r := range res.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", signed(vf, r.SelfDelta), pct(r.SelfDelta), vf.Format(r.BaseSelf), vf.Format(r.CandidateSelf),
			signed(vf, r.InclusiveDelta), pct(r.InclusiveDelta), vf.Format(r.BaseInclusive), vf.Format(r.CandidateInclusive), mdCode(diffName(r, cli.NameWidth)))
	}
	fmt.Fprintln(w)
	diffFooter(w, res)
}
