package catalog

import (
	"context"
	"database/sql"
	"errors"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/flameox/flameox/pkg/fault"
)

// Query is one curated, versioned read. SQL is written in this repository,
// never taken from a user or agent, and takes its inputs as $1, $2, ….
// Bump Version whenever the SQL's meaning, columns or order change: cursors
// are bound to it.
type Query struct {
	Name    string
	Version string
	SQL     string
}

// ID names the query in errors and results, e.g. "runs.list@1".
func (q Query) ID() string { return q.Name + "@" + q.Version }

// Scan runs q with args under the Reader's time budget and hands the rows to
// fn, which must not keep them. Errors carry the query's name and version:
// a timeout is QUERY_BUDGET_EXCEEDED, a cancelled ctx PROCESS_CANCELLED, a
// query past the memory limit QUERY_BUDGET_EXCEEDED, anything else from
// DuckDB INTERNAL_ERROR (curated SQL that fails is a bug). A *fault.Error
// returned by fn is passed through unchanged.
func (r *Reader) Scan(ctx context.Context, q Query, args []any, fn func(*sql.Rows) error) error {
	if r.db == nil {
		return fault.New(fault.InternalError, "query %s on a closed catalog reader", q.ID())
	}
	qctx, cancel := context.WithTimeout(ctx, r.opts.QueryTimeout)
	defer cancel()
	conn, err := r.db.Conn(qctx)
	if err != nil {
		return r.queryErr(ctx, qctx, q, err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(qctx, q.SQL, args...)
	if err != nil {
		return r.queryErr(ctx, qctx, q, err)
	}
	ferr := fn(rows)
	cerr := rows.Close()
	if ferr == nil {
		ferr = rows.Err()
	}
	if ferr == nil {
		ferr = cerr
	}
	if ferr == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(ferr, &fe) && ctx.Err() == nil && qctx.Err() == nil {
		return fe
	}
	return r.queryErr(ctx, qctx, q, ferr)
}

// queryErr classifies an error of query q. ctx is the caller's context,
// qctx the one carrying the time budget.
func (r *Reader) queryErr(ctx, qctx context.Context, q Query, err error) error {
	var fe *fault.Error
	switch {
	case ctx.Err() != nil:
		fe = fault.Wrap(fault.ProcessCancelled, ctx.Err(), "query %s was cancelled", q.ID())
	case qctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		fe = fault.New(fault.QueryBudgetExceeded, "query %s exceeded its time budget of %s", q.ID(), r.opts.QueryTimeout).
			With("budget", r.opts.QueryTimeout.String()).
			Fix("Narrow the filters (a run, a time range, a smaller limit) and repeat the query.")
	case isDuckDBError(err, duckdb.ErrorTypeOutOfMemory):
		fe = fault.Wrap(fault.QueryBudgetExceeded, err, "query %s exceeded its memory budget of %d bytes", q.ID(), r.opts.MemoryLimitBytes).
			With("budget", "memory").
			Fix("Narrow the filters and repeat the query.")
	default:
		fe = fault.Wrap(fault.InternalError, err, "query %s failed", q.ID()).
			Fix("This is a bug in flameox's curated queries; please report it with the command you ran.")
	}
	return fe.With("query", q.Name).With("query_version", q.Version).With("commit_id", r.Commit())
}

func isDuckDBError(err error, t duckdb.ErrorType) bool {
	var de *duckdb.Error
	return errors.As(err, &de) && de.Type == t
}

// RowCap clamps a requested row limit to 1..MaxRows (0 means MaxRows) and
// returns it with the number of rows to fetch, limit+1: the extra row only
// tells the caller that the result was truncated.
func (r *Reader) RowCap(limit int) (capped, fetch int) {
	if limit <= 0 || limit > r.opts.MaxRows {
		limit = r.opts.MaxRows
	}
	return limit, limit + 1
}

// ClipText caps a text cell at the Reader's MaxTextBytes (see Clip).
func (r *Reader) ClipText(s string) (string, bool) { return Clip(s, r.opts.MaxTextBytes) }

// Clip returns s cut to at most max bytes on a UTF-8 boundary, and whether
// it was cut. Invalid UTF-8 is kept as it is up to the boundary.
func Clip(s string, max int) (string, bool) {
	if max < 0 {
		max = 0
	}
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && cut > max-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut > 0 && !utf8.RuneStart(s[cut]) {
		cut = max // not UTF-8 here: cut at the byte limit
	}
	return s[:cut], true
}
