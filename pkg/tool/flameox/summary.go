package flameox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/query"
)

func measurementsSummary(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("measurements summary", "RUN_ID [--subject NAME] [--name-prefix P] [--include-warmups] [--limit N] [--cursor C]")
	var req query.SummaryRequest
	fs.StringVar(&req.Subject, "subject", "", "only this benchmark (exact), e.g. Sum/n=1024")
	fs.StringVar(&req.NamePrefix, "name-prefix", "", "only metric names starting with this, e.g. gobench.sec")
	fs.BoolVar(&req.IncludeWarmups, "include-warmups", false, "count warm-up values too")
	cli.PageFlags(fs, &req.Limit, &req.Cursor, query.DefaultLimit, query.MaxLimit)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("measurements summary needs exactly one RUN_ID")
	}
	req.RunID = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.SummarizeMeasurements(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { renderSummary(w, res) })
}

// renderSummary prints one line per benchmark and metric in benchstat's
// terms (median ± the interval's half-width), each warning as a numbered
// note under the table, as benchstat prints its footnotes.
func renderSummary(w io.Writer, res *query.MeasurementSummary) {
	fmt.Fprintf(w, "run     %s\n", res.RunID)
	workers := map[string]bool{}
	for _, r := range res.Rows {
		workers[r.Worker] = true
	}
	if len(workers) == 1 && len(res.Rows) > 0 && res.Rows[0].Worker != "" {
		fmt.Fprintf(w, "worker  %s\n", cli.Name(res.Rows[0].Worker))
	}
	common, varying, index := configs(res.Rows)
	if common != "" {
		fmt.Fprintf(w, "config  %s\n", common)
	}
	for i, c := range varying {
		fmt.Fprintf(w, "config %d  %s\n", i+1, c)
	}
	var notes []string
	noteOf := map[string]int{}
	if len(res.Rows) > 0 {
		var table bytes.Buffer
		tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
		head := []string{"SUBJECT", "NAME", "N", "MEDIAN", "±", "MIN", "MAX", "IQR", "NOTE"}
		if len(workers) > 1 {
			head = append([]string{"WORKER"}, head...)
		}
		if len(varying) > 0 {
			head = append([]string{"CONFIG"}, head...)
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for ri, r := range res.Rows {
			var row []string
			if len(varying) > 0 {
				row = append(row, fmt.Sprint(index[ri]))
			}
			if len(workers) > 1 {
				row = append(row, cli.Name(orDash(r.Worker)))
			}
			var marks []string
			for _, note := range r.Warnings {
				i, ok := noteOf[note]
				if !ok {
					notes = append(notes, note)
					i = len(notes)
					noteOf[note] = i
				}
				marks = append(marks, fmt.Sprintf("(%d)", i))
			}
			row = append(row, cli.Name(orDash(r.Subject)), cli.Name(r.Name), fmt.Sprint(r.N),
				cli.Name(formatQuantity(r.Median, r.Unit)), r.Range,
				cli.Name(formatQuantity(r.Min, r.Unit)), cli.Name(formatQuantity(r.Max, r.Unit)),
				cli.Name(formatQuantity(r.IQR, r.Unit)), strings.Join(marks, " "))
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
		for _, line := range strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n") {
			fmt.Fprintln(w, strings.TrimRight(line, " ")) // an empty NOTE column leaves padding
		}
	}
	for i, note := range notes {
		fmt.Fprintf(w, "(%d) %s\n", i+1, cli.Name(note))
	}
	footer(w, res.Returned, res.Total, res.Truncated, res.Cursor)
	fmt.Fprintf(w, "medians with a %.0f%% distribution-free interval, as benchstat computes them (golang.org/x/perf/benchmath)\n",
		query.SummaryConfidence*100)
}

// configs splits the rows' go test configurations (benchstat's .config)
// into the keys every row shares, printed once, and the keys that vary,
// printed as numbered configurations the CONFIG column points to (index
// is each row's, 1-based; 0 for a row without one).
func configs(rows []query.SummaryRow) (common string, varying []string, index []int) {
	index = make([]int, len(rows))
	shared := map[string]string{}
	first := true
	for _, r := range rows {
		if r.Config == nil {
			continue
		}
		if first {
			maps.Copy(shared, r.Config)
			first = false
			continue
		}
		for k, v := range shared {
			if x, ok := r.Config[k]; !ok || x != v {
				delete(shared, k)
			}
		}
	}
	text := func(c map[string]string, keep func(string) bool) string {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(c)) {
			if keep(k) {
				kv = append(kv, cli.Name(k)+"="+cli.Safe(c[k]))
			}
		}
		return strings.Join(kv, " ")
	}
	common = text(shared, func(string) bool { return true })
	seen := map[string]int{}
	for i, r := range rows {
		if r.Config == nil {
			continue
		}
		v := text(r.Config, func(k string) bool { _, same := shared[k]; return !same })
		if v == "" {
			continue
		}
		if _, ok := seen[v]; !ok {
			varying = append(varying, v)
			seen[v] = len(varying)
		}
		index[i] = seen[v]
	}
	return common, varying, index
}
