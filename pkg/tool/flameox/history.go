package flameox

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fleet"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// historyCommands are fleet query and history.
func historyCommands() []*Command {
	return []*Command{
		{Name: "fleet query", Args: "NAME --from DIR... [--param K=V]...", Summary: "a named, versioned question over several exported corpora at once (--list names them): metric history and changes, runs per environment, failures by environment, newest comparisons",
			MCPTool: "query_fleet", Run: fleetQuery},
		{Name: "history", Args: "METRIC --workload W [--benchmark B] [--from DIR]...", Summary: "a metric's series by source state in commit order, change points flagged where benchstat's test finds a change beyond the noise",
			CLIOnly: "MCP asks the same through query_fleet (name metric_changes), one tool for both", Run: historyCmd},
	}
}

func fleetQuery(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("fleet query", "NAME --from DIR [--from DIR]... [--param K=V]... [--limit N] | --list")
	var req fleet.QueryRequest
	var params []string
	var list bool
	fs.StringArrayVar(&req.From, "from", nil, "export directory (flameox export corpus --to DIR); repeat for several")
	fs.StringArrayVar(&params, "param", nil, "a parameter of the query, K=V; repeat for several")
	fs.IntVar(&req.Limit, "limit", 0, fmt.Sprintf("rows to return (default %d, max %d)", query.DefaultLimit, query.MaxLimit))
	fs.BoolVar(&list, "list", false, "list the queries, their versions and parameters")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if list {
		if fs.NArg() > 0 {
			return cli.Usagef("fleet query --list takes no NAME")
		}
		qs := fleet.Queries()
		out := struct {
			SchemaVersion int           `json:"schema_version"`
			Queries       []fleet.Named `json:"queries"`
		}{1, qs}
		return c.emit(out, func(w io.Writer) { renderFleetQueries(w, qs) })
	}
	if fs.NArg() != 1 {
		return cli.Usagef("fleet query takes one query NAME (flameox fleet query --list names them)")
	}
	req.Name = fs.Arg(0)
	req.Params = map[string]string{}
	for _, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return cli.Usagef("--param %q is not K=V", p)
		}
		req.Params[strings.TrimSpace(k)] = v
	}
	if ws, err := c.workspace(); err == nil {
		// metric_changes reads the workspace without --from; its
		// project's git history orders the commits.
		req.Repo = ws.ProjectRoot
		if len(req.From) == 0 {
			req.Workspace = ws
		}
	}
	res, err := fleet.Query(ctx, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { renderFleetResult(w, res) })
}

func renderFleetQueries(w io.Writer, qs []fleet.Named) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUERY\tVERSION\tPARAMS\tANSWERS")
	for _, q := range qs {
		var ps []string
		for _, p := range q.Params {
			s := p.Name
			if p.Required {
				s += " (required)"
			}
			ps = append(ps, s)
		}
		if len(ps) == 0 {
			ps = []string{"-"}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", q.Name, q.Version, strings.Join(ps, ", "), q.Description)
	}
	tw.Flush()
}

func renderFleetResult(w io.Writer, res *fleet.QueryResult) {
	fmt.Fprintf(w, "%s@%s over %d corpora\n", res.Query, res.Version, len(res.Corpora))
	for _, c := range res.Corpora {
		fmt.Fprintf(w, "  workspace %s  commit %s  %s\n", c.WorkspaceID, corpus.Short(c.CommitID), cli.Safe(c.Dir))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(res.Columns, "\t")))
	for _, row := range res.Rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = fleetCell(res.Columns[i], v)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	if res.Truncated {
		fmt.Fprintf(w, "\n%d of %d rows; --limit shows more\n", res.Returned, res.Total)
	} else if len(res.Rows) == 0 {
		fmt.Fprintln(w, "(no rows)")
	}
	for _, s := range res.Warnings {
		fmt.Fprintln(w, "warning:", cli.Safe(s))
	}
}

func fleetCell(col string, v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case float64:
		return fmt.Sprintf("%.4g", x)
	case string:
		if strings.HasSuffix(col, "_id") || col == "head_commit" {
			return corpus.Short(x)
		}
		return cli.Name(cli.Safe(x))
	}
	return cli.Safe(fmt.Sprint(v))
}

func historyCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("history", "METRIC --workload W [--benchmark B] [--environment ENV] [--from DIR]... [--threshold F] [--limit N]")
	var req fleet.HistoryRequest
	fs.StringVar(&req.Workload, "workload", "", "workload name (required)")
	fs.StringVar(&req.Benchmark, "benchmark", "", "benchmark or test (the measurement's subject)")
	fs.StringVar(&req.Environment, "environment", "", "environment id")
	fs.StringArrayVar(&req.From, "from", nil, "read export directories instead of the workspace; repeat for several")
	fs.Float64Var(&req.Threshold, "threshold", 0, "practical threshold, a fraction: a change point's interval must lie beyond it")
	fs.IntVar(&req.Limit, "limit", 0, fmt.Sprintf("newest source states per series (default %d, max %d)", query.DefaultLimit, query.MaxLimit))
	fs.StringVar(&req.Repo, "repo", "", "git checkout whose history orders the commits (default: the project)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("history takes one METRIC, e.g. gobench.sec/op (flameox runs show lists a run's metrics)")
	}
	req.Metric = fs.Arg(0)
	var ws *workspace.Workspace
	if len(req.From) == 0 {
		var err error
		if ws, err = c.workspace(); err != nil {
			return err
		}
	} else if req.Repo == "" {
		if w, err := c.workspace(); err == nil {
			req.Repo = w.ProjectRoot
		}
	}
	h, err := fleet.MetricHistory(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(h, func(w io.Writer) { renderHistory(w, h) })
}

func renderHistory(w io.Writer, h *fleet.History) {
	fmt.Fprintf(w, "%s of workload %s", cli.Safe(h.Metric), cli.Safe(h.Workload))
	if h.Benchmark != "" {
		fmt.Fprintf(w, ", %s", cli.Safe(h.Benchmark))
	}
	order := "git history"
	if h.Order == fleet.OrderFirstMeasured {
		order = "first measured"
	}
	fmt.Fprintf(w, "; source states in %s order; %d change point(s)\n", order, h.ChangePoints)
	for _, c := range h.Corpora {
		fmt.Fprintf(w, "  workspace %s  commit %s\n", c.WorkspaceID, corpus.Short(c.CommitID))
	}
	for _, s := range h.Series {
		fmt.Fprintln(w)
		name := s.Benchmark
		if s.Package != "" {
			name += " (" + s.Package + ")"
		}
		fmt.Fprintf(w, "%s  %s  environment %s  %s\n", cli.Safe(name), cli.Safe(s.Unit), corpus.Short(s.EnvironmentID), strings.ReplaceAll(s.Polarity, "_", " "))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "COMMIT\tFIRST MEASURED\tRUNS\tN\tMEDIAN\t±\tDELTA\tP\tQ\tCHANGE")
		for _, p := range s.Points {
			commit := corpus.Short(p.HeadCommit)
			if commit == "" {
				commit = corpus.Short(p.SourceStateID)
			}
			if !p.Clean {
				commit += "*"
			}
			delta, pv, qv, change := "", "", "", ""
			if p.Change != nil {
				delta, pv, qv = p.Change.Delta, fnum(p.Change.P), fnum(p.Change.Q)
				if p.Change.ChangePoint {
					change = "<- " + p.Change.Direction
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", commit, p.FirstMeasured.Format("2006-01-02 15:04"),
				p.Runs, p.N, fnumG(p.Median), spread(p), delta, pv, qv, change)
		}
		tw.Flush()
		if s.Truncated {
			fmt.Fprintf(w, "(newest %d of %d source states; --limit shows more)\n", len(s.Points), s.Total)
		}
	}
	if h.Truncated && h.Returned < h.Total {
		fmt.Fprintf(w, "\n%d of %d series; narrow with --benchmark or --environment\n", h.Returned, h.Total)
	}
	dirty := false
	for _, s := range h.Series {
		for _, p := range s.Points {
			dirty = dirty || !p.Clean
		}
	}
	if dirty {
		fmt.Fprintln(w, "\n* not a clean checkout: the source state has changes or untracked inputs beside its commit")
	}
	if len(h.Series) > 0 {
		fmt.Fprintf(w, "\nchange points: %s\n", h.Method)
	}
	for _, s := range h.Warnings {
		fmt.Fprintln(w, "warning:", cli.Safe(s))
	}
}

func fnum(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}

func fnumG(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.4g", *p)
}

// spread is the median interval's larger half-width in percent, as
// benchstat prints it.
func spread(p fleet.Point) string {
	if p.Median == nil || p.Lo == nil || p.Hi == nil || *p.Median == 0 {
		return ""
	}
	d := math.Max(*p.Hi-*p.Median, *p.Median-*p.Lo) / math.Abs(*p.Median) * 100
	return fmt.Sprintf("±%.0f%%", d)
}
