// Package foxcatalog is fox-catalog, the plumbing over the DuckDB catalog
// and the curated read queries.
//
// Usage:
//
//	fox-catalog rebuild | validate | status | compact
//	fox-catalog runs [--limit N] [--cursor C]
//	fox-catalog artifacts [--limit N] [--cursor C]
//	fox-catalog measurements [--run ID] [--name-prefix P] [--include-warmups] [--limit N] [--cursor C]
//	fox-catalog evidence TYPE ID
//
// Each verb writes one record on stdout: `catalog_status`,
// `catalog_validation` or `compaction` for the administrative verbs, and a
// `query_result` record (query name, pinned commit, and the bounded result
// the porcelain prints with --json) for the queries. Read-only verbs never
// take the write lock; rebuild takes it only to swap the new catalog in;
// compact publishes a superseding generation through pkg/publish.
package foxcatalog

import (
	"context"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/services/publishing"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

const usage = `usage: fox-catalog <verb> [flags]

Verbs:
  rebuild | validate | status | compact
  runs | artifacts | measurements | evidence TYPE ID`

// Run is fox-catalog's entry point.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	env.Mode = cli.Records
	if handled, err := cli.HelpVerb(env, usage, args); handled {
		return err
	}
	verb := args[0]
	fs := cli.NewFlags(env, "fox-catalog "+verb, usage)
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	var runs query.ListRunsRequest
	var arts query.ListArtifactsRequest
	var ms query.MeasurementsRequest
	switch verb {
	case "runs":
		pageFlags(fs, &runs.Limit, &runs.Cursor)
		fs.StringVar(&runs.ExecutionStatus, "execution-status", "", "filter")
		fs.StringVar(&runs.CaptureStatus, "capture-status", "", "filter")
		fs.StringVar(&runs.RunType, "type", "", "filter")
	case "artifacts":
		pageFlags(fs, &arts.Limit, &arts.Cursor)
		fs.StringVar(&arts.Kind, "kind", "", "filter")
		fs.StringVar(&arts.RunID, "run", "", "filter")
	case "measurements":
		pageFlags(fs, &ms.Limit, &ms.Cursor)
		fs.StringVar(&ms.RunID, "run", "", "filter")
		fs.StringVar(&ms.ArtifactID, "artifact", "", "filter")
		fs.StringVar(&ms.NamePrefix, "name-prefix", "", "filter")
		fs.BoolVar(&ms.IncludeWarmups, "include-warmups", false, "also warm-up values")
	}
	if err := cli.Parse(fs, args[1:]); err != nil {
		return err
	}
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	var kind string
	var res any
	negative := false
	switch verb {
	case "rebuild":
		kind = "catalog_status"
		res, err = catalog.Rebuild(ctx, ws.Root, ws.Locks())
	case "status":
		kind = "catalog_status"
		res, err = catalog.ReadStatus(ws.Root)
	case "validate":
		kind = "catalog_validation"
		var v *catalog.ValidateResult
		v, err = catalog.Validate(ctx, ws.Root)
		negative = err == nil && !v.Valid
		res = v
	case "compact":
		kind = "compaction"
		res, err = publishing.Publisher(ws, env.Now).Compact(ctx)
	case "runs":
		kind = "query_result"
		res, err = query.ListRuns(ctx, ws, runs)
	case "artifacts":
		kind = "query_result"
		res, err = query.ListArtifacts(ctx, ws, arts)
	case "measurements":
		kind = "query_result"
		res, err = query.QueryMeasurements(ctx, ws, ms)
	case "evidence":
		if fs.NArg() != 2 {
			return cli.Usagef("evidence needs TYPE and ID")
		}
		kind = "query_result"
		res, err = query.GetEvidence(ctx, ws, fs.Arg(0), fs.Arg(1))
	default:
		return cli.Usagef("unknown verb %q", verb)
	}
	if err != nil {
		return err
	}
	if err := record.NewWriter(env.Stdout).Write(record.NewResult(kind, res)); err != nil {
		return err
	}
	if negative {
		return &cli.NegativeResult{Message: "catalog validation found problems; `fox-catalog rebuild` replaces the catalog"}
	}
	return nil
}

func pageFlags(fs *pflag.FlagSet, limit *int, cursor *string) {
	cli.PageFlags(fs, limit, cursor, query.DefaultLimit, query.MaxLimit)
}
