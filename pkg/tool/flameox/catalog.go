package flameox

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/query"
)

func measurementsQuery(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("measurements query", "[--run RUN_ID] [--artifact ID] [--name-prefix P] [--include-warmups] [--limit N] [--cursor C]")
	var req query.MeasurementsRequest
	fs.StringVar(&req.RunID, "run", "", "only this run")
	fs.StringVar(&req.ArtifactID, "artifact", "", "only values extracted from this artifact")
	fs.StringVar(&req.NamePrefix, "name-prefix", "", "only metric names starting with this")
	fs.BoolVar(&req.IncludeWarmups, "include-warmups", false, "also return warm-up values")
	cli.PageFlags(fs, &req.Limit, &req.Cursor, query.DefaultLimit, query.MaxLimit)
	if err := c.parse(fs, args); err != nil {
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
	return c.emit(res, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tNAME\tVALUE\tUNIT\tWORKER\tRUN#\tVALUE#\tWARMUP")
		for _, m := range res.Measurements {
			v := ""
			if m.ValueInt != nil {
				v = fmt.Sprint(*m.ValueInt)
			} else if m.ValueFloat != nil {
				v = fmt.Sprint(*m.ValueFloat)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\n", m.RunID, cli.Name(m.Name), v, cli.Name(m.Unit), cli.Name(m.WorkerID),
				optInt(m.WorkerRunIndex), optInt(m.ValueIndex), m.IsWarmup)
		}
		tw.Flush()
		footer(w, res.Returned, res.Total, res.Truncated, res.Cursor)
	})
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
		return cli.Usagef("flameox evidence get needs TYPE and ID (types: %v)", query.RefTypes())
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
	st, err := catalog.Rebuild(ctx, ws.Root, ws.Locks())
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
		if res.Valid {
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
