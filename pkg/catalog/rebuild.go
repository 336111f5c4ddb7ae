package catalog

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
)

// FormatVersion of catalog.duckdb. A file of another version is invalid and
// is simply rebuilt.
const FormatVersion = 1

// FileName is the catalog file inside the workspace root.
const FileName = "catalog.duckdb"

// Path returns the catalog file of the workspace root.
func Path(root string) string { return filepath.Join(root, FileName) }

// catalogDDL creates the only two tables a catalog may hold.
const catalogDDL = `
CREATE TABLE flameox_catalog(format_version INTEGER NOT NULL, built_at TIMESTAMPTZ NOT NULL, commit_id VARCHAR NOT NULL);
CREATE TABLE flameox_tables(table_name VARCHAR NOT NULL, schema_major INTEGER NOT NULL, schema_minor INTEGER NOT NULL, rows BIGINT NOT NULL, files INTEGER NOT NULL);`

// writeDSN configures the instance that builds a catalog file: no
// extensions, no file access beyond the database itself.
const writeDSN = "?autoinstall_known_extensions=false&autoload_known_extensions=false&enable_external_access=false&threads=1&memory_limit=128MB"

// Rebuild writes catalog.duckdb for the current HEAD. It pins HEAD, builds
// and validates .catalog-<hex>.duckdb in the workspace root without any
// lock, fsyncs it, then takes the write lock and the catalog lock
// (exclusive, in that order) only to check that HEAD has not moved and to
// rename the file into place. If HEAD moved, it removes its file and fails
// with REVISION_CONFLICT (retryable).
func Rebuild(ctx context.Context, root string, locks *lock.Set) (*Status, error) {
	// Every derived file is made again: the anchors too, byte for byte
	// (readers only replace missing or empty ones).
	if err := corpus.EnsureAnchors(root); err != nil {
		return nil, err
	}
	snap, err := corpus.Pin(root)
	if err != nil {
		return nil, err
	}
	live, err := liveFiles(snap)
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(root, ".catalog-"+durable.RandomHex(8)+".duckdb")
	defer removeDB(tmp) // a no-op once renamed
	builtAt := time.Now().UTC().Truncate(time.Microsecond)
	if err := build(ctx, tmp, snap.Commit.CommitID, builtAt, live); err != nil {
		return nil, err
	}
	st, problems, err := inspect(ctx, tmp)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 || st.CommitID != snap.Commit.CommitID {
		return nil, fault.New(fault.InternalError, "the freshly built catalog does not validate: %v", problems)
	}
	if err := durable.SyncFile(tmp); err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "fsync %s", tmp)
	}
	beforeSwap(root)

	releaseWrite, err := locks.Lock(ctx, lock.Write, false)
	if err != nil {
		return nil, err
	}
	defer releaseWrite()
	releaseCatalog, err := locks.Lock(ctx, lock.Catalog, false)
	if err != nil {
		return nil, err
	}
	defer releaseCatalog()
	head, err := corpus.HeadID(root)
	if err != nil {
		return nil, err
	}
	if head != snap.Commit.CommitID {
		return nil, fault.New(fault.RevisionConflict, "the corpus moved from %s to %s while the catalog was being built", corpus.Short(snap.Commit.CommitID), corpus.Short(head)).
			Retry().Fix("Run the rebuild again.")
	}
	// A WAL left by a crashed writer of the old file must not be replayed
	// onto the new one.
	if err := os.Remove(Path(root) + ".wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "remove the stale catalog WAL")
	}
	if err := os.Rename(tmp, Path(root)); err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "install %s", FileName)
	}
	if err := durable.SyncDir(root); err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "fsync %s", root)
	}
	st.Path, st.Head, st.Fresh = Path(root), head, true
	return st, nil
}

// beforeSwap lets tests act between the lock-free build and the swap.
var beforeSwap = func(root string) {}

// build writes a new catalog file at path.
func build(ctx context.Context, path, commitID string, builtAt time.Time, live map[string]*tableFiles) error {
	db, err := sql.Open("duckdb", path+writeDSN)
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "create %s", path)
	}
	fail := func(err error, what string) error {
		db.Close()
		return fault.Wrap(fault.InternalError, err, "build the catalog: %s", what)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fail(err, "connect")
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET lock_configuration = true"); err != nil {
		return fail(err, "lock configuration")
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fail(err, "begin")
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, catalogDDL); err != nil {
		return fail(err, "create tables")
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO flameox_catalog VALUES ($1, $2, $3)", FormatVersion, builtAt, commitID); err != nil {
		return fail(err, "insert flameox_catalog")
	}
	for _, t := range schema.Tables() {
		tf := live[t.Name]
		if _, err := tx.ExecContext(ctx, "INSERT INTO flameox_tables VALUES ($1, $2, $3, $4, $5)",
			t.Name, t.Major, t.Minor, tf.Rows, len(tf.Paths)); err != nil {
			return fail(err, "insert flameox_tables")
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err, "commit")
	}
	if _, err := conn.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return fail(err, "checkpoint")
	}
	conn.Close()
	if err := db.Close(); err != nil {
		return fault.Wrap(fault.InternalError, err, "close %s", path)
	}
	return nil
}

// removeDB removes a database file and its WAL, ignoring absence.
func removeDB(path string) {
	os.Remove(path)
	os.Remove(path + ".wal")
}
