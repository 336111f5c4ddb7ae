package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
)

// Dataset is one exported corpus (pkg/fleet's export layout): the
// workspace it came from, the corpus commit it pinned, and the exact
// Parquet files of each table. Paths are absolute; the caller found them
// from the export's manifest, never by a glob.
type Dataset struct {
	WorkspaceID string
	CommitID    string
	Files       map[string][]string
	Rows        map[string]int64 // per table, from the manifest; may be nil
}

// DefaultDatasetMemoryLimitBytes is OpenDatasets' memory budget: a fleet
// query reads many corpora at once.
const DefaultDatasetMemoryLimitBytes = 2 << 30

// Columns every dataset view adds: which corpus a row came from.
const (
	ColumnWorkspaceID = "corpus_workspace_id"
	ColumnCommitID    = "corpus_commit_id"
)

// OpenDatasets starts a locked-down in-memory DuckDB instance that reads
// exactly the listed files of several exported corpora, with one view per
// table over all of them (rows tagged with corpus_workspace_id and
// corpus_commit_id, columns matched by name so that corpora of older
// minors read with the newer columns null) and the *_current views, kept
// per corpus. A query past the memory budget spills into a private
// directory under os.TempDir (an export directory is only read).
// The same curated-SQL rule as Open holds: callers run only Query values
// written in this repository.
func OpenDatasets(ctx context.Context, sets []Dataset, opts Options) (*Reader, error) {
	if opts.MemoryLimitBytes <= 0 {
		opts.MemoryLimitBytes = DefaultDatasetMemoryLimitBytes
	}
	opts = opts.withDefaults()
	ids := make([]string, 0, len(sets))
	perTable := map[string][]int{} // table -> indexes of sets that have it
	var allowed []string
	for i, ds := range sets {
		ids = append(ids, ds.CommitID)
		for table, paths := range ds.Files {
			if !datasetTableOK(table) {
				return nil, fault.New(fault.InvalidArguments, "table name %q in corpus %s", table, ds.WorkspaceID).With("table", table)
			}
			if len(paths) == 0 {
				continue
			}
			for _, p := range paths {
				if !filepath.IsAbs(p) {
					return nil, fault.New(fault.InternalError, "dataset path %s is not absolute", p)
				}
				if err := regularFile(p, p); err != nil {
					return nil, err
				}
			}
			allowed = append(allowed, paths...)
			perTable[table] = append(perTable[table], i)
		}
	}
	r := &Reader{snap: &corpus.Snapshot{Commit: corpus.Commit{CommitID: strings.Join(ids, ",")}}, opts: opts, rows: map[string]int64{}}
	var err error
	if !opts.NoSpill {
		// Spill into a private directory of the system's temporary
		// directory (created by DuckDB only when it spills, removed on
		// Close), never into an export directory: those are only read.
		if r.tempDir, err = filepath.Abs(filepath.Join(os.TempDir(), "flameox-fleet-"+durable.RandomHex(8))); err != nil {
			return nil, fault.Wrap(fault.InternalError, err, "resolve temp directory")
		}
	}
	tables := make([]string, 0, len(perTable))
	for t := range perTable {
		tables = append(tables, t)
		for _, i := range perTable[t] {
			r.rows[t] += sets[i].Rows[t]
		}
	}
	sort.Strings(tables)
	conn, err := duckdb.NewConnector(r.config(), nil)
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "start DuckDB")
	}
	r.db = sql.OpenDB(conn)
	r.db.SetMaxOpenConns(1)
	r.db.SetMaxIdleConns(1)
	if err := r.setupDatasets(ctx, allowed, sets, tables, perTable); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// HasTable reports whether the Reader has a view of table (some dataset,
// or the snapshot, has files of it).
func (r *Reader) HasTable(table string) bool {
	_, ok := r.rows[table]
	return ok
}

func (r *Reader) setupDatasets(ctx context.Context, allowed []string, sets []Dataset, tables []string, perTable map[string][]int) error {
	c, err := r.db.Conn(ctx)
	if err != nil {
		return r.queryErr(ctx, ctx, Query{Name: "open", Version: "1"}, err)
	}
	defer c.Close()
	if len(allowed) == 0 {
		allowed = []string{"/nonexistent/flameox-no-files"}
	}
	for _, s := range r.lockdown(allowed) {
		if _, err := c.ExecContext(ctx, s); err != nil {
			return r.queryErr(ctx, ctx, Query{Name: "lockdown", Version: "1"}, fmt.Errorf("%s: %w", strings.SplitN(s, " =", 2)[0], err))
		}
	}
	var b strings.Builder
	for _, t := range tables {
		parts := make([]string, 0, len(perTable[t]))
		for _, i := range perTable[t] {
			ds := sets[i]
			parts = append(parts, fmt.Sprintf("SELECT %s AS %s, %s AS %s, * FROM read_parquet(%s, union_by_name=true, hive_partitioning=false, filename=false)",
				sqlString(ds.WorkspaceID), ColumnWorkspaceID, sqlString(ds.CommitID), ColumnCommitID, sqlList(ds.Files[t])))
		}
		fmt.Fprintf(&b, "CREATE VIEW %s AS %s;\n", ident(t), strings.Join(parts, " UNION ALL BY NAME "))
	}
	if b.Len() > 0 {
		if _, err := c.ExecContext(ctx, b.String()); err != nil {
			return r.queryErr(ctx, ctx, Query{Name: "dataset_views", Version: "1"}, err)
		}
	}
	b.Reset()
	for _, v := range currentViews {
		if _, ok := perTable[v.Table]; !ok {
			continue
		}
		cols, err := viewColumns(ctx, c, v.Table)
		if err != nil {
			return r.queryErr(ctx, ctx, Query{Name: "dataset_columns", Version: "1"}, err)
		}
		if !slices.Contains(cols, v.Key) {
			continue // an export without the key column: no current view
		}
		// An export may leave out publication columns: order by the ones
		// it kept, and keep the first row when none is left.
		var order []string
		for _, term := range strings.Split(v.Order, ",") {
			if f := strings.Fields(term); len(f) > 0 && slices.Contains(cols, f[0]) {
				order = append(order, strings.TrimSpace(term))
			}
		}
		if len(order) == 0 {
			order = []string{"1"}
		}
		// As Open's views, only keys with several rows are windowed;
		// keys are compared by a 64-bit hash of (corpus, key), so finding
		// them groups integers, not strings, and a hash collision only
		// sends a unique key through the exact window too.
		key := fmt.Sprintf("hash(%s, %s)", ColumnWorkspaceID, v.Key)
		// The duplicated keys' subquery is written twice rather than as
		// a CTE: a MATERIALIZED CTE inside a view cost several times the
		// query over a million runs.
		dups := fmt.Sprintf("SELECT %[2]s AS h FROM %[1]s GROUP BY h HAVING count(*) > 1", ident(v.Table), key)
		fmt.Fprintf(&b, "CREATE VIEW %[1]s AS SELECT * FROM %[2]s WHERE %[3]s NOT IN (%[7]s) UNION ALL "+
			"SELECT * FROM (SELECT * FROM %[2]s WHERE %[3]s IN (%[7]s)) QUALIFY row_number() OVER (PARTITION BY %[4]s, %[5]s ORDER BY %[6]s) = 1;\n",
			ident(v.Name), ident(v.Table), key, ColumnWorkspaceID, v.Key, strings.Join(order, ", "), dups)
	}
	if b.Len() > 0 {
		if _, err := c.ExecContext(ctx, b.String()); err != nil {
			return r.queryErr(ctx, ctx, Query{Name: "dataset_current_views", Version: "1"}, err)
		}
	}
	return nil
}

// viewColumns lists the column names of a view (binding reads only the
// files' footers).
func viewColumns(ctx context.Context, c *sql.Conn, view string) ([]string, error) {
	rows, err := c.QueryContext(ctx, "SELECT column_name FROM (DESCRIBE "+ident(view)+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// datasetTableOK: a table name is lower-case letters, digits and underscores.
func datasetTableOK(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
