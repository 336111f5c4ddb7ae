package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// Status describes catalog.duckdb.
type Status struct {
	Path          string        `json:"path"`
	Exists        bool          `json:"exists"`
	Valid         bool          `json:"valid"`
	FormatVersion int           `json:"format_version,omitempty"`
	BuiltAt       time.Time     `json:"built_at"`
	CommitID      string        `json:"commit_id,omitempty"`
	Head          string        `json:"head"`
	Fresh         bool          `json:"fresh"` // built from the current HEAD
	Tables        []TableStatus `json:"tables"`
}

// TableStatus is one row of flameox_tables.
type TableStatus struct {
	Table       string `json:"table"`
	SchemaMajor int    `json:"schema_major"`
	SchemaMinor int    `json:"schema_minor"`
	Rows        int64  `json:"rows"`
	Files       int    `json:"files"`
}

// ValidateResult is the outcome of Validate.
type ValidateResult struct {
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems"`
	// Note says why a valid result has no catalog to inspect (a fresh
	// workspace has none: it is built on demand and no query needs it).
	Note   string  `json:"note,omitempty"`
	Status *Status `json:"status"`
}

// builtinExtensions are the extensions DuckDB v1.5 (as linked by
// duckdb-go-bindings) loads by default, all statically linked. Anything
// else loaded in a catalog instance is a problem.
var builtinExtensions = map[string]bool{"autocomplete": true, "core_functions": true, "icu": true, "json": true, "parquet": true}

// ReadStatus reports what catalog.duckdb holds and whether it is fresh
// (built from the current HEAD). A missing file is Exists=false, not an
// error; an invalid one is Valid=false and never Fresh.
func ReadStatus(root string) (*Status, error) {
	res, err := Validate(context.Background(), root)
	if err != nil {
		return nil, err
	}
	return res.Status, nil
}

// Validate opens catalog.duckdb read-only and reports every problem: an
// unreadable file, a wrong format, and anything besides the two
// known tables (other tables, views, macros, sequences, types, indexes,
// schemas, attached databases, non-built-in extensions, secrets). A
// missing file is valid, with a Note: nothing is there to be wrong.
func Validate(ctx context.Context, root string) (*ValidateResult, error) {
	head, err := corpus.HeadID(root)
	if err != nil {
		return nil, err
	}
	path := Path(root)
	st := &Status{Path: path, Head: head, Tables: []TableStatus{}}
	res := &ValidateResult{Status: st, Problems: []string{}}
	if fi, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		// Not a problem: the catalog is a rebuildable index that no query
		// depends on, and a fresh workspace has none yet.
		res.Valid = true
		res.Note = FileName + " does not exist yet (queries do not need it; `flameox catalog rebuild` builds it)"
		return res, nil
	} else if err != nil || !fi.Mode().IsRegular() {
		st.Exists = true
		res.Problems = append(res.Problems, FileName+" is not a regular file")
		return res, nil
	}
	got, problems, err := inspect(ctx, path)
	if err != nil {
		return nil, err
	}
	got.Path, got.Head = path, head
	got.Fresh = len(problems) == 0 && got.CommitID == head
	res.Status, res.Problems, res.Valid = got, problems, len(problems) == 0
	return res, nil
}

// catalogAlias is the name under which inspect attaches a catalog file.
const catalogAlias = "cat"

// hostQuery lists, in the inspecting instance itself, extensions beyond the
// built-ins and secrets. It runs before external access is disabled,
// because duckdb_extensions() lists the extension directory.
const hostQuery = `
SELECT 'extension ' || extension_name FROM duckdb_extensions() WHERE loaded AND NOT list_contains($ALLOW, extension_name)
UNION ALL SELECT 'secret ' || name FROM duckdb_secrets()`

// objectQuery lists the objects of the attached catalog other than its two
// tables, and databases attached besides it.
const objectQuery = `
SELECT 'attached database ' || database_name FROM duckdb_databases() WHERE NOT internal AND database_name NOT IN ('memory', 'cat')
UNION ALL SELECT 'schema ' || schema_name FROM duckdb_schemas() WHERE database_name = 'cat' AND NOT internal
UNION ALL SELECT 'table ' || schema_name || '.' || table_name FROM duckdb_tables()
  WHERE database_name = 'cat' AND NOT (schema_name = 'main' AND table_name IN ('flameox_catalog', 'flameox_tables'))
UNION ALL SELECT 'table ' || database_name || '.' || table_name FROM duckdb_tables() WHERE database_name NOT IN ('cat')
UNION ALL SELECT 'view ' || schema_name || '.' || view_name FROM duckdb_views() WHERE database_name = 'cat' AND NOT internal
UNION ALL SELECT function_type || ' ' || schema_name || '.' || function_name FROM duckdb_functions() WHERE database_name = 'cat' AND NOT internal
UNION ALL SELECT 'sequence ' || sequence_name FROM duckdb_sequences() WHERE database_name = 'cat'
UNION ALL SELECT 'index ' || index_name FROM duckdb_indexes() WHERE database_name = 'cat'
UNION ALL SELECT 'type ' || type_name FROM duckdb_types() WHERE database_name = 'cat' AND NOT internal
ORDER BY 1`

// wantColumns is the exact layout of the two tables.
const wantColumns = "flameox_catalog(format_version INTEGER, built_at TIMESTAMP WITH TIME ZONE, commit_id VARCHAR) " +
	"flameox_tables(table_name VARCHAR, schema_major INTEGER, schema_minor INTEGER, rows BIGINT, files INTEGER)"

const columnsQuery = `
SELECT string_agg(table_name || '(' || cols || ')', ' ' ORDER BY table_name) FROM (
  SELECT table_name, string_agg(column_name || ' ' || data_type, ', ' ORDER BY column_index) AS cols
  FROM duckdb_columns() WHERE database_name = 'cat' AND schema_name = 'main'
  AND table_name IN ('flameox_catalog', 'flameox_tables') GROUP BY table_name)`

// inspect attaches a catalog file read-only to a fresh, locked-down
// in-memory instance (so no instance cache or configuration is shared with
// another open of the same path) and returns its status and problems. Data
// is read only after the structure checks pass.
func inspect(ctx context.Context, path string) (*Status, []string, error) {
	st := &Status{Exists: true, Tables: []TableStatus{}}
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, nil, fault.Wrap(fault.InternalError, err, "start DuckDB")
	}
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxOpenConns(1)
	internal := func(err error) (*Status, []string, error) {
		if ctx.Err() != nil {
			return nil, nil, fault.Wrap(fault.ProcessCancelled, ctx.Err(), "validate %s", FileName)
		}
		return nil, nil, fault.Wrap(fault.InternalError, err, "inspect %s", FileName)
	}
	for _, s := range []string{"SET autoinstall_known_extensions = false", "SET autoload_known_extensions = false",
		"SET allowed_paths = " + sqlList([]string{path, path + ".wal"}), "SET threads = 1", "SET memory_limit = '128MB'"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return internal(err)
		}
	}
	allow := make([]string, 0, len(builtinExtensions))
	for e := range builtinExtensions {
		allow = append(allow, e)
	}
	sort.Strings(allow)
	problems, err := listProblems(ctx, db, strings.Replace(hostQuery, "$ALLOW", sqlList(allow), 1))
	if err != nil {
		return internal(err)
	}
	for _, s := range []string{"SET enable_external_access = false", "SET lock_configuration = true"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return internal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "ATTACH "+sqlString(path)+" AS "+catalogAlias+" (READ_ONLY)"); err != nil {
		if ctx.Err() != nil {
			return internal(err)
		}
		return st, append(problems, "cannot open "+FileName+": "+oneLine(err)), nil
	}
	more, err := listProblems(ctx, db, objectQuery)
	if err != nil {
		return internal(err)
	}
	problems = append(problems, more...)
	var cols sql.NullString
	if err := db.QueryRowContext(ctx, columnsQuery).Scan(&cols); err != nil {
		return internal(err)
	}
	if cols.String != wantColumns {
		problems = append(problems, fmt.Sprintf("tables are %q, want %q", cols.String, wantColumns))
	}
	if len(problems) > 0 {
		return st, problems, nil
	}
	return st, readCatalog(ctx, db, st), nil
}

// listProblems runs a query of one text column, one problem per row.
func listProblems(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, "unexpected "+p)
	}
	return out, rows.Err()
}

// readCatalog reads the two tables into st and checks their content.
func readCatalog(ctx context.Context, db *sql.DB, st *Status) []string {
	var problems []string
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*), any_value(format_version), any_value(built_at), any_value(commit_id) FROM cat.flameox_catalog").
		Scan(&n, nullInt{&st.FormatVersion}, nullTime{&st.BuiltAt}, nullString{&st.CommitID}); err != nil {
		return []string{"read flameox_catalog: " + oneLine(err)}
	}
	if n != 1 {
		problems = append(problems, fmt.Sprintf("flameox_catalog has %d rows, want 1", n))
	}
	if st.FormatVersion != FormatVersion {
		problems = append(problems, fmt.Sprintf("format_version %d, want %d", st.FormatVersion, FormatVersion))
	}
	if !digest.Valid(st.CommitID) {
		problems = append(problems, fmt.Sprintf("commit_id %q is not a commit id", st.CommitID))
	}
	rows, err := db.QueryContext(ctx, "SELECT table_name, schema_major, schema_minor, rows, files FROM cat.flameox_tables ORDER BY table_name")
	if err != nil {
		return append(problems, "read flameox_tables: "+oneLine(err))
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var t TableStatus
		if err := rows.Scan(&t.Table, &t.SchemaMajor, &t.SchemaMinor, &t.Rows, &t.Files); err != nil {
			return append(problems, "read flameox_tables: "+oneLine(err))
		}
		if want, ok := schema.Lookup(t.Table); !ok || seen[t.Table] || want.Major != t.SchemaMajor || want.Minor != t.SchemaMinor {
			problems = append(problems, fmt.Sprintf("flameox_tables row %s@%d.%d is unknown, repeated or of another schema version", t.Table, t.SchemaMajor, t.SchemaMinor))
		}
		seen[t.Table] = true
		st.Tables = append(st.Tables, t)
	}
	for _, t := range schema.Tables() {
		if !seen[t.Name] {
			problems = append(problems, "flameox_tables lacks "+t.Name)
		}
	}
	if err := rows.Err(); err != nil {
		problems = append(problems, "read flameox_tables: "+oneLine(err))
	}
	st.Valid = len(problems) == 0
	return problems
}

func oneLine(err error) string { return strings.SplitN(err.Error(), "\n", 2)[0] }

// Scanners of nullable columns into plain fields (NULL leaves the zero value).
type nullInt struct{ p *int }
type nullTime struct{ p *time.Time }
type nullString struct{ p *string }

func (n nullInt) Scan(v any) error {
	var x sql.NullInt64
	err := x.Scan(v)
	*n.p = int(x.Int64)
	return err
}

func (n nullTime) Scan(v any) error {
	var x sql.NullTime
	err := x.Scan(v)
	*n.p = x.Time.UTC()
	return err
}

func (n nullString) Scan(v any) error {
	var x sql.NullString
	err := x.Scan(v)
	*n.p = x.String
	return err
}
