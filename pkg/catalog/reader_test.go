package catalog

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

func TestEmptyWorkspaceViewsAreTyped(t *testing.T) {
	f := newFixture(t)
	r := openHead(t, f.root, Options{})
	for _, tb := range schema.Tables() {
		var names []string
		q := Query{Name: "test.describe", Version: "1", SQL: "DESCRIBE " + ident(tb.Name)}
		must(t, r.Scan(context.Background(), q, nil, func(rows *sql.Rows) error {
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					return err
				}
				names = append(names, vals[0].(string))
			}
			return nil
		}))
		var want []string
		for _, c := range tb.Columns {
			want = append(want, c.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s columns = %v, want %v", tb.Name, names, want)
		}
		if n := count(t, r, ident(tb.Name)); n != 0 {
			t.Errorf("%s has %d rows in an empty workspace", tb.Name, n)
		}
	}
	for _, v := range CurrentViews() {
		if n := count(t, r, v.Name); n != 0 {
			t.Errorf("%s has %d rows", v.Name, n)
		}
	}
	if _, err := os.Lstat(corpus.AnchorPath(f.root, schema.Findings)); err != nil {
		t.Fatalf("anchor not written: %v", err)
	}
	must(t, corpus.EnsureAnchors(f.root)) // idempotent and valid
}

func TestViewsCurrentPinningAndSupersede(t *testing.T) {
	f := newFixture(t)
	c1 := f.publish("g1", []corpus.GenerationFile{
		f.file("g1", schema.Runs, 0, [][]any{runRow("a", 0, "pending"), runRow("a", 1, "registered"), runRow("b", 0, "running")}),
		f.file("g1", schema.Artifacts, 0, [][]any{artifactRow("r1", "a"), artifactRow("r2", "a")}),
	}, nil)
	r1 := openHead(t, f.root, Options{})
	if r1.Commit() != c1 {
		t.Fatalf("pinned %s, want %s", r1.Commit(), c1)
	}
	if n := count(t, r1, "runs"); n != 3 {
		t.Fatalf("runs = %d, want 3", n)
	}
	if n := count(t, r1, "runs_current"); n != 2 {
		t.Fatalf("runs_current = %d, want 2", n)
	}
	if n := count(t, r1, "runs_current WHERE run_id = 'a' AND revision = 1 AND capture_status = 'registered'"); n != 1 {
		t.Fatalf("runs_current does not hold the latest revision of a")
	}
	if n := count(t, r1, "artifacts_current"); n != 2 || r1.Rows("artifacts") != 2 {
		t.Fatalf("artifacts_current = %d", n)
	}

	// A later generation re-publishes b's revision 1 and artifact r2.
	f.publish("g2", []corpus.GenerationFile{
		f.file("g2", schema.Runs, 0, [][]any{runRow("b", 1, "registered"), runRow("c", 0, "registered")}),
		f.file("g2", schema.Artifacts, 0, [][]any{artifactRow("r2", "a")}),
	}, nil)
	if n := count(t, r1, "runs"); n != 3 {
		t.Fatalf("the reader pinned on C1 sees %d runs after C2, want 3", n)
	}
	r2 := openHead(t, f.root, Options{})
	if n := count(t, r2, "runs_current WHERE capture_status = 'registered'"); n != 3 {
		t.Fatalf("C2 registered runs_current = %d, want 3", n)
	}
	if n := count(t, r2, "artifacts"); n != 3 {
		t.Fatalf("artifacts = %d, want 3", n)
	}
	if n := count(t, r2, "artifacts_current"); n != 2 {
		t.Fatalf("artifacts_current = %d, want 2", n)
	}

	// Compaction: g3 supersedes g1 and g2 with the same rows in one file.
	f.publish("g3", []corpus.GenerationFile{f.file("g3", schema.Runs, 0, [][]any{
		runRow("a", 0, "pending"), runRow("a", 1, "registered"), runRow("b", 0, "running"),
		runRow("b", 1, "registered"), runRow("c", 0, "registered")})}, []string{"g1", "g2"})
	r3 := openHead(t, f.root, Options{})
	if n := count(t, r3, "runs"); n != 5 {
		t.Fatalf("after compaction runs = %d, want 5 (superseded files excluded)", n)
	}
	if n := count(t, r3, "artifacts"); n != 0 {
		t.Fatalf("artifacts of superseded generations still visible: %d", n)
	}
	if n := count(t, r2, "runs"); n != 5 {
		t.Fatalf("C2 reader changed: %d", n)
	}
}

// A reader limited to some tables defines their views, and a *_current
// view only when it is listed (bringing its table); others do not exist.
func TestOpenTablesLimitsViews(t *testing.T) {
	f := newFixture(t)
	f.publish("g1", []corpus.GenerationFile{
		f.file("g1", schema.Runs, 0, [][]any{runRow("a", 0, "pending"), runRow("a", 1, "registered")}),
		f.file("g1", schema.Artifacts, 0, [][]any{artifactRow("r1", "a")}),
	}, nil)
	r := openHead(t, f.root, Options{Tables: []string{"runs_current", "artifacts"}})
	if n := count(t, r, "runs_current"); n != 1 {
		t.Errorf("runs_current = %d, want 1", n)
	}
	if n := count(t, r, "runs"); n != 2 {
		t.Errorf("runs = %d, want 2", n)
	}
	if n := count(t, r, "artifacts"); n != 1 {
		t.Errorf("artifacts = %d, want 1", n)
	}
	for _, absent := range []string{"artifacts_current", "measurements"} {
		q := countQuery
		q.SQL = "SELECT count(*) FROM " + absent
		if err := r.Scan(context.Background(), q, nil, func(*sql.Rows) error { return nil }); err == nil {
			t.Errorf("%s is defined", absent)
		}
	}
}

func TestOpenRefusesSymlinkAndSize(t *testing.T) {
	f := newFixture(t)
	gf := f.file("g1", schema.Runs, 0, [][]any{runRow("a", 0, "registered")})
	f.publish("g1", []corpus.GenerationFile{gf}, nil)
	snap, err := corpus.Pin(f.root)
	must(t, err)
	abs := filepath.Join(f.root, gf.Path)
	moved := filepath.Join(f.root, "staging", "real.parquet")
	must(t, os.Rename(abs, moved))
	must(t, os.Symlink(moved, abs))
	_, err = Open(context.Background(), snap, Options{})
	wantCode(t, err, fault.ArtifactIntegrityFailed)
	_, err = corpus.Pin(f.root)
	wantCode(t, err, fault.ArtifactIntegrityFailed)

	must(t, os.Remove(abs))
	data, err := os.ReadFile(moved)
	must(t, err)
	must(t, os.WriteFile(abs, append(data, 0), 0o644))
	_, err = OpenHead(context.Background(), f.root, Options{})
	wantCode(t, err, fault.ArtifactIntegrityFailed)
}

func TestTimeoutAndCancel(t *testing.T) {
	f := newFixture(t)
	f.publish("g1", []corpus.GenerationFile{f.file("g1", schema.Runs, 0, [][]any{runRow("a", 0, "registered")})}, nil)
	// The query below would run for hours: only the budget or a cancel can
	// end it. The test asserts which error ends it and that the reader is
	// still usable, never how long that took (a loaded machine may take
	// longer to interrupt DuckDB; the test binary's -timeout catches a hang).
	r := openHead(t, f.root, Options{QueryTimeout: 200 * time.Millisecond})
	slow := Query{Name: "test.slow", Version: "3", SQL: "SELECT sum(a.range * b.range) FROM range(100000000) a, range(100000000) b"}
	err := r.Scan(context.Background(), slow, nil, func(rows *sql.Rows) error {
		for rows.Next() {
		}
		return nil
	})
	fe := wantCode(t, err, fault.QueryBudgetExceeded)
	if fe.Retryable || fe.Details["query"] != "test.slow" || fe.Details["query_version"] != "3" {
		t.Fatalf("error = %+v", fe)
	}
	if n := count(t, r, "runs"); n != 1 {
		t.Fatalf("reader unusable after timeout: %d", n)
	}

	// Cancellation is tested on a reader whose budget cannot run out first,
	// so a late timer on a loaded machine cannot turn it into a timeout.
	rc := openHead(t, f.root, Options{QueryTimeout: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantCode(t, rc.Scan(ctx, slow, nil, func(*sql.Rows) error { return nil }), fault.ProcessCancelled)
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	wantCode(t, rc.Scan(ctx, slow, nil, func(*sql.Rows) error { return nil }), fault.ProcessCancelled)
	if n := count(t, rc, "runs_current"); n != 1 {
		t.Fatalf("reader unusable after cancel: %d", n)
	}

	bad := Query{Name: "test.bad", Version: "1", SQL: "SELECT no_such_column FROM runs"}
	fe = wantCode(t, r.Scan(context.Background(), bad, nil, func(*sql.Rows) error { return nil }), fault.InternalError)
	if fe.Details["query"] != "test.bad" {
		t.Fatalf("error not tagged: %+v", fe)
	}
	limit, fetch := r.RowCap(5000)
	if limit != DefaultMaxRows || fetch != DefaultMaxRows+1 {
		t.Fatalf("RowCap = %d, %d", limit, fetch)
	}
}

func TestMemoryBudgetAndSpill(t *testing.T) {
	f := newFixture(t)
	big := Query{Name: "test.big", Version: "1", SQL: "SELECT count(*) FROM (SELECT s, count(*) FROM (SELECT range::VARCHAR || repeat('x', 60) AS s FROM range(3000000)) GROUP BY s)"}
	scan := func(r *Reader) error {
		return r.Scan(context.Background(), big, nil, func(rows *sql.Rows) error {
			for rows.Next() {
			}
			return nil
		})
	}
	r := openHead(t, f.root, Options{MemoryLimitBytes: 64 << 20, NoSpill: true})
	fe := wantCode(t, scan(r), fault.QueryBudgetExceeded)
	if fe.Details["budget"] != "memory" {
		t.Fatalf("error = %+v", fe)
	}
	r = openHead(t, f.root, Options{MemoryLimitBytes: 64 << 20})
	must(t, scan(r))
	dir := r.tempDir
	if !strings.HasPrefix(dir, filepath.Join(f.root, "staging", "duckdb-temp")) {
		t.Fatalf("spill directory %s", dir)
	}
	must(t, r.Close())
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("spill directory %s left after Close", dir)
	}
}
