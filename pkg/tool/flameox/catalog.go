package flameox

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/query"
)

func measurementsQuery(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("measurements query", "[--run RUN_ID] [--workload NAME] [--parameter KEY=VALUE]... [--subject NAME] [--artifact ID] [--name-prefix P] [--include-warmups] [--limit N] [--cursor C]")
	var req query.MeasurementsRequest
	var params []string
	fs.StringVar(&req.RunID, "run", "", "only this run")
	fs.StringVar(&req.Workload, "workload", "", "only runs of this declared workload")
	fs.StringArrayVar(&params, "parameter", nil, "only runs whose workload had this parameter value, KEY=VALUE (repeatable; all must match)")
	fs.StringVar(&req.Subject, "subject", "", "only this subject: a benchmark name (Sum/n=1024), a test or a package")
	fs.StringVar(&req.ArtifactID, "artifact", "", "only values extracted from this artifact")
	fs.StringVar(&req.NamePrefix, "name-prefix", "", "only metric names starting with this, e.g. gobench. or process.")
	fs.BoolVar(&req.IncludeWarmups, "include-warmups", false, "also return warm-up values")
	cli.PageFlags(fs, &req.Limit, &req.Cursor, query.DefaultLimit, query.MaxLimit)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	var err error
	if req.Parameters, err = parameterFilter(params); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.QueryMeasurements(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { renderMeasurements(w, res) })
}

// renderMeasurements prints measurements as a table sorted as the query
// returns them (subject, metric, run, value index), each value scaled in
// its unit. A column that would be the same on every row (the run, the
// worker) moves to a header line; an empty one is left out.
func renderMeasurements(w io.Writer, res *query.MeasurementList) {
	oneRun, oneWorker := "", ""
	runs, workers := map[string]bool{}, map[string]bool{}
	warm, runIdx, bench := false, false, false
	for _, m := range res.Measurements {
		runs[m.RunID], workers[m.WorkerID] = true, true
		warm = warm || m.IsWarmup
		runIdx = runIdx || m.WorkerRunIndex != nil
		bench = bench || m.Scope == "benchmark"
	}
	if len(runs) == 1 {
		oneRun = res.Measurements[0].RunID
		fmt.Fprintf(w, "run     %s\n", oneRun)
	}
	if len(workers) == 1 && res.Measurements[0].WorkerID != "" {
		oneWorker = res.Measurements[0].WorkerID
		fmt.Fprintf(w, "worker  %s\n", cli.Name(oneWorker))
	}
	workerCol := len(workers) > 1
	if len(res.Measurements) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		var head []string
		if oneRun == "" {
			head = append(head, "RUN")
		}
		head = append(head, "SUBJECT", "NAME", "VALUE")
		if runIdx {
			head = append(head, "RUN#")
		}
		head = append(head, "VALUE#")
		if workerCol {
			head = append(head, "WORKER")
		}
		if warm {
			head = append(head, "WARMUP")
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, m := range res.Measurements {
			var row []string
			if oneRun == "" {
				row = append(row, m.RunID)
			}
			row = append(row, cli.Name(orDash(m.Subject)), cli.Name(m.Name), measurementValue(m))
			if runIdx {
				row = append(row, optInt(m.WorkerRunIndex))
			}
			row = append(row, optInt(m.ValueIndex))
			if workerCol {
				row = append(row, cli.Name(orDash(m.WorkerID)))
			}
			if warm {
				row = append(row, map[bool]string{true: "warmup", false: "-"}[m.IsWarmup])
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
	}
	footer(w, res.Returned, res.Total, res.Truncated, res.Cursor)
	if bench {
		fmt.Fprintln(w, "benchmark values are raw, one row per repetition; medians and their spread: flameox measurements summary RUN_ID")
	}
}

// measurementValue is a measurement's value in its unit (see
// formatQuantity); an integer value past float64's exact range prints
// exactly.
func measurementValue(m query.Measurement) string {
	switch {
	case m.ValueInt != nil && (*m.ValueInt > 1<<53 || *m.ValueInt < -(1<<53)):
		return fmt.Sprintf("%d %s", *m.ValueInt, cli.Name(m.Unit))
	case m.ValueInt != nil:
		return cli.Name(formatQuantity(float64(*m.ValueInt), m.Unit))
	case m.ValueFloat != nil:
		return cli.Name(formatQuantity(*m.ValueFloat, m.Unit))
	}
	return "-"
}

func optInt(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func evidenceGet(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("evidence get", "TYPE ID")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return cli.Usagef("evidence get needs TYPE and ID (types: %v)", query.RefTypes())
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.GetEvidence(ctx, ws, fs.Arg(0), fs.Arg(1))
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "%s %s (commit %s)\n", res.RefType, cli.Safe(res.RefID), corpus.Short(res.CorpusCommitID))
		switch {
		case res.Run != nil:
			fmt.Fprintf(w, "  run revision %d: execution %s, capture %s, validation %s, %d artifact(s)\n", res.Run.PublishedRevision,
				res.Run.Run.ExecutionStatus, res.Run.Run.CaptureStatus, res.Run.Run.ValidationStatus, len(res.Run.Run.Artifacts))
		case res.Artifact != nil:
			fmt.Fprintf(w, "  %d bytes, %s, %d registration(s)\n", res.Artifact.ByteLength, res.Artifact.EffectiveSensitivity, res.Artifact.RegistrationsTotal)
		case res.Generation != nil:
			fmt.Fprintf(w, "  published %s by %s; %d file(s); %d input run(s)\n", res.Generation.CreatedAt.Format("2006-01-02 15:04:05Z"),
				res.Generation.Publisher, len(res.Generation.Files), len(res.Generation.InputRunIDs))
		default:
			keys := make([]string, 0, len(res.Fields))
			for k := range res.Fields {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(w, "  %s: %s\n", k, cli.Safe(res.Fields[k]))
			}
		}
	})
}

func catalogRebuild(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("catalog rebuild", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	bar := c.Env.StartProgress("rebuilding catalog.duckdb from the corpus", 0)
	st, err := catalog.Rebuild(ctx, ws.Root, ws.Locks())
	bar.Stop()
	if err != nil {
		return err
	}
	return c.emit(st, func(w io.Writer) { renderCatalogStatus(w, st) })
}

func catalogStatus(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("catalog status", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	st, err := catalog.ReadStatus(ws.Root)
	if err != nil {
		return err
	}
	return c.emit(st, func(w io.Writer) { renderCatalogStatus(w, st) })
}

func catalogValidate(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("catalog validate", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := catalog.Validate(ctx, ws.Root)
	if err != nil {
		return err
	}
	if err := c.emit(res, func(w io.Writer) {
		switch {
		case res.Note != "":
			fmt.Fprintln(w, cli.Safe(res.Note))
		case res.Valid:
			fmt.Fprintln(w, "catalog.duckdb is valid")
		}
		for _, p := range res.Problems {
			fmt.Fprintf(w, "problem: %s\n", cli.Safe(p))
		}
	}); err != nil {
		return err
	}
	if !res.Valid {
		return &cli.NegativeResult{Message: fmt.Sprintf("catalog validation found %d problem(s); `flameox catalog rebuild` replaces the catalog", len(res.Problems))}
	}
	return nil
}

func catalogCompact(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("catalog compact", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := c.publisher(ws).Compact(ctx)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		if !res.Compacted {
			fmt.Fprintf(w, "nothing to compact (%d file(s))\n", res.FilesBefore)
			return
		}
		fmt.Fprintf(w, "compacted %d file(s) of %d generation(s) into %d; HEAD is %s\n", res.FilesBefore, len(res.Superseded), res.FilesAfter, corpus.Short(res.CommitID))
	})
}

func renderCatalogStatus(w io.Writer, st *catalog.Status) {
	if !st.Exists {
		fmt.Fprintln(w, "catalog.duckdb does not exist; `flameox catalog rebuild` creates it (queries do not need it)")
		return
	}
	fresh := "fresh"
	if !st.Fresh {
		fresh = "stale (built at an older commit)"
	}
	fmt.Fprintf(w, "catalog  built %s at commit %s, %s\nhead     %s\n", st.BuiltAt.Format("2006-01-02 15:04:05Z"), corpus.Short(st.CommitID), fresh, corpus.Short(st.Head))
}
