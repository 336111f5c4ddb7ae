package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// OpenExport is Open for a Reader that may also write Parquet under dir
// (pkg/fleet's corpus export): the instance's allowed_directories holds
// dir and nothing else, so a COPY can write only there, and the read
// allow-list is the pinned commit's files as for every Reader. The export
// is DuckDB's own partitioned COPY: it streams each table's new rows from
// the evidence files into one Parquet file per partition with DuckDB's
// parallel Parquet writer, which rewriting through arrow-go row group by
// row group in Go could only match with far more code.
func OpenExport(ctx context.Context, snap *corpus.Snapshot, opts Options, dir string) (*Reader, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "resolve %s", dir)
	}
	return open(ctx, snap, opts, abs+string(filepath.Separator))
}

// PartitionedCopy is one table's part of an export: the rows SQL selects
// are written under Dir as Hive partitions of PartitionBy (directories
// col=value, the columns left out of the files), one file per partition
// named Pattern with {i} its index ("part-0123abcd-{i}" gives
// part-0123abcd-0.parquet).
type PartitionedCopy struct {
	// Table is the evidence table; the view "new_rows" is defined over
	// Paths (with the table's anchor first, so its full typed schema) for
	// SQL to read.
	Table string
	Paths []string
	// SQL is curated SELECT text over new_rows and the snapshot's table
	// views, never user input.
	SQL         string
	PartitionBy []string
	Dir         string
	Pattern     string
	// KV is written as the files' Parquet key-value metadata.
	KV map[string]string
}

// WrittenFile is one Parquet file a copy wrote.
type WrittenFile struct {
	Path string // absolute
	Rows int64
}

// CopyPartitioned runs c on a Reader from OpenExport and returns the files
// it wrote with their row counts (read from the footers).
func (r *Reader) CopyPartitioned(ctx context.Context, c PartitionedCopy) ([]WrittenFile, error) {
	q := Query{Name: "export." + c.Table, Version: "1"}
	if r.writeDir == "" {
		return nil, fault.New(fault.InternalError, "CopyPartitioned needs a Reader from OpenExport")
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil || !strings.HasPrefix(dir+string(filepath.Separator), r.writeDir) {
		return nil, fault.New(fault.InternalError, "export directory %s is outside %s", c.Dir, r.writeDir)
	}
	t, ok := schema.Lookup(c.Table)
	if !ok {
		return nil, fault.New(fault.InvalidArguments, "unknown table %q", c.Table).With("table", c.Table)
	}
	if err := r.checkLive(c.Table, c.Paths); err != nil {
		return nil, err
	}
	anchor, err := filepath.Abs(corpus.AnchorPath(r.snap.Root, t))
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "resolve anchor path")
	}
	for _, k := range c.PartitionBy {
		if !plainName(k) {
			return nil, fault.New(fault.InternalError, "partition column %q", k)
		}
	}
	kvKeys := make([]string, 0, len(c.KV))
	for k := range c.KV {
		kvKeys = append(kvKeys, k)
	}
	sort.Strings(kvKeys)
	kv := make([]string, len(kvKeys))
	for i, k := range kvKeys {
		kv[i] = sqlString(k) + ": " + sqlString(c.KV[k])
	}
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return nil, r.queryErr(ctx, ctx, q, err)
	}
	defer conn.Close()
	qctx, cancel := context.WithTimeout(ctx, r.opts.QueryTimeout)
	defer cancel()
	if _, err := conn.ExecContext(qctx, newRowsView(anchor, c.Paths)); err != nil {
		return nil, r.queryErr(ctx, qctx, q, err)
	}
	opts := []string{"FORMAT parquet", "COMPRESSION zstd", "PARTITION_BY (" + strings.Join(c.PartitionBy, ", ") + ")",
		"FILENAME_PATTERN " + sqlString(c.Pattern)}
	if len(kv) > 0 {
		opts = append(opts, "KV_METADATA {"+strings.Join(kv, ", ")+"}")
	}
	stmt := fmt.Sprintf("COPY (%s) TO %s (%s)", c.SQL, sqlString(dir), strings.Join(opts, ", "))
	if _, err := conn.ExecContext(qctx, stmt); err != nil {
		return nil, r.queryErr(ctx, qctx, q, err)
	}
	var files []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			files = append(files, p)
		}
		return nil
	}); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fault.Wrap(fault.InternalError, err, "list %s", dir)
	}
	if len(files) == 0 {
		return nil, nil
	}
	sort.Strings(files)
	counts := map[string]int64{}
	rows, err := conn.QueryContext(qctx, "SELECT file_name, num_rows FROM parquet_file_metadata("+sqlList(files)+")")
	if err != nil {
		return nil, r.queryErr(ctx, qctx, q, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n sql.NullInt64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, r.queryErr(ctx, qctx, q, err)
		}
		counts[name] = n.Int64
	}
	if err := rows.Err(); err != nil {
		return nil, r.queryErr(ctx, qctx, q, err)
	}
	out := make([]WrittenFile, len(files))
	for i, f := range files {
		out[i] = WrittenFile{Path: f, Rows: counts[f]}
	}
	return out, nil
}

// Distinct returns the distinct non-null values of one string column of
// table in paths, live files of the pinned commit (an export records the
// evidence generations whose rows it has written).
func (r *Reader) Distinct(ctx context.Context, table string, paths []string, column string) ([]string, error) {
	q := Query{Name: "export.distinct." + table, Version: "1"}
	t, ok := schema.Lookup(table)
	if !ok || t.Index(column) < 0 {
		return nil, fault.New(fault.InvalidArguments, "unknown column %s.%s", table, column)
	}
	if err := r.checkLive(table, paths); err != nil {
		return nil, err
	}
	anchor, err := filepath.Abs(corpus.AnchorPath(r.snap.Root, t))
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "resolve anchor path")
	}
	var out []string
	err = r.Scan(ctx, Query{Name: q.Name, Version: q.Version, SQL: fmt.Sprintf("SELECT DISTINCT %s FROM read_parquet(%s, union_by_name=true, hive_partitioning=false, filename=false) WHERE %[1]s IS NOT NULL ORDER BY 1",
		ident(column), sqlList(append([]string{anchor}, paths...)))}, nil, func(rows *sql.Rows) error {
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out = append(out, s)
		}
		return rows.Err()
	})
	return out, err
}

// checkLive refuses paths that are not live files of table in the pinned
// commit: the allow-list holds them, and nothing else may be read.
func (r *Reader) checkLive(table string, paths []string) error {
	live, err := liveFiles(r.snap)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	if tf := live[table]; tf != nil {
		for _, p := range tf.Paths {
			known[p] = true
		}
	}
	for _, p := range paths {
		if !known[p] {
			return fault.New(fault.InternalError, "%s is not a live file of %s in commit %s", p, table, r.snap.Commit.CommitID)
		}
	}
	return nil
}

// Materialize stores the rows of a curated SELECT as the in-memory table
// name, for the copies that follow to join (an export's run dates and
// sensitive artifacts, computed once rather than once per table). The
// table lives in the instance's own catalog, not TEMP, so a replaced pool
// connection still sees it.
func (r *Reader) Materialize(ctx context.Context, name, selectSQL string) error {
	q := Query{Name: "export.materialize." + name, Version: "1"}
	if r.writeDir == "" || !plainName(name) {
		return fault.New(fault.InternalError, "Materialize %q needs a Reader from OpenExport", name)
	}
	qctx, cancel := context.WithTimeout(ctx, r.opts.QueryTimeout)
	defer cancel()
	if _, err := r.db.ExecContext(qctx, "CREATE OR REPLACE TABLE "+ident(name)+" AS "+selectSQL); err != nil {
		return r.queryErr(ctx, qctx, q, err)
	}
	return nil
}

// plainName: lower-case letters, digits and underscores (a column or table
// name an export may splice into SQL).
func plainName(s string) bool {
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

// OpenDirectory opens a Reader with no views over a directory of Parquet
// files read by glob, as another engine reads an export
// (read_parquet('DIR/runs/**/*.parquet', hive_partitioning = true)): the
// instance may read and write under dir only. pkg/fleet's tests and
// benchmarks check the export layout with it; the curated-SQL rule holds.
func OpenDirectory(ctx context.Context, dir string, opts Options) (*Reader, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "resolve %s", dir)
	}
	opts.NoSpill = true
	opts = opts.withDefaults()
	r := &Reader{snap: &corpus.Snapshot{Root: abs}, opts: opts, rows: map[string]int64{}, writeDir: abs + string(filepath.Separator)}
	conn, err := duckdb.NewConnector(r.config(), nil)
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "start DuckDB")
	}
	r.db = sql.OpenDB(conn)
	r.db.SetMaxOpenConns(1)
	r.db.SetMaxIdleConns(1)
	for _, s := range r.lockdown([]string{filepath.Join(abs, ".flameox-no-file")}) {
		if _, err := r.db.ExecContext(ctx, s); err != nil {
			r.Close()
			return nil, r.queryErr(ctx, ctx, Query{Name: "lockdown", Version: "1"}, err)
		}
	}
	return r, nil
}

// newRowsView defines new_rows over paths, the table's anchor first.
func newRowsView(anchor string, paths []string) string {
	return fmt.Sprintf("CREATE OR REPLACE VIEW new_rows AS SELECT * FROM read_parquet(%s, union_by_name=true, hive_partitioning=false, filename=false)",
		sqlList(append([]string{anchor}, paths...)))
}

// ScanRows runs a curated query over the view new_rows defined over paths
// (live files of table in the pinned commit) and the snapshot's views, on
// a Reader from OpenExport.
func (r *Reader) ScanRows(ctx context.Context, q Query, table string, paths []string, fn func(*sql.Rows) error) error {
	t, ok := schema.Lookup(table)
	if !ok || r.writeDir == "" {
		return fault.New(fault.InternalError, "ScanRows of %q needs a known table and a Reader from OpenExport", table)
	}
	if err := r.checkLive(table, paths); err != nil {
		return err
	}
	anchor, err := filepath.Abs(corpus.AnchorPath(r.snap.Root, t))
	if err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "resolve anchor path")
	}
	if _, err := r.db.ExecContext(ctx, newRowsView(anchor, paths)); err != nil {
		return r.queryErr(ctx, ctx, q, err)
	}
	return r.Scan(ctx, q, nil, fn)
}
