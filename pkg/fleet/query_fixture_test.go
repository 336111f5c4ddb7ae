package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
)

// rows are one corpus's evidence, by table, each row by column name
// (other columns get NULL, or a typed default when not nullable).
type rows map[*schema.Table][]map[string]any

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// row renders vals in t's column order.
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

// parquet writes rows of t with schema.Writer.
func parquet(tb testing.TB, t *schema.Table, gen string, rs []map[string]any) ([]byte, int64) {
	tb.Helper()
	var buf bytes.Buffer
	w, err := schema.NewWriter(t, &buf, schema.Options{Common: schema.Common{
		GenerationID: gen, PublishedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), ExtractorName: "test", ExtractorVersion: "0"}})
	must(tb, err)
	for _, r := range rs {
		must(tb, w.AppendRow(row(t, r)))
	}
	n, err := w.Close()
	must(tb, err)
	return buf.Bytes(), n
}

// exported publishes data in a new workspace and exports it into dir
// with the real `flameox export corpus` (Export).
func exported(tb testing.TB, dir string, data rows) *workspace.Workspace {
	tb.Helper()
	ws := newWorkspace(tb, data)
	exportTo(tb, dir, ws)
	return ws
}

func exportTo(tb testing.TB, dir string, ws *workspace.Workspace) {
	tb.Helper()
	if _, err := Export(context.Background(), ws, ExportRequest{To: dir}, time.Now()); err != nil {
		tb.Fatal(err)
	}
}

// newWorkspace makes a workspace whose HEAD holds data, published as one
// generation in the corpus's layout.
func newWorkspace(tb testing.TB, data rows) *workspace.Workspace {
	tb.Helper()
	res, err := workspace.Init(context.Background(), tb.TempDir(), time.Now(), publish.FirstCommit)
	must(tb, err)
	ws := res.Workspace
	head, err := corpus.Head(ws.Root)
	must(tb, err)
	gen := "gen-0000000000000001"
	var gfiles []corpus.GenerationFile
	for t, rs := range data {
		b, n := parquet(tb, t, gen, rs)
		rel := fmt.Sprintf("evidence/%s/generation=%s/part-00000.parquet", t.Name, gen)
		must(tb, os.MkdirAll(filepath.Join(ws.Root, filepath.Dir(rel)), 0o700))
		must(tb, os.WriteFile(filepath.Join(ws.Root, rel), b, 0o644))
		gfiles = append(gfiles, corpus.GenerationFile{Path: rel, Table: t.Name, SchemaMajor: t.Major, SchemaMinor: t.Minor,
			SHA256: digest.Bytes(b), ByteLength: int64(len(b)), RowCount: n})
	}
	now := time.Now().UTC()
	g := corpus.Generation{SchemaVersion: corpus.GenerationVersion, GenerationID: gen, CreatedAt: now, InputCommitID: head.CommitID,
		InputRunIDs: []string{}, InputArtifactIDs: []string{}, Publisher: "test", PublisherVersion: "0", Files: gfiles, Supersedes: []string{}}
	gb, err := durable.MarshalIndent(g)
	must(tb, err)
	rel := corpus.GenerationRel(gen)
	must(tb, os.MkdirAll(filepath.Join(ws.Root, filepath.Dir(rel)), 0o700))
	must(tb, os.WriteFile(filepath.Join(ws.Root, rel), gb, 0o644))
	refs := append(append([]corpus.GenerationRef{}, head.Generations...), corpus.GenerationRef{GenerationID: gen, Manifest: rel, ManifestSHA256: digest.Bytes(gb)})
	parent := head.CommitID
	c, err := corpus.NewCommit(&parent, refs, now)
	must(tb, err)
	must(tb, corpus.WriteCommit(ws.Root, c))
	must(tb, corpus.SetHead(ws.Root, c.CommitID))
	return ws
}

// bench is a corpus builder: runs of one workload in environments at
// source states (HEAD commits), each with gobench values of one
// benchmark.
type bench struct {
	data rows
	n    int
	at   time.Time
}

func newBench() *bench {
	return &bench{data: rows{}, at: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
}

// env adds an environment.
func (b *bench) env(id, os, cpu string) {
	b.data[schema.Environments] = append(b.data[schema.Environments], map[string]any{
		"environment_id": id, "identity_quality": "exact", "os": os, "arch": "amd64", "cpu_model": cpu, "cpu_count": int32(4),
		"fields_json": "{}", "missing_fields": []string{}, "observed_at": b.at})
}

// state adds a clean source state at a git commit.
func (b *bench) state(id, head string) {
	b.data[schema.SourceStates] = append(b.data[schema.SourceStates], map[string]any{
		"source_state_id": id, "identity_quality": "clean", "head_commit": head, "fields_json": "{}", "missing_fields": []string{}})
}

// run adds one run and its values of metric gobench.<unit> for
// benchmark; status is its execution status.
func (b *bench) run(env, state, workload, status, benchmark, unit string, values ...float64) string {
	b.n++
	b.at = b.at.Add(time.Minute)
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", b.n)
	capture := "registered"
	if status != "succeeded" {
		capture = "failed"
	}
	b.data[schema.Runs] = append(b.data[schema.Runs], map[string]any{
		"run_id": id, "revision": int32(1), "run_type": "execution", "created_at": b.at, "execution_status": status,
		"capture_status": capture, "validation_status": "not_requested", "environment_id": env, "source_state_id": state,
		"workload_name": workload, "manifest_path": "runs/" + id + "/manifest.json"})
	for i, v := range values {
		v := v
		b.data[schema.Measurements] = append(b.data[schema.Measurements], map[string]any{
			"measurement_id": fmt.Sprintf("m-%s-%d-%s", id, i, unit), "run_id": id, "name": "gobench." + unit, "value_float": v,
			"unit": unit, "aggregation": "mean", "scope": "benchmark", "subject": benchmark, "worker_id": "example.com/scan",
			"value_index": int32(i), "is_warmup": false, "evidence_level": "observed"})
	}
	return id
}
