package flameox

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/runset"
	"golang.org/x/perf/benchunit"
)

// compareCommands are the compare group.
func compareCommands() []*Command {
	return []*Command{
		{Name: "compare", Args: "RUN_A RUN_B | BASELINE_SET CANDIDATE_SET --metric M", Summary: "benchstat's view of two runs' go test or pyperf values: old and new median ± interval, delta (~ if not significant), geomean, a decision per row and the validity (--filter, --col, --row, --ignore in benchstat's syntax); given two run sets, the confirmatory comparison block by block, as experiment compare (--format text, markdown, csv or json; --fail-on regression)", MCPTool: "compare_runs", Run: compareCmd},
	}
}

func compareCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("compare", "RUN_A RUN_B [--format text|markdown|csv|json] [--filter F] [--col C] [--row R] [--ignore K] [--threshold T] [--fail-on regression[,inconclusive]]\n       flameox compare BASELINE_SET CANDIDATE_SET --metric M [--subject S] [--polarity P] [--threshold T] [--confidence C] [--method M] [--format text|markdown|json] [--fail-on regression[,inconclusive]]")
	var req compare.BenchRequest
	var sets compare.ConfirmRequest
	sets.Flags(fs) // --threshold is shared: it is bound here
	fs.StringVar(&req.Filter, "filter", "", "use only benchmarks matching this benchproc filter, as benchstat -filter")
	fs.StringVar(&req.Col, "col", "", "split columns by this projection, as benchstat -col (default .file: one column per run)")
	fs.StringVar(&req.Row, "row", "", "split rows by this projection, as benchstat -row (default .fullname)")
	fs.StringVar(&req.Ignore, "ignore", "", "ignore variation in these keys, as benchstat -ignore (e.g. note)")
	fs.IntVar(&req.Limit, "limit", query.MaxLimit, fmt.Sprintf("rows to return (max %d)", query.MaxLimit))
	format := fs.String("format", "text", "output: text (benchstat's columns), markdown (a pull-request comment), csv (runs only), or json (as --json)")
	failOn := fs.String("fail-on", "", "exit 1 when a row (or the run-set comparison) is a meaningful regression (regression), or also inconclusive (regression,inconclusive)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return cli.Usagef("compare needs two runs (RUN_A, the baseline, and RUN_B) or two run sets (BASELINE_SET CANDIDATE_SET --metric M)")
	}
	req.Threshold = sets.Threshold
	if a, b := runset.IsID(fs.Arg(0)), runset.IsID(fs.Arg(1)); a || b {
		if !a || !b {
			return cli.Usagef("compare takes two runs or two run sets, not one of each")
		}
		for _, name := range []string{"filter", "col", "row", "ignore", "limit"} {
			if fs.Changed(name) {
				return cli.Usagef("--%s projects a benchstat view of two runs; two run sets are compared on one --metric", name)
			}
		}
		if sets.Metric == "" {
			return cli.Usagef("comparing two run sets needs --metric M (e.g. process.wall_time or gobench.sec/op)")
		}
		if err := c.outputFormat(*format, "text", "markdown"); err != nil {
			return err
		}
		sets.Baseline, sets.Candidate = fs.Arg(0), fs.Arg(1)
		return confirmCmd(ctx, c, sets, *format, *failOn)
	}
	for _, name := range []string{"metric", "subject", "polarity", "confidence", "method", "seed", "resamples"} {
		if fs.Changed(name) {
			return cli.Usagef("--%s belongs to a comparison of two run sets; two runs are compared as benchstat compares them", name)
		}
	}
	if err := c.outputFormat(*format, "text", "markdown", "csv"); err != nil {
		return err
	}
	fail, err := parseGate(*failOn)
	if err != nil {
		return err
	}
	req.RunA, req.RunB = fs.Arg(0), fs.Arg(1)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := compare.CompareRuns(ctx, ws, req)
	if err != nil {
		return err
	}
	err = c.emit(res, func(w io.Writer) {
		switch *format {
		case "markdown":
			renderBenchView(w, res, true)
		case "csv":
			renderBenchCSV(w, res)
		default:
			renderBenchView(w, res, false)
		}
	})
	if err != nil {
		return err
	}
	if len(fail) > 0 {
		n := 0
		for _, r := range res.Rows {
			if fail[r.Decision] {
				n++
			}
		}
		if n > 0 {
			return &cli.NegativeResult{Message: fmt.Sprintf("%d row(s) failed --fail-on %s", n, *failOn)}
		}
	}
	return nil
}

// benchGroup is the rows of one table and unit, in order.
type benchGroup struct {
	table, unit string
	rows        []compare.BenchRow
}

func benchGroups(res *compare.BenchView) []benchGroup {
	var gs []benchGroup
	for _, r := range res.Rows {
		if n := len(gs); n == 0 || gs[n-1].table != r.Table || gs[n-1].unit != r.Unit {
			gs = append(gs, benchGroup{table: r.Table, unit: r.Unit})
		}
		gs[len(gs)-1].rows = append(gs[len(gs)-1].rows, r)
	}
	return gs
}

// renderBenchView prints benchstat's table per configuration and unit:
// old and new median ± the interval, the delta (~ where not significant)
// with benchstat's (p=… n=…), the decision, then the geomean, the
// footnoted warnings and the validity. Markdown prints the same as
// pull-request tables.
func renderBenchView(w io.Writer, res *compare.BenchView, md bool) {
	var notes []string
	noteOf := map[string]int{}
	mark := func(ws ...[]string) string {
		var m []string
		for _, list := range ws {
			for _, s := range list {
				i, ok := noteOf[s]
				if !ok {
					notes = append(notes, s)
					i = len(notes)
					noteOf[s] = i
				}
				m = append(m, fmt.Sprintf("(%d)", i))
			}
		}
		return strings.Join(m, " ")
	}
	if md {
		fmt.Fprintf(w, "### benchstat: old `%s` vs new `%s`\n\n", cli.Name(res.RunA), cli.Name(res.RunB))
	} else {
		fmt.Fprintf(w, "old  %s\nnew  %s\n\n", cli.Name(res.RunA), cli.Name(res.RunB))
	}
	prevTable := "\x00"
	for gi, g := range benchGroups(res) {
		if gi > 0 {
			fmt.Fprintln(w)
		}
		if g.table != prevTable && g.table != "" {
			if md {
				fmt.Fprintf(w, "**%s**\n\n", cli.Name(g.table))
			} else {
				fmt.Fprintf(w, "%s\n", cli.Name(g.table))
			}
		}
		prevTable = g.table
		old, col := "", ""
		for _, r := range g.rows {
			if r.Old != nil && old == "" {
				old = r.Old.Column
			}
			if r.New != nil && col == "" {
				col = r.New.Column
			}
		}
		switch {
		case col == "" && old != "":
			fmt.Fprintf(w, "only %s\n", cli.Name(old))
			if md {
				fmt.Fprintln(w)
			}
		case old != res.RunA || col != res.RunB:
			fmt.Fprintf(w, "old = %s, new = %s\n", cli.Name(orDash(old)), cli.Name(orDash(col)))
			if md {
				fmt.Fprintln(w)
			}
		}
		head := []string{g.unit, "old", "new", "vs base", "", "decision", ""}
		lines := [][]string{head}
		class := benchunit.ClassOf(g.unit)
		for _, r := range g.rows {
			var centers []float64
			for _, s := range []*compare.CellSummary{r.Old, r.New} {
				if s != nil && s.Center != nil {
					centers = append(centers, *s.Center)
				}
			}
			scaler := benchunit.CommonScale(centers, class)
			cellText := func(s *compare.CellSummary) string {
				if s == nil || s.Center == nil {
					return ""
				}
				return scaler.Format(*s.Center) + " ± " + s.Range
			}
			name := r.Benchmark
			if r.New != nil && r.New.Column != col {
				name += " [" + r.New.Column + "]"
			}
			var oldW, newW []string
			if r.Old != nil {
				oldW = r.Old.Warnings
			}
			if r.New != nil {
				newW = r.New.Warnings
			}
			pn := ""
			if r.P != nil && r.Old != nil && r.New != nil {
				pn = fmt.Sprintf("(p=%0.3f n=%d+%d)", *r.P, r.Old.N, r.New.N)
				if r.Old.N == r.New.N {
					pn = fmt.Sprintf("(p=%0.3f n=%d)", *r.P, r.Old.N)
				}
			}
			lines = append(lines, []string{cli.Name(name), cellText(r.Old), cellText(r.New), r.Delta, pn, r.Decision, mark(oldW, newW, r.Warnings)})
		}
		for _, gm := range res.Geomeans {
			if gm.Table == g.table && gm.Unit == g.unit {
				f := func(x *float64) string {
					if x == nil {
						return ""
					}
					return benchunit.Scale(*x, class)
				}
				label := "geomean"
				if gm.Column != col {
					label += " [" + cli.Name(gm.Column) + "]"
				}
				lines = append(lines, []string{label, f(gm.Old), f(gm.New), gm.Delta, "", "", mark(gm.Warnings)})
			}
		}
		if md {
			for i, l := range lines {
				fmt.Fprintf(w, "| %s |\n", strings.Join(escapeCells(l), " | "))
				if i == 0 {
					fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", len(l)))
				}
			}
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, l := range lines {
			fmt.Fprintln(tw, strings.TrimRight(strings.Join(l, "\t"), "\t "))
		}
		tw.Flush()
	}
	if len(res.Rows) == 0 {
		fmt.Fprintln(w, "no benchmark values to compare")
	}
	if md {
		fmt.Fprintln(w)
	}
	for i, n := range notes {
		fmt.Fprintf(w, "(%d) %s\n", i+1, cli.Name(n))
	}
	for _, x := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", cli.Name(x))
	}
	if res.Truncated {
		fmt.Fprintf(w, "%d of %d rows; raise --limit or narrow with --filter\n", res.Returned, res.Total)
	}
	fmt.Fprintf(w, "validity: %s (%s)\n", res.Validity.Status, cli.Safe(strings.Join(res.Validity.Reasons, "; ")))
	fmt.Fprintf(w, "%.0f%% intervals, ~ where p >= %.2f; %s\n", res.Confidence*100, res.Alpha, res.Method)
}

func escapeCells(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = strings.ReplaceAll(s, "|", `\|`)
	}
	return out
}

// renderBenchCSV prints one line per row with raw numbers (benchstat's
// -format csv carries the same values).
func renderBenchCSV(w io.Writer, res *compare.BenchView) {
	o := csv.NewWriter(w)
	o.Write([]string{"table", "benchmark", "unit", "old_column", "old", "old_ci", "old_n", "new_column", "new", "new_ci", "new_n", "vs_base", "p", "decision", "validity"})
	num := func(x *float64) string {
		if x == nil {
			return ""
		}
		return fmt.Sprint(*x)
	}
	side := func(s *compare.CellSummary) []string {
		if s == nil {
			return []string{"", "", "", ""}
		}
		return []string{s.Column, num(s.Center), s.Range, fmt.Sprint(s.N)}
	}
	for _, r := range res.Rows {
		row := []string{cli.Safe(r.Table), cli.Safe(r.Benchmark), cli.Safe(r.Unit)}
		row = append(row, side(r.Old)...)
		row = append(row, side(r.New)...)
		row = append(row, r.Delta, num(r.P), r.Decision, r.Validity)
		o.Write(row)
	}
	for _, g := range res.Geomeans {
		o.Write([]string{cli.Safe(g.Table), "geomean", cli.Safe(g.Unit), "", num(g.Old), "", "", cli.Safe(g.Column), num(g.New), "", "", g.Delta, "", "", ""})
	}
	o.Flush()
}
