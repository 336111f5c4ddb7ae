package flameox

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fleet"
)

// fleetCommands are export corpus.
func fleetCommands() []*Command {
	return []*Command{{Name: "export corpus", Args: "--to DIR [--since COMMIT] [--tables T1,T2] [--include-sensitive]",
		Summary: "write the pinned commit's evidence as a Hive-partitioned Parquet dataset (table/workspace_id=…/date=…/part-….parquet) with a manifest, for DuckDB, Spark and Trino; incremental",
		CLIOnly: "writes a dataset outside the project for other engines and machines (CI uploads it); agents query the corpus itself",
		Run:     exportCorpusCmd}}
}

func exportCorpusCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("export corpus", "--to DIR [--since COMMIT] [--tables T1,T2] [--include-sensitive]")
	var req fleet.ExportRequest
	fs.StringVar(&req.To, "to", "", "the dataset directory (created if missing; other workspaces may export into it too)")
	fs.StringVar(&req.Since, "since", "", "leave out the rows this corpus commit already held (an id or a unique hex prefix)")
	fs.StringSliceVar(&req.Tables, "tables", nil, "export only these tables (default: all; docs/tables.md)")
	fs.BoolVar(&req.IncludeSensitive, "include-sensitive", false, "keep sensitive artifacts' rows, argv and host names (docs/fleet.md)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.Usagef("export corpus takes no positional arguments (name the directory with --to)")
	}
	if req.To == "" {
		return cli.Usagef("export corpus needs --to DIR")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := fleet.Export(ctx, ws, req, c.Env.Now())
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		if res.UpToDate {
			fmt.Fprintf(w, "%s is up to date with commit %s of workspace %s (nothing written)\n", cli.Safe(res.Dir), corpus.Short(res.CommitID), res.WorkspaceID)
		} else {
			fmt.Fprintf(w, "exported commit %s of workspace %s to %s: %s\n", corpus.Short(res.CommitID), res.WorkspaceID, cli.Safe(res.Dir), res)
		}
		names := make([]string, 0, len(res.Tables))
		for n := range res.Tables {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			t := res.Tables[n]
			fmt.Fprintf(w, "  %-20s %8d row(s) written, %d in %d file(s)\n", n, t.RowsWritten, t.Rows, t.Files)
		}
		if len(res.Removed) > 0 {
			fmt.Fprintf(w, "  removed %d file(s) an interrupted export left\n", len(res.Removed))
		}
		for _, e := range res.Excluded {
			fmt.Fprintf(w, "  left out: %s\n", e)
		}
		fmt.Fprintf(w, "manifest %s\n", cli.Safe(res.Manifest))
	})
}
