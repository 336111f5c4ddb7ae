package catalog

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/gofrs/flock"
)

func noTemps(t *testing.T, root string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(root, ".catalog-*"))
	if len(m) > 0 {
		t.Fatalf("temporary catalog files left: %v", m)
	}
}

func TestRebuildValidateStatus(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.publish("g1", []corpus.GenerationFile{
		f.file("g1", schema.Runs, 0, [][]any{runRow("a", 0, "pending"), runRow("a", 1, "registered")}),
		f.file("g1", schema.Runs, 1, [][]any{runRow("b", 0, "registered")}),
	}, nil)
	locks := lock.NewSet(f.root, 2*time.Second)

	st, err := ReadStatus(f.root)
	must(t, err)
	if st.Exists || st.Fresh {
		t.Fatalf("status without a catalog = %+v", st)
	}
	// Readers never need catalog.duckdb.
	if n := count(t, openHead(t, f.root, Options{}), "runs"); n != 3 {
		t.Fatalf("runs = %d", n)
	}

	// Rebuild holds no lock while building: the write lock is free then.
	beforeSwap = func(root string) {
		rel, err := lock.NewSet(root, 100*time.Millisecond).Lock(ctx, lock.Write, false)
		if err != nil {
			t.Errorf("write lock held during the build: %v", err)
			return
		}
		rel()
	}
	defer func() { beforeSwap = func(string) {} }()
	// An anchor damaged in place (same size, other bytes: readers only
	// replace missing or empty ones) is made again by the rebuild.
	anchor := corpus.AnchorPath(f.root, schema.Runs)
	good, err := os.ReadFile(anchor)
	must(t, err)
	must(t, os.WriteFile(anchor, bytes.Repeat([]byte{'x'}, len(good)), 0o644))
	built, err := Rebuild(ctx, f.root, locks)
	must(t, err)
	if got, err := os.ReadFile(anchor); err != nil || !bytes.Equal(got, good) {
		t.Fatalf("the damaged anchor was not rewritten (%v)", err)
	}
	noTemps(t, f.root)
	st, err = ReadStatus(f.root)
	must(t, err)
	if !st.Exists || !st.Valid || !st.Fresh || st.CommitID != *f.head || st.FormatVersion != FormatVersion || st.BuiltAt.IsZero() {
		t.Fatalf("status after rebuild = %+v", st)
	}
	if !st.BuiltAt.Equal(built.BuiltAt) || len(st.Tables) != len(schema.Tables()) {
		t.Fatalf("rebuild returned %+v, status %+v", built, st)
	}
	for _, ts := range st.Tables {
		if ts.Table == "runs" && (ts.Rows != 3 || ts.Files != 2) {
			t.Fatalf("runs registry = %+v", ts)
		}
	}
	res, err := Validate(ctx, f.root)
	must(t, err)
	if !res.Valid || len(res.Problems) != 0 {
		t.Fatalf("validate = %+v", res)
	}

	// HEAD moves: the catalog is stale.
	f.publish("g2", []corpus.GenerationFile{f.file("g2", schema.Runs, 0, [][]any{runRow("c", 0, "registered")})}, nil)
	st, err = ReadStatus(f.root)
	must(t, err)
	if st.Fresh || st.Head != *f.head {
		t.Fatalf("status after a publication = %+v", st)
	}

	// Rogue objects added with a separate writable connection.
	db, err := sql.Open("duckdb", Path(f.root))
	must(t, err)
	for _, s := range []string{
		"CREATE VIEW rogue_view AS SELECT 1 AS x",
		"CREATE MACRO rogue_macro(x) AS x + 1",
		"CREATE MACRO rogue_table_macro() AS TABLE SELECT 1 AS x",
		"CREATE TABLE rogue_table(x INTEGER)",
		"CREATE SEQUENCE rogue_seq",
		"CREATE SCHEMA rogue_schema",
		"CREATE TYPE rogue_type AS ENUM ('a')",
		"ALTER TABLE flameox_tables ADD COLUMN extra VARCHAR",
		"INSERT INTO flameox_catalog VALUES (1, now(), 'x')",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	must(t, db.Close())
	res, err = Validate(ctx, f.root)
	must(t, err)
	all := strings.Join(res.Problems, "\n")
	t.Logf("problems:\n%s", all)
	for _, want := range []string{"rogue_view", "rogue_macro", "rogue_table_macro", "rogue_table", "rogue_seq", "rogue_schema", "rogue_type", "extra"} {
		if !strings.Contains(all, want) {
			t.Errorf("Validate did not report %s", want)
		}
	}
	if res.Valid || res.Status.Fresh || res.Status.Valid {
		t.Fatalf("a rogue catalog validated: %+v", res.Status)
	}

	// Rebuild replaces it.
	_, err = Rebuild(ctx, f.root, locks)
	must(t, err)
	res, err = Validate(ctx, f.root)
	must(t, err)
	if !res.Valid || !res.Status.Fresh {
		t.Fatalf("validate after rebuild = %+v", res)
	}
}

func TestRebuildConflictAndLockTimeout(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	locks := lock.NewSet(f.root, 200*time.Millisecond)

	// HEAD moves between the build and the swap.
	beforeSwap = func(string) {
		f.publish("g1", []corpus.GenerationFile{f.file("g1", schema.Runs, 0, [][]any{runRow("a", 0, "registered")})}, nil)
	}
	defer func() { beforeSwap = func(string) {} }()
	_, err := Rebuild(ctx, f.root, locks)
	fe := wantCode(t, err, fault.RevisionConflict)
	if !fe.Retryable {
		t.Fatal("REVISION_CONFLICT is not retryable")
	}
	noTemps(t, f.root)
	if _, err := os.Stat(Path(f.root)); err == nil {
		t.Fatal("catalog.duckdb installed despite the conflict")
	}
	beforeSwap = func(string) {}

	// Another process holds write.lock.
	held := flock.New(filepath.Join(f.root, lock.Write.File()))
	ok, err := held.TryLock()
	if err != nil || !ok {
		t.Fatalf("take write.lock: %v", err)
	}
	_, err = Rebuild(ctx, f.root, locks)
	wantCode(t, err, fault.WriteLockTimeout)
	noTemps(t, f.root)
	must(t, held.Unlock())
	_, err = Rebuild(ctx, f.root, locks)
	must(t, err)
}
