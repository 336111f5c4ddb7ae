package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/run"
)

func refsOf(t testing.TB, records []byte) []RunRef {
	var refs []RunRef
	for _, line := range bytes.Split(bytes.TrimSpace(records), []byte("\n")) {
		var rec run.Record
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, RunRef{RunID: rec.RunID, Revision: rec.Revision})
	}
	return refs
}

func TestPublishRuns(t *testing.T) {
	ws, records := newWorkspace(t, 3)
	res, err := (&Publisher{WS: ws}).PublishRuns(context.Background(), refsOf(t, records))
	if err != nil {
		t.Fatal(err)
	}
	if res.Tables["runs"] != 3 || res.Tables["artifacts"] != 3 || res.Tables["environments"] != 1 || res.Tables["source_states"] != 1 {
		t.Fatalf("tables %v", res.Tables)
	}
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Commit.CommitID != res.CommitID || len(snap.Generations) != 1 {
		t.Fatalf("snapshot %+v", snap.Commit)
	}
	g := snap.Generations[0]
	if len(g.InputRunIDs) != 3 || g.Publisher != Name || g.InputCommitID != res.ParentID {
		t.Fatalf("manifest %+v", g)
	}
	for _, f := range g.Files {
		abs := filepath.Join(ws.Root, f.Path)
		b, _ := os.ReadFile(abs)
		if digest.Bytes(b) != f.SHA256 || int64(len(b)) != f.ByteLength {
			t.Fatalf("%s: recorded hash or size is wrong", f.Path)
		}
		pf, err := file.OpenParquetFile(abs, false)
		if err != nil {
			t.Fatal(err)
		}
		if pf.NumRows() != f.RowCount {
			t.Fatalf("%s: %d rows, manifest says %d", f.Path, pf.NumRows(), f.RowCount)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sch, err := fr.Schema()
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(sch); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		pf.Close()
	}
	// Staging is cleaned up.
	if ents, _ := os.ReadDir(ws.Path("staging")); len(ents) != 0 {
		t.Fatalf("staging left: %v", ents)
	}
}

func TestSupersedeMustBeInHead(t *testing.T) {
	ws, records := newWorkspace(t, 1)
	p := &Publisher{WS: ws}
	first, err := p.PublishRuns(context.Background(), refsOf(t, records))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := NewStage(ws.Root, Name, "test", p.now())
	defer st.Discard()
	rows := newRunRows(st, p.published)
	m, _ := (&run.Store{Root: ws.Root}).Revision(refsOf(t, records)[0].RunID, 1)
	rows.add(m)
	files, _ := st.Finish()
	c, err := Commit(context.Background(), ws, st, files, Meta{Publisher: Name, PublisherVersion: "test", Supersedes: []string{first.GenerationID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Commit.Generations) != 1 || c.Commit.Generations[0].GenerationID != st.ID {
		t.Fatalf("superseded generation still in inventory: %+v", c.Commit.Generations)
	}
	// Superseding it again fails: it is gone from HEAD.
	st2, _ := NewStage(ws.Root, Name, "test", p.now())
	defer st2.Discard()
	if _, err := Commit(context.Background(), ws, st2, nil, Meta{Publisher: Name, Supersedes: []string{first.GenerationID}}); !fault.Is(err, fault.RevisionConflict) {
		t.Fatalf("double supersede: %v", err)
	}
	snap, _ := corpus.Pin(ws.Root)
	if o := corpus.Orphans(snap); len(o) != 0 {
		t.Fatalf("a superseded generation is not an orphan: %v", o)
	}
}

func TestPlaceIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	dst := filepath.Join(dir, "out", "dst")
	os.WriteFile(src, []byte("same"), 0o600)
	if err := place(move{src, dst}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(src, []byte("same"), 0o600)
	if err := place(move{src, dst}); err != nil {
		t.Fatalf("identical retry: %v", err)
	}
	os.WriteFile(src, []byte("different"), 0o600)
	if err := place(move{src, dst}); !fault.Is(err, fault.ArtifactIntegrityFailed) {
		t.Fatalf("different content: %v", err)
	}
}

func TestCompact(t *testing.T) {
	ws, records := newWorkspace(t, 3)
	p := &Publisher{WS: ws}
	for _, ref := range refsOf(t, records) {
		if _, err := p.PublishRuns(context.Background(), []RunRef{ref}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := corpus.Pin(ws.Root)
	if len(before.Files["runs"]) != 3 {
		t.Fatalf("setup: %v", before.Files["runs"])
	}
	res, err := p.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after, _ := corpus.Pin(ws.Root)
	for table, files := range after.Files {
		if len(files) != 1 {
			t.Errorf("%s has %d files after compaction", table, len(files))
		}
		if after.Rows[table] != before.Rows[table] {
			t.Errorf("%s rows %d → %d", table, before.Rows[table], after.Rows[table])
		}
	}
	// The three runs share one environment: written once (the later
	// publications found its marker), and compaction keeps that row.
	if after.Rows["environments"] != 1 {
		t.Errorf("environments rows after compaction: %d, want 1", after.Rows["environments"])
	}
	if !res.Compacted || len(res.Superseded) != 3 || res.FilesAfter != 4 {
		t.Fatalf("result %+v", res)
	}
	if o := corpus.Orphans(after); len(o) != 0 {
		t.Fatalf("superseded generations reported as orphans: %v", o)
	}
	again, err := p.Compact(context.Background())
	if err != nil || again.Compacted {
		t.Fatalf("second compaction should be a no-op: %+v %v", again, err)
	}
}

// An environment or source state the corpus already holds is not written
// again; without its marker it is (a duplicate the *_current views
// collapse), so a lost marker costs a row, never a missing one.
func TestDimensionsWrittenOnce(t *testing.T) {
	ws, records := newWorkspace(t, 2)
	refs := refsOf(t, records)
	p := &Publisher{WS: ws}
	first, err := p.PublishRuns(context.Background(), refs[:1])
	if err != nil {
		t.Fatal(err)
	}
	if first.Tables["environments"] != 1 || first.Tables["source_states"] != 1 {
		t.Fatalf("first publication: %v", first.Tables)
	}
	second, err := p.PublishRuns(context.Background(), refs[1:])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := second.Tables["environments"]; ok {
		t.Fatalf("the environment was written again: %v", second.Tables)
	}
	if second.Tables["runs"] != 1 {
		t.Fatalf("second publication: %v", second.Tables)
	}
	if err := os.RemoveAll(filepath.Join(ws.Root, "corpus", "published")); err != nil {
		t.Fatal(err)
	}
	third, err := p.PublishRuns(context.Background(), refs[1:])
	if err != nil {
		t.Fatal(err)
	}
	if third.Tables["environments"] != 1 {
		t.Fatalf("without markers the environment must be written: %v", third.Tables)
	}
}

// With AutoCompact, the publication that leaves AutoCompactGenerations
// small generations merges them into one segment; every row stays.
func TestAutoCompact(t *testing.T) {
	n := AutoCompactGenerations + 3
	ws, records := newWorkspace(t, n)
	p := &Publisher{WS: ws, AutoCompact: true}
	var compacted int
	for i, ref := range refsOf(t, records) {
		res, err := p.PublishRuns(context.Background(), []RunRef{ref})
		if err != nil {
			t.Fatal(err)
		}
		if res.CompactionError != "" {
			t.Fatalf("publication %d: compaction failed: %s", i, res.CompactionError)
		}
		if res.Compaction != nil {
			compacted++
			if i != AutoCompactGenerations-1 || len(res.Compaction.Superseded) != AutoCompactGenerations {
				t.Fatalf("publication %d compacted %d generations", i, len(res.Compaction.Superseded))
			}
		}
	}
	if compacted != 1 {
		t.Fatalf("%d compactions, want 1", compacted)
	}
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Generations) != 1+n-AutoCompactGenerations {
		t.Fatalf("%d live generations, want %d", len(snap.Generations), 1+n-AutoCompactGenerations)
	}
	if snap.Rows["runs"] != int64(n) || snap.Rows["environments"] != 1 {
		t.Fatalf("rows after compaction: %v", snap.Rows)
	}
	if o := corpus.Orphans(snap); len(o) != 0 {
		t.Fatalf("orphans: %v", o)
	}
}

// Automatic compaction merges one size tier at a time: small publications
// with small publications, segments with segments, never a mix (which
// would copy the large segment again at every merge).
func TestAutoCompactTiers(t *testing.T) {
	defer func(n int, tiers []int64) { AutoCompactGenerations, AutoCompactTiers = n, tiers }(AutoCompactGenerations, AutoCompactTiers)
	AutoCompactGenerations, AutoCompactTiers = 3, []int64{5, 1000}
	ws, records := newWorkspace(t, 12)
	p := &Publisher{WS: ws, AutoCompact: true}
	published, segments := map[string]bool{}, map[string]bool{}
	var segmentMerges int
	for _, ref := range refsOf(t, records) {
		res, err := p.PublishRuns(context.Background(), []RunRef{ref})
		if err != nil || res.CompactionError != "" {
			t.Fatalf("publish: %v %s", err, res.CompactionError)
		}
		published[res.GenerationID] = true
		if c := res.Compaction; c != nil {
			var fromPub, fromSeg int
			for _, id := range c.Superseded {
				switch {
				case published[id]:
					fromPub++
				case segments[id]:
					fromSeg++
				}
			}
			if fromPub > 0 && fromSeg > 0 || fromPub+fromSeg != len(c.Superseded) {
				t.Fatalf("a merge mixed tiers: %d publications, %d segments of %v", fromPub, fromSeg, c.Superseded)
			}
			if fromSeg > 0 {
				segmentMerges++
			}
			segments[c.GenerationID] = true
		}
	}
	if segmentMerges == 0 {
		t.Fatal("segments were never merged with segments")
	}
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Rows["runs"] != 12 || len(snap.Generations) > 4 {
		t.Fatalf("%d live generations, rows %v", len(snap.Generations), snap.Rows)
	}
}

// TestStageSumsWhatItWrote checks that the sha256 and size Finish reports
// for each table are those of that table's file on disk, for a table of
// several row groups, one of a few rows, and one large enough to be
// written back as it is written and hashed while it is synced, closed and
// hashed side by side.
func TestStageSumsWhatItWrote(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "staging"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := NewStage(root, Name, "test", time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Discard()
	for _, tb := range []struct {
		table *schema.Table
		rows  int
	}{{schema.Artifacts, 3 * schema.DefaultRowGroupRows / 2}, {schema.SourceStates, 3}, {schema.Runs, 6000}} {
		w, err := st.Table(tb.table)
		if err != nil {
			t.Fatal(err)
		}
		noisy := 0
		if tb.table == schema.Runs { // incompressible: megabytes of file
			noisy = len(tb.table.Columns)
		}
		for i := range tb.rows {
			if err := w.AppendRow(stageRow(w.Table(), i, noisy)); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("files %+v", files)
	}
	if n := st.files[schema.Runs.Name].out.off; n < writeBackEvery {
		t.Fatalf("the large table is %d bytes, under %d: not written back as written", n, writeBackEvery)
	}
	for _, f := range files {
		sum, size, err := hashFile(filepath.Join(st.Dir, f.Table+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if f.SHA256 != sum || f.ByteLength != size {
			t.Errorf("%s: Finish reported %s, %d bytes; the file is %s, %d bytes", f.Table, f.SHA256, f.ByteLength, sum, size)
		}
	}
}
