package retention_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"crypto/sha256"
	"fmt"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/capture/capturetest"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/oplog"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/workspace"
)

var zero = time.Duration(0)

func keep(n int) *int { return &n }

// files writes n small distinct files and returns their paths.
func files(t *testing.T, tag string, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for i := range n {
		p := filepath.Join(dir, tag+strconv.Itoa(i)+".txt")
		if err := os.WriteFile(p, []byte("evidence "+tag+" "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// world is a workspace with one of everything gc must tell apart.
type world struct {
	ws *workspace.Workspace
	// garbage: what gc must list, by kind -> ids
	garbage map[string][]string
	// bytes expected per kind
	bytes map[string]int64
	// roots: workspace-relative paths that must survive apply
	roots []string
	// the analysis's commit (older than the kept history)
	analysisCommit string
	headBefore     string
}

func dirBytes(t *testing.T, p string) int64 {
	t.Helper()
	var n int64
	filepath.Walk(p, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func build(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	ws := capturetest.Workspace(t)
	w := &world{ws: ws, garbage: map[string][]string{}, bytes: map[string]int64{}}
	pub := publish.New(ws, publish.Options{})
	// Three publications, then a compaction that supersedes them.
	for i := range 3 {
		capturetest.Import(t, ws, "collector_metadata", files(t, "gen"+strconv.Itoa(i)+"-", 2)...)
	}
	early, err := corpus.Head(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	// An analysis made at the early commit that also names an artifact
	// no run registers: both are roots.
	pinnedArt := placeUnregistered(t, ws, "cited by an analysis")
	cres, err := pub.Compact(ctx)
	if err != nil || !cres.Compacted {
		t.Fatalf("compact: %+v %v", cres, err)
	}
	w.analysisCommit = early.CommitID
	if _, err := pub.PublishAnalyses(ctx, []publish.AnalysisRow{{AnalysisID: "an-1", Operation: "hotspots", OperationVersion: "1",
		CorpusCommitID: early.CommitID, ParametersJSON: "{}", ParametersDigest: "d", ResultDigest: "r", CoverageJSON: "{}",
		InputArtifactIDs: []string{pinnedArt}, StartedAt: time.Now(), CompletedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	w.roots = append(w.roots, artifact.ObjectRel(pinnedArt), corpus.CommitPath(ws.Root, early.CommitID)[len(ws.Root)+1:])
	for _, g := range early.Generations {
		w.roots = append(w.roots, g.Manifest)
	}
	// More publications so that commits fall out of a short history.
	for i := range 3 {
		capturetest.Import(t, ws, "collector_metadata", files(t, "late"+strconv.Itoa(i)+"-", 1)...)
	}
	// A second compaction: the first segment and the late generations
	// are superseded; only files no root needs are listed.
	if _, err := pub.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	head, _ := corpus.Pin(ws.Root)
	w.headBefore = head.Commit.CommitID
	for _, g := range head.Generations {
		w.roots = append(w.roots, corpus.GenerationRel(g.GenerationID))
		for _, f := range g.Files {
			w.roots = append(w.roots, f.Path)
		}
	}

	// Garbage: an unregistered artifact, orphaned staging, an orphaned
	// generation, an incomplete object directory.
	lost := placeUnregistered(t, ws, "nobody registers me")
	w.garbage[retention.KindArtifact] = []string{lost}
	w.bytes[retention.KindArtifact] = dirBytes(t, filepath.Join(ws.Root, artifact.ObjectRel(lost)))

	stg := filepath.Join(ws.Root, "staging", "import-deadbeef")
	os.MkdirAll(stg, 0o700)
	os.WriteFile(filepath.Join(stg, "payload"), bytes.Repeat([]byte("x"), 1000), 0o600)
	w.garbage[retention.KindStaging] = []string{"import-deadbeef"}
	w.bytes[retention.KindStaging] = 1000

	orphan := "0b1e3c6e-9a3e-4f2e-8f7c-000000000001"
	os.MkdirAll(filepath.Join(ws.Root, "generations", orphan), 0o700)
	os.WriteFile(filepath.Join(ws.Root, "generations", orphan, "manifest.json"), []byte(`{"partial":`), 0o400)
	od := filepath.Join(ws.Root, "evidence", "runs", "generation="+orphan)
	os.MkdirAll(od, 0o700)
	os.WriteFile(filepath.Join(od, "part-00000.parquet"), bytes.Repeat([]byte("p"), 500), 0o400)
	w.garbage[retention.KindOrphan] = []string{orphan}
	w.bytes[retention.KindOrphan] = 500 + int64(len(`{"partial":`))

	tmp := filepath.Join(ws.Root, "artifacts", "sha256", "ab", ".tmp-123")
	os.MkdirAll(tmp, 0o700)
	os.WriteFile(filepath.Join(tmp, "payload"), []byte("half"), 0o400)
	w.garbage[retention.KindTempObject] = []string{".tmp-123"}
	w.bytes[retention.KindTempObject] = 4
	return w
}

// placeUnregistered stores an object as an import would, without a run.
func placeUnregistered(t *testing.T, ws *workspace.Workspace, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.bin")
	os.WriteFile(p, []byte(content), 0o644)
	st := &artifact.Store{Root: ws.Root}
	staged, err := st.StageImport(context.Background(), p, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer staged.Discard()
	c, _, err := st.Place(staged, ".bin")
	if err != nil {
		t.Fatal(err)
	}
	return c.ArtifactID
}

func sum(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

func ids(p *retention.Plan, kind string) []string {
	var out []string
	for _, it := range p.Items {
		if it.Kind == kind {
			out = append(out, it.ID)
		}
	}
	slices.Sort(out)
	return out
}

func TestPlan(t *testing.T) {
	w := build(t)
	ctx := context.Background()
	p, err := retention.MakePlan(ctx, w.ws, retention.Options{MinAge: &zero, KeepCommits: keep(0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range p.Items {
		t.Logf("%s %s %d %v", it.Kind, it.ID, it.Bytes, it.Paths)
	}
	for kind, want := range w.garbage {
		slices.Sort(want)
		if got := ids(p, kind); !slices.Equal(got, want) {
			t.Errorf("%s: listed %v, want %v", kind, got, want)
		}
		if got := p.ByKind[kind].Bytes; got != w.bytes[kind] {
			t.Errorf("%s: %d bytes, want %d", kind, got, w.bytes[kind])
		}
	}
	// Superseded generations: the late ones and the first segment are
	// listed; the early ones are in the analysis's commit and are not.
	early, _ := corpus.Read(w.ws.Root, w.analysisCommit)
	sup := ids(p, retention.KindSuperseded)
	if len(sup) == 0 {
		t.Fatal("no superseded generation listed")
	}
	for _, g := range early.Generations {
		if slices.Contains(sup, g.GenerationID) {
			t.Errorf("generation %s of the analysis's commit listed", g.GenerationID)
		}
	}
	if len(ids(p, retention.KindCommit)) == 0 {
		t.Error("no commit beyond the history listed")
	}
	var total int64
	for _, it := range p.Items {
		total += it.Bytes
		for _, path := range it.Paths {
			for _, r := range w.roots {
				if path == r || strings.HasPrefix(r, path+"/") {
					t.Errorf("%s item %s lists root %s", it.Kind, it.ID, r)
				}
			}
		}
	}
	if total != p.TotalBytes || p.TotalBytes == 0 {
		t.Errorf("total %d, items sum %d", p.TotalBytes, total)
	}
	// A superseded item's bytes are its files' bytes on disk.
	for _, it := range p.Items {
		if it.Kind != retention.KindSuperseded {
			continue
		}
		var n int64
		for _, path := range it.Paths {
			n += dirBytes(t, filepath.Join(w.ws.Root, path))
		}
		if n != it.Bytes {
			t.Errorf("superseded %s: %d bytes listed, %d on disk", it.ID, it.Bytes, n)
		}
	}
	if p.Roots.ReferencedBy["analysis"] == 0 || p.Roots.HeadCommitID != w.headBefore {
		t.Errorf("roots %+v", p.Roots)
	}

	// The default policy (a long history, a day's minimum age) lists
	// nothing this young but the staging whose owner... has none: none.
	def, err := retention.MakePlan(ctx, w.ws, retention.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Items) != 0 {
		t.Errorf("the default policy listed %+v", def.Items)
	}
}

func TestApplyRestorePurge(t *testing.T) {
	w := build(t)
	ctx := context.Background()
	opt := retention.Options{MinAge: &zero, KeepCommits: keep(0)}
	plan, err := retention.MakePlan(ctx, w.ws, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Snapshot every file the plan names.
	before := map[string][]byte{}
	for _, it := range plan.Items {
		for _, p := range it.Paths {
			filepath.Walk(filepath.Join(w.ws.Root, p), func(path string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					b, _ := os.ReadFile(path)
					before[path] = b
				}
				return nil
			})
		}
	}
	if _, err := retention.Apply(ctx, w.ws, opt, "sha256:"+strings.Repeat("0", 64)); fault.As(err).Code != fault.RevisionConflict {
		t.Fatalf("a stale plan digest: %v", err)
	}
	res, err := retention.Apply(ctx, w.ws, opt, plan.PlanDigest)
	if err != nil {
		t.Fatal(err)
	}
	if res.TrashID == "" || res.MovedItems != len(plan.Items) || res.MovedBytes != plan.TotalBytes {
		t.Fatalf("applied %+v, plan %d items %d bytes", res, len(plan.Items), plan.TotalBytes)
	}
	for path := range before {
		if _, err := os.Lstat(path); err == nil {
			t.Errorf("%s still in place", path)
		}
	}
	checkIntact(t, w)
	commits := ids(plan, retention.KindCommit)
	for _, c := range commits {
		if !retention.CommitCollected(w.ws.Root, c) {
			t.Errorf("collected commit %s has no marker", c)
		}
	}
	if head, _ := corpus.HeadID(w.ws.Root); retention.CommitCollected(w.ws.Root, head) {
		t.Error("HEAD is marked collected")
	}
	again, err := retention.MakePlan(ctx, w.ws, opt)
	if err != nil || len(again.Items) != 0 {
		t.Fatalf("after apply the plan lists %+v (%v)", again.Items, err)
	}

	// Restore: byte-identical files at their paths.
	if _, err := retention.Restore(ctx, w.ws, res.TrashID); err != nil {
		t.Fatal(err)
	}
	for path, b := range before {
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s not restored exactly: %v", path, err)
		}
	}
	for _, c := range commits {
		if retention.CommitCollected(w.ws.Root, c) {
			t.Errorf("restored commit %s is still marked collected", c)
		}
	}
	if _, err := retention.Restore(ctx, w.ws, res.TrashID); err == nil {
		t.Error("restored twice")
	}
	if _, err := retention.Restore(ctx, w.ws, "../../etc"); fault.As(err).Code != fault.InvalidArguments {
		t.Errorf("a path as trash id: %v", err)
	}
	checkIntact(t, w)

	// Purge: only trash older than the bound goes.
	res2, err := retention.Apply(ctx, w.ws, opt, "")
	if err != nil || res2.TrashID == "" {
		t.Fatal(res2, err)
	}
	list, _ := retention.List(w.ws)
	if len(list.Trash) != 2 {
		t.Fatalf("trash %+v", list)
	}
	for _, tt := range []struct {
		name      string
		olderThan time.Duration
		now       time.Time
		purged    int
	}{
		{"younger than the bound stays", time.Hour, time.Now(), 0},
		{"older than the bound goes", time.Hour, time.Now().Add(2 * time.Hour), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr, err := retention.Purge(ctx, w.ws, tt.olderThan, tt.now)
			if err != nil || len(pr.Purged) != tt.purged {
				t.Fatalf("%+v %v", pr, err)
			}
		})
	}
	if ents, _ := os.ReadDir(filepath.Join(w.ws.Root, "trash")); len(ents) != 0 {
		t.Errorf("trash left: %v", ents)
	}
	checkIntact(t, w)

	es, err := oplog.Read(w.ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, e := range es {
		ops[e.Operation+":"+e.Result]++
	}
	for _, want := range []string{"publish.commit:ok", "gc.apply:ok", "gc.apply:error", "gc.restore:ok", "gc.restore:error", "gc.purge:ok"} {
		if ops[want] == 0 {
			t.Errorf("no %s in the operation log: %v", want, ops)
		}
	}
}

// checkIntact: HEAD reads, every file of it and every root is there, the
// analysis's commit still opens with its whole inventory, and superseded
// generations still resolve for provenance.
func checkIntact(t *testing.T, w *world) {
	t.Helper()
	snap, err := corpus.Pin(w.ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Commit.CommitID == "" {
		t.Fatal("no head")
	}
	for _, r := range w.roots {
		if _, err := os.Lstat(filepath.Join(w.ws.Root, r)); err != nil {
			t.Errorf("root %s lost: %v", r, err)
		}
	}
	if _, err := corpus.PinCommit(w.ws.Root, w.analysisCommit); err != nil {
		t.Errorf("the analysis's commit: %v", err)
	}
	early, _ := corpus.Read(w.ws.Root, w.analysisCommit)
	for _, g := range early.Generations {
		if found, _, err := corpus.FindGeneration(snap, g.GenerationID); err != nil || found == nil {
			t.Errorf("generation %s no longer resolves: %v", g.GenerationID, err)
		}
	}
}

func TestRestoreRefusesOverwrite(t *testing.T) {
	w := build(t)
	ctx := context.Background()
	opt := retention.Options{MinAge: &zero, KeepCommits: keep(0)}
	res, err := retention.Apply(ctx, w.ws, opt, "")
	if err != nil {
		t.Fatal(err)
	}
	// The same bytes are imported again: the object exists again.
	lost := w.garbage[retention.KindArtifact][0]
	placeUnregistered(t, w.ws, "nobody registers me")
	if _, err := retention.Restore(ctx, w.ws, res.TrashID); fault.As(err).Code != fault.RevisionConflict {
		t.Fatalf("restore over %s: %v", lost, err)
	}
	// Nothing moved: every other item is still in trash.
	list, _ := retention.List(w.ws)
	if len(list.Trash) != 1 || list.Trash[0].State != retention.StateRecoverable {
		t.Fatalf("trash %+v", list)
	}
}

// TestStorageLimitAtImport: an import beyond storage.max_workspace_bytes
// fails with STORAGE_FULL naming the key, stores no object and publishes
// nothing; an identical payload (deduplicated) adds nothing and passes.
func TestStorageLimitAtImport(t *testing.T) {
	ws, _ := capturetest.Published(t, "collector_metadata", files(t, "first", 1)...)
	headBefore, _ := corpus.HeadID(ws.Root)
	ws.Config.Storage.MaxWorkspaceBytes = artifact.StoredBytes(ws.Root) + 10
	svc := capture.New(ws, capture.Options{Identity: &capture.IdentityCollector{Runner: broker.Default}})
	big := filepath.Join(t.TempDir(), "big.txt")
	os.WriteFile(big, bytes.Repeat([]byte("y"), 100), 0o644)
	_, err := svc.Import(context.Background(), capture.ImportRequest{Path: big, Kind: "collector_metadata"})
	if fe := fault.As(err); fe.Code != fault.StorageFull || fe.Details["limit_key"] != "storage.max_workspace_bytes" || len(fe.Remediation) == 0 {
		t.Fatalf("import over the limit: %v", err)
	}
	if _, _, err := (&artifact.Store{Root: ws.Root}).Stat("sha256:" + fmt.Sprintf("%x", sha256.Sum256(bytes.Repeat([]byte("y"), 100)))); fault.As(err).Code != fault.NotFound {
		t.Fatalf("the object was stored: %v", err)
	}
	if h, _ := corpus.HeadID(ws.Root); h != headBefore {
		t.Fatal("HEAD moved")
	}
	// Runs take space too (the failed run's revisions, the next run's
	// first one); under a bound with room for them a small import passes.
	ws.Config.Storage.MaxWorkspaceBytes = artifact.StoredBytes(ws.Root) + 64<<10
	small := filepath.Join(t.TempDir(), "small.txt")
	os.WriteFile(small, []byte("ok"), 0o644)
	if _, err := svc.Import(context.Background(), capture.ImportRequest{Path: small, Kind: "collector_metadata"}); err != nil {
		t.Fatalf("an import under the limit: %v", err)
	}
}

func TestStorageLimit(t *testing.T) {
	ws := capturetest.Workspace(t)
	st := &artifact.Store{Root: ws.Root, MaxWorkspaceBytes: 1}
	p := filepath.Join(t.TempDir(), "x.bin")
	os.WriteFile(p, []byte("more than one byte"), 0o644)
	staged, err := st.StageImport(context.Background(), p, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer staged.Discard()
	_, _, err = st.Place(staged, ".bin")
	if fe := fault.As(err); fe.Code != fault.StorageFull || fe.Details["limit_key"] != "storage.max_workspace_bytes" {
		t.Fatalf("over the workspace limit: %v", err)
	}
}
