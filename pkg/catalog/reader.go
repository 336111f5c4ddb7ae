package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
)

// Defaults of Options.
const (
	DefaultMemoryLimitBytes = 512 << 20
	DefaultThreads          = 2
	DefaultQueryTimeout     = 30 * time.Second
	DefaultMaxRows          = 1000
	DefaultMaxTextBytes     = 64 << 10
	DefaultMaxSpillBytes    = 4 << 30
)

// Options bound a Reader. Zero values take the defaults.
type Options struct {
	MemoryLimitBytes int64         // DuckDB memory_limit; default 512 MiB
	Threads          int           // DuckDB threads; default 2
	QueryTimeout     time.Duration // per Scan; default 30 s
	MaxRows          int           // largest row limit a caller may ask for; default 1000
	MaxTextBytes     int           // cap of one text cell (see Clip); default 64 KiB
	MaxSpillBytes    int64         // DuckDB max_temp_directory_size; default 4 GiB
	// NoSpill disables spilling to <root>/staging/duckdb-temp: a query past
	// the memory limit then fails with QUERY_BUDGET_EXCEEDED.
	NoSpill bool
	// Tables, when set, limits the views (and the allowed files) to these
	// tables; a *_current view (runs_current, ...) is defined only when
	// listed, and brings its table. Binding a view reads its files' footers
	// and plans its query, so a reader that needs four tables opens faster.
	Tables []string
}

func (o Options) withDefaults() Options {
	if o.MemoryLimitBytes <= 0 {
		o.MemoryLimitBytes = DefaultMemoryLimitBytes
	}
	if o.Threads <= 0 {
		o.Threads = DefaultThreads
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.MaxTextBytes <= 0 {
		o.MaxTextBytes = DefaultMaxTextBytes
	}
	if o.MaxSpillBytes <= 0 {
		o.MaxSpillBytes = DefaultMaxSpillBytes
	}
	return o
}

// Reader answers curated queries over one pinned commit. It is safe for
// concurrent use; queries run one at a time on its single connection.
type Reader struct {
	db      *sql.DB
	snap    *corpus.Snapshot
	opts    Options
	tempDir string
	rows    map[string]int64
	// writeDir, when set, is the one directory the instance may write
	// (OpenExport): allowed_directories holds it and nothing else.
	writeDir string
}

// OpenHead pins HEAD of the workspace root and opens a Reader on it.
func OpenHead(ctx context.Context, root string, opts Options) (*Reader, error) {
	snap, err := corpus.Pin(root)
	if err != nil {
		return nil, err
	}
	return Open(ctx, snap, opts)
}

// Open starts a locked-down in-memory DuckDB instance that can read exactly
// snap's live files and the anchors, and defines one view per table plus
// the *_current views. Missing anchors are written first.
func Open(ctx context.Context, snap *corpus.Snapshot, opts Options) (*Reader, error) {
	return open(ctx, snap, opts, "")
}

func open(ctx context.Context, snap *corpus.Snapshot, opts Options, writeDir string) (*Reader, error) {
	opts = opts.withDefaults()
	live, err := liveFiles(snap)
	if err != nil {
		return nil, err
	}
	anchors, err := corpus.Anchors(snap.Root)
	if err != nil {
		return nil, err
	}
	r := &Reader{snap: snap, opts: opts, rows: map[string]int64{}, writeDir: writeDir}
	var views map[string]bool // current views to define; nil: all
	if len(opts.Tables) > 0 {
		keep := map[string]bool{}
		views = map[string]bool{}
		for _, t := range opts.Tables {
			keep[t] = true
			for _, v := range currentViews {
				if v.Name == t {
					keep[v.Table], views[t] = true, true
				}
			}
		}
		for name := range live {
			if !keep[name] {
				delete(live, name)
			}
		}
	}
	var allowed []string
	for _, name := range sortedTables(live) {
		anchor, err := filepath.Abs(anchors[name])
		if err != nil {
			return nil, fault.Wrap(fault.WorkspaceInvalid, err, "resolve anchor path")
		}
		if err := regularFile(anchor, anchor); err != nil {
			return nil, err
		}
		live[name].Paths = append([]string{anchor}, live[name].Paths...)
		allowed = append(allowed, live[name].Paths...)
		r.rows[name] = live[name].Rows
	}
	if !opts.NoSpill {
		parent := filepath.Join(snap.Root, "staging", "duckdb-temp")
		if err := os.MkdirAll(parent, 0o700); errors.Is(err, syscall.EROFS) {
			// A workspace on a read-only mount (an archive) stays
			// readable: its queries run without spilling, as NoSpill.
		} else if err != nil {
			return nil, fault.Wrap(fault.WorkspaceInvalid, err, "create %s", parent)
		} else if r.tempDir, err = filepath.Abs(filepath.Join(parent, "r-"+durable.RandomHex(8))); err != nil {
			return nil, fault.Wrap(fault.WorkspaceInvalid, err, "resolve temp directory")
		}
	}
	conn, err := duckdb.NewConnector(r.config(), nil)
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "start DuckDB")
	}
	r.db = sql.OpenDB(conn)
	r.db.SetMaxOpenConns(1)
	r.db.SetMaxIdleConns(1)
	if err := r.setup(ctx, allowed, live, views); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// lockdown is the SET sequence, run once per instance. Settings are global
// to the instance, so every later pool connection inherits them; they must
// not go in a per-connection init function, because the second connection
// would fail on the locked configuration.
func (r *Reader) lockdown(allowed []string) []string {
	var dirs []string
	if r.writeDir != "" {
		dirs = []string{"SET allowed_directories = " + sqlList([]string{r.writeDir})}
	}
	return append(dirs,
		"SET allowed_paths = "+sqlList(allowed),
		"SET TimeZone = 'UTC'",
		"SET enable_external_access = false", // after the allow-list
		"SET lock_configuration = true",      // last
	)
}

// config is the DSN of the instance: the settings that take a plain
// value are given when DuckDB creates it (each SET is a statement with
// its own transaction, which a fresh instance pays for one by one); the
// allow-list, the time zone and the locks follow as statements.
func (r *Reader) config() string {
	v := url.Values{}
	v.Set("autoinstall_known_extensions", "false")
	v.Set("autoload_known_extensions", "false")
	v.Set("allow_community_extensions", "false")
	v.Set("allow_persistent_secrets", "false")
	v.Set("temp_directory", r.tempDir)
	v.Set("memory_limit", fmt.Sprintf("%dB", r.opts.MemoryLimitBytes))
	v.Set("max_temp_directory_size", fmt.Sprintf("%dB", r.opts.MaxSpillBytes))
	v.Set("threads", fmt.Sprint(r.opts.Threads))
	if r.writeDir != "" {
		// An export's files need no row order (engines read them as sets),
		// and keeping it makes DuckDB's Parquet writer wait on order.
		v.Set("preserve_insertion_order", "false")
	}
	return "?" + v.Encode()
}

func (r *Reader) setup(ctx context.Context, allowed []string, live map[string]*tableFiles, views map[string]bool) error {
	c, err := r.db.Conn(ctx)
	if err != nil {
		return r.queryErr(ctx, ctx, Query{Name: "open", Version: "1"}, err)
	}
	defer c.Close()
	for _, s := range r.lockdown(allowed) {
		if _, err := c.ExecContext(ctx, s); err != nil {
			return r.queryErr(ctx, ctx, Query{Name: "lockdown", Version: "1"}, fmt.Errorf("%s: %w", strings.SplitN(s, " =", 2)[0], err))
		}
	}
	var b strings.Builder
	for _, name := range sortedTables(live) {
		// Files of an older minor lack the later columns: matching columns
		// by name (the anchor, first, has them all) reads those as null.
		// Binding by name reads every file's schema, so only such a table
		// pays for it.
		fmt.Fprintf(&b, "CREATE VIEW %s AS SELECT * FROM read_parquet(%s, union_by_name=%t, hive_partitioning=false, filename=false);\n",
			ident(name), sqlList(live[name].Paths), live[name].Older)
	}
	for _, v := range currentViews {
		if live[v.Table] == nil || (views != nil && !views[v.Name]) {
			continue
		}
		// Only keys with several rows need the window; at a million runs
		// windowing every row cost most of a cohort query. Keys are never
		// null (the schemas require them), so NOT IN is exact.
		dups := fmt.Sprintf("SELECT %[2]s FROM %[1]s GROUP BY %[2]s HAVING count(*) > 1", ident(v.Table), v.Key)
		fmt.Fprintf(&b, "CREATE VIEW %s AS SELECT * FROM %s WHERE %s NOT IN (%s) UNION ALL "+
			"SELECT * FROM (SELECT * FROM %[2]s WHERE %[3]s IN (%[4]s)) QUALIFY row_number() OVER (PARTITION BY %[3]s ORDER BY %[5]s) = 1;\n",
			ident(v.Name), ident(v.Table), v.Key, dups, v.Order)
	}
	if _, err := c.ExecContext(ctx, b.String()); err != nil {
		return r.queryErr(ctx, ctx, Query{Name: "views", Version: "1"}, err)
	}
	return nil
}

// ident quotes a SQL identifier.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// CurrentView is a view that keeps one row per identity of a table.
type CurrentView struct {
	Name, Table string
	Key         string // PARTITION BY
	Order       string // ORDER BY; the first row wins
}

// currentViews are the views of tables with revisions or repeated
// identities. Read those tables through them; read append-only fact tables
// directly.
var currentViews = []CurrentView{
	{"runs_current", "runs", "run_id", "revision DESC, published_at DESC, evidence_generation_id DESC"},
	{"artifacts_current", "artifacts", "registration_id", "published_at DESC, evidence_generation_id DESC"},
	{"environments_current", "environments", "environment_id", "published_at DESC, evidence_generation_id DESC"},
	{"source_states_current", "source_states", "source_state_id", "published_at DESC, evidence_generation_id DESC"},
	// Measurement ids are digests of what they measure, so re-extracting a
	// run yields the same ids: the latest generation's row wins.
	{"measurements_current", "measurements", "measurement_id", "published_at DESC, evidence_generation_id DESC"},
}

// CurrentViews lists the *_current views.
func CurrentViews() []CurrentView { return append([]CurrentView(nil), currentViews...) }

// Commit returns the commit id the Reader is pinned to.
func (r *Reader) Commit() string { return r.snap.Commit.CommitID }

// Snapshot returns the pinned snapshot.
func (r *Reader) Snapshot() *corpus.Snapshot { return r.snap }

// Rows returns the live row count of a table from the manifests (no scan).
func (r *Reader) Rows(table string) int64 { return r.rows[table] }

// Options returns the Reader's effective options.
func (r *Reader) Options() Options { return r.opts }

// Close stops the DuckDB instance and removes its spill directory.
//
// When nothing was spilled, the instance is torn down in the background:
// stopping its threads and freeing its buffers and catalog costs time
// a command would otherwise add to every answer (docs/performance.md), and nothing waits
// on it (the instance is in memory; the files it read are immutable). A
// process that exits meanwhile just skips it. A reader that spilled is
// closed synchronously (closeWait), so its spill directory is removed.
func (r *Reader) Close() error {
	if r.db == nil {
		return nil
	}
	if r.tempDir != "" {
		if _, err := os.Lstat(r.tempDir); err == nil {
			return r.closeWait()
		}
	}
	db := r.db
	r.db, r.tempDir = nil, ""
	go db.Close()
	return nil
}

// closeWait stops the instance and removes its spill directory before it
// returns.
func (r *Reader) closeWait() error {
	var err error
	if r.db != nil {
		err = r.db.Close()
		r.db = nil
	}
	if r.tempDir != "" {
		os.RemoveAll(r.tempDir)
		r.tempDir = ""
	}
	return err
}
