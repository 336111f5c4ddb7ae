package catalog

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// fixture is a hand-built workspace following the commit protocol's layout:
// evidence/<table>/generation=<id>/part-<n>.parquet, a generation manifest
// per publication, an immutable commit listing every generation, and HEAD.
type fixture struct {
	tb   testing.TB
	root string
	now  time.Time
	head *string
	refs []corpus.GenerationRef
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), ".diagnostics")
	for _, d := range []string{"corpus/commits", "generations", "evidence", "staging"} {
		must(tb, os.MkdirAll(filepath.Join(root, d), 0o700))
	}
	f := &fixture{tb: tb, root: root, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	f.publish("", nil, nil)
	return f
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// row renders one row of t from vals (by column name); other columns get
// NULL when nullable, else a typed default.
func row(t *schema.Table, vals map[string]any) []any {
	out := make([]any, 0, len(t.Columns)-schema.NumCommon)
	for _, c := range t.Columns[schema.NumCommon:] {
		v, ok := vals[c.Name]
		switch {
		case ok:
		case c.Nullable:
			v = nil
		default:
			switch c.TypeName() {
			case "string":
				v = "x"
			case "int32", "int64", "uint64":
				v = 0
			case "timestamp[us, UTC]":
				v = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			case "float64":
				v = 0.0
			case "bool":
				v = false
			case "list<string>":
				v = []string{}
			case "map<string,string>":
				v = map[string]string{}
			default:
				panic("no default for " + c.TypeName())
			}
		}
		out = append(out, v)
	}
	return out
}

// file writes rows of t as part-<n> of generation gen.
func (f *fixture) file(gen string, t *schema.Table, n int, rows [][]any) corpus.GenerationFile {
	rel := fmt.Sprintf("evidence/%s/generation=%s/part-%05d.parquet", t.Name, gen, n)
	var buf bytes.Buffer
	w, err := schema.NewWriter(t, &buf, schema.Options{Common: schema.Common{
		GenerationID: gen, PublishedAt: f.now, ExtractorName: "test", ExtractorVersion: "0"}})
	must(f.tb, err)
	for _, r := range rows {
		must(f.tb, w.AppendRow(r))
	}
	count, err := w.Close()
	must(f.tb, err)
	abs := filepath.Join(f.root, filepath.FromSlash(rel))
	must(f.tb, os.MkdirAll(filepath.Dir(abs), 0o700))
	must(f.tb, os.WriteFile(abs, buf.Bytes(), 0o644))
	return corpus.GenerationFile{Path: rel, Table: t.Name, SchemaMajor: t.Major, SchemaMinor: t.Minor,
		SHA256: digest.Bytes(buf.Bytes()), ByteLength: int64(buf.Len()), RowCount: count}
}

// publish writes generation gen (if files is not nil) and a new commit
// listing it with every earlier generation, then moves HEAD.
func (f *fixture) publish(gen string, files []corpus.GenerationFile, supersedes []string) string {
	f.tb.Helper()
	f.now = f.now.Add(time.Minute)
	if gen != "" {
		g := corpus.Generation{SchemaVersion: corpus.GenerationVersion, GenerationID: gen, CreatedAt: f.now,
			InputRunIDs: []string{}, InputArtifactIDs: []string{}, Publisher: "test", PublisherVersion: "0",
			Files: files, Supersedes: append([]string{}, supersedes...)}
		if f.head != nil {
			g.InputCommitID = *f.head
		}
		data, err := durable.MarshalIndent(g)
		must(f.tb, err)
		rel := corpus.GenerationRel(gen)
		must(f.tb, os.MkdirAll(filepath.Join(f.root, filepath.Dir(rel)), 0o700))
		must(f.tb, os.WriteFile(filepath.Join(f.root, rel), data, 0o644))
		f.refs = append(f.refs, corpus.GenerationRef{GenerationID: gen, Manifest: rel, ManifestSHA256: digest.Bytes(data)})
	}
	c, err := corpus.NewCommit(f.head, f.refs, f.now)
	must(f.tb, err)
	must(f.tb, corpus.WriteCommit(f.root, c))
	must(f.tb, corpus.SetHead(f.root, c.CommitID))
	id := c.CommitID
	f.head = &id
	return id
}

// runRow is a runs row.
func runRow(id string, rev int, capture string) []any {
	return row(schema.Runs, map[string]any{"run_id": id, "revision": rev, "run_type": "execution",
		"capture_status": capture, "execution_status": "succeeded", "validation_status": "not_requested",
		"workload_name": "scan", "wall_time_ns": int64(rev+1) * 1000})
}

func artifactRow(reg, run string) []any {
	return row(schema.Artifacts, map[string]any{"registration_id": reg, "run_id": run,
		"artifact_id": digest.Bytes([]byte(reg)), "byte_length": uint64(10)})
}

func openHead(tb testing.TB, root string, opts Options) *Reader {
	tb.Helper()
	r, err := OpenHead(context.Background(), root, opts)
	must(tb, err)
	tb.Cleanup(func() { r.Close() })
	return r
}

var countQuery = Query{Name: "test.count", Version: "1"}

// count returns the rows of a SELECT count(*) over from.
func count(tb testing.TB, r *Reader, from string) int64 {
	tb.Helper()
	var n int64
	q := countQuery
	q.SQL = "SELECT count(*) FROM " + from
	must(tb, r.Scan(context.Background(), q, nil, func(rows *sql.Rows) error {
		rows.Next()
		return rows.Scan(&n)
	}))
	return n
}

// raw runs SQL on the locked instance and drains it: test-only, the
// production API never accepts SQL from users.
func raw(r *Reader, s string) error {
	rows, err := r.db.QueryContext(context.Background(), s)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

func wantCode(tb testing.TB, err error, code fault.Code) *fault.Error {
	tb.Helper()
	if !fault.Is(err, code) {
		tb.Fatalf("got %v, want %s", err, code)
	}
	return fault.As(err)
}
