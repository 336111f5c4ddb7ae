package query

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
)

type fixture struct {
	ws   *workspace.Workspace
	svc  *capture.Service
	refs []publish.RunRef
}

func newFixture(t *testing.T) *fixture {
	res, err := workspace.Init(context.Background(), t.TempDir(), time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{ws: res.Workspace, svc: &capture.Service{WS: res.Workspace, Identity: &capture.IdentityCollector{Runner: broker.Default}}}
}

// importAndPublish imports n files (each its own run) and publishes them as
// one generation.
func (f *fixture) importAndPublish(t *testing.T, n int, kind string) *publish.Result {
	t.Helper()
	var refs []publish.RunRef
	for i := 0; i < n; i++ {
		p := filepath.Join(t.TempDir(), "f"+strconv.Itoa(i)+".txt")
		os.WriteFile(p, []byte(time.Now().String()+strconv.Itoa(i)), 0o644)
		imp, err := f.svc.Import(context.Background(), capture.ImportRequest{Path: p, Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, publish.RunRef{RunID: imp.Run.RunID, Revision: imp.Run.Revision})
	}
	f.refs = append(f.refs, refs...)
	res, err := (&publish.Publisher{WS: f.ws}).PublishRuns(context.Background(), refs)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRunsPaging(t *testing.T) {
	f := newFixture(t)
	f.importAndPublish(t, 5, "benchmark_samples")
	ctx := context.Background()
	seen := map[string]bool{}
	req := ListRunsRequest{Limit: 2}
	pages := 0
	for {
		res, err := ListRuns(ctx, f.ws, req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if res.Total != 5 {
			t.Fatalf("total %d", res.Total)
		}
		for _, r := range res.Runs {
			if seen[r.RunID] {
				t.Fatalf("run %s returned twice", r.RunID)
			}
			seen[r.RunID] = true
			if r.ArtifactCount != 1 {
				t.Fatalf("artifact count %d", r.ArtifactCount)
			}
		}
		if !res.Truncated {
			break
		}
		req.Cursor = res.Cursor
	}
	if len(seen) != 5 || pages != 3 {
		t.Fatalf("%d runs over %d pages", len(seen), pages)
	}
	// Filters: nothing is an execution run.
	res, err := ListRuns(ctx, f.ws, ListRunsRequest{RunType: "execution"})
	if err != nil || res.Total != 0 || len(res.Runs) != 0 {
		t.Fatalf("filtered list: %+v %v", res, err)
	}
	// A cursor survives only on its own commit.
	first, _ := ListRuns(ctx, f.ws, ListRunsRequest{Limit: 2})
	f.importAndPublish(t, 1, "benchmark_samples")
	_, err = ListRuns(ctx, f.ws, ListRunsRequest{Limit: 2, Cursor: first.Cursor})
	if fe := fault.As(err); fe.Code != fault.StaleCursor || fe.ExitCode() != 7 {
		t.Fatalf("stale cursor: %v", err)
	}
	// Another filter set cannot reuse it either.
	_, err = ListRuns(ctx, f.ws, ListRunsRequest{Limit: 2, Cursor: first.Cursor, RunType: "import"})
	if !fault.Is(err, fault.StaleCursor) {
		t.Fatalf("cursor with other filters: %v", err)
	}
	if _, err := ListRuns(ctx, f.ws, ListRunsRequest{Cursor: "garbage"}); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("garbage cursor: %v", err)
	}
}

// everything runs every curated query and returns their JSON.
func everything(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	put := func(name string, v any, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(v)
		out[name] = string(b)
	}
	runs, err := ListRuns(ctx, f.ws, ListRunsRequest{})
	put("runs", runs, err)
	arts, err := ListArtifacts(ctx, f.ws, ListArtifactsRequest{})
	put("artifacts", arts, err)
	m, err := QueryMeasurements(ctx, f.ws, MeasurementsRequest{IncludeWarmups: true})
	put("measurements", m, err)
	d, err := ShowRun(ctx, f.ws, runs.Runs[0].RunID)
	put("run", d, err)
	a, err := ShowArtifact(ctx, f.ws, arts.Artifacts[0].ArtifactID)
	put("artifact", a, err)
	e, err := GetEvidence(ctx, f.ws, "generation", mustGen(t, f))
	put("evidence.generation", e, err)
	e, err = GetEvidence(ctx, f.ws, "environment", d.Run.Environment.EnvironmentID)
	put("evidence.environment", e, err)
	return out
}

func mustGen(t *testing.T, f *fixture) string {
	s, err := Open(context.Background(), f.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.R.Snapshot().Generations[0].GenerationID
}

// TestRebuildPreservesResults is acceptance 1: deleting catalog.duckdb and
// rebuilding it changes no curated query result at the same commit.
func TestRebuildPreservesResults(t *testing.T) {
	f := newFixture(t)
	f.importAndPublish(t, 3, "sample_profile")
	f.importAndPublish(t, 2, "benchmark_samples")
	ctx := context.Background()
	if _, err := catalog.Rebuild(ctx, f.ws.Root, f.ws.Locks()); err != nil {
		t.Fatal(err)
	}
	before := everything(t, f)
	if err := os.Remove(catalog.Path(f.ws.Root)); err != nil {
		t.Fatal(err)
	}
	without := everything(t, f)
	if _, err := catalog.Rebuild(ctx, f.ws.Root, f.ws.Locks()); err != nil {
		t.Fatal(err)
	}
	after := everything(t, f)
	if !reflect.DeepEqual(before, after) || !reflect.DeepEqual(before, without) {
		for k := range before {
			if before[k] != after[k] {
				t.Errorf("%s differs after rebuild:\n%s\n%s", k, before[k], after[k])
			}
		}
		t.Fatal("results changed")
	}
	st, err := catalog.ReadStatus(f.ws.Root)
	if err != nil || !st.Fresh {
		t.Fatalf("catalog status %+v %v", st, err)
	}
}

// TestPinnedReaderAndWriteLock: a session pinned to commit C keeps seeing C
// while C+1 and C+2 publish, and queries run while the write lock is held
// elsewhere (read-only work never takes it).
func TestPinnedReaderAndWriteLock(t *testing.T) {
	f := newFixture(t)
	f.importAndPublish(t, 2, "benchmark_samples")
	ctx := context.Background()
	s, err := Open(ctx, f.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pinned := s.Commit()
	f.importAndPublish(t, 1, "benchmark_samples")
	f.importAndPublish(t, 1, "benchmark_samples")
	n, err := count(ctx, s, qRunsCount, ListRunsRequest{}.filterArgs())
	if err != nil || n != 2 || s.Commit() != pinned {
		t.Fatalf("pinned session saw %d runs at %s: %v", n, s.Commit(), err)
	}
	// Hold the write lock (a separate lock set: a separate flock, like another process).
	release, err := lock.NewSet(f.ws.Root, time.Second).Lock(ctx, lock.Write, false)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := ListRuns(qctx, f.ws, ListRunsRequest{})
	if err != nil || res.Total != 4 {
		t.Fatalf("query under a held write lock: %+v %v", res, err)
	}
}

// TestRepublishNeverDoubleCounts publishes the same run revisions twice (a
// re-extraction): runs, artifacts and identities still count once.
func TestRepublishNeverDoubleCounts(t *testing.T) {
	f := newFixture(t)
	f.importAndPublish(t, 3, "benchmark_samples")
	if _, err := (&publish.Publisher{WS: f.ws}).PublishRuns(context.Background(), f.refs); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	runs, err := ListRuns(ctx, f.ws, ListRunsRequest{})
	if err != nil || runs.Total != 3 {
		t.Fatalf("runs after republish: %d %v", runs.Total, err)
	}
	arts, err := ListArtifacts(ctx, f.ws, ListArtifactsRequest{})
	if err != nil || arts.Total != 3 || arts.Artifacts[0].Registrations != 1 {
		t.Fatalf("artifacts after republish: %+v %v", arts, err)
	}
}

// TestReextractionNeverDoubleCounts extracts a benchmark file twice: the
// second generation repeats the measurement ids, and the measurements list
// keeps the latest row of each.
func TestReextractionNeverDoubleCounts(t *testing.T) {
	f := newFixture(t)
	p := filepath.Join(t.TempDir(), "bench.txt")
	os.WriteFile(p, []byte("goos: linux\npkg: example.com/x\nBenchmarkA-2 \t 100\t 12.5 ns/op\nBenchmarkA-2 \t 100\t 13.5 ns/op\nPASS\n"), 0o644)
	imp, err := f.svc.Import(context.Background(), capture.ImportRequest{Path: p, Kind: "benchmark_samples"})
	if err != nil {
		t.Fatal(err)
	}
	refs := []publish.RunRef{{RunID: imp.Run.RunID, Revision: imp.Run.Revision}}
	pub := &publish.Publisher{WS: f.ws, Extractors: all.Registry().Extractors()}
	for range 2 {
		if _, err := pub.PublishRuns(context.Background(), refs); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := QueryMeasurements(context.Background(), f.ws, MeasurementsRequest{NamePrefix: "gobench."})
	if err != nil || ms.Total != 2 || len(ms.Measurements) != 2 {
		t.Fatalf("measurements after re-extraction: %+v %v", ms, err)
	}
	if ms.Measurements[0].MeasurementID == ms.Measurements[1].MeasurementID {
		t.Fatal("one measurement listed twice")
	}
}

func TestEvidenceGet(t *testing.T) {
	f := newFixture(t)
	f.importAndPublish(t, 1, "benchmark_samples")
	ctx := context.Background()
	runs, _ := ListRuns(ctx, f.ws, ListRunsRequest{})
	id := runs.Runs[0].RunID
	if e, err := GetEvidence(ctx, f.ws, "run", id); err != nil || e.Run == nil || !e.Run.Published {
		t.Fatalf("run evidence: %+v %v", e, err)
	}
	if _, err := GetEvidence(ctx, f.ws, "analysis", "nope"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("missing analysis: %v", err)
	}
	if _, err := GetEvidence(ctx, f.ws, "../etc", "x"); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("bad type: %v", err)
	}
	if _, err := ShowRun(ctx, f.ws, "not-a-run"); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("bad id: %v", err)
	}
}

// A generation that compaction superseded still resolves (rows keep its
// id), through chains of compactions, with its manifest verified.
func TestSupersededGenerationResolves(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	first := f.importAndPublish(t, 1, "benchmark_samples")
	f.importAndPublish(t, 1, "benchmark_samples")
	p := &publish.Publisher{WS: f.ws}
	c1, err := p.Compact(ctx)
	if err != nil || !c1.Compacted {
		t.Fatalf("first compaction: %+v %v", c1, err)
	}
	f.importAndPublish(t, 1, "benchmark_samples")
	c2, err := p.Compact(ctx)
	if err != nil || !c2.Compacted {
		t.Fatalf("second compaction: %+v %v", c2, err)
	}
	e, err := GetEvidence(ctx, f.ws, "generation", first.GenerationID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Generation == nil || e.Generation.GenerationID != first.GenerationID || e.SupersededBy != c1.GenerationID {
		t.Fatalf("superseded generation: %+v (superseded by %q, want %q)", e.Generation, e.SupersededBy, c1.GenerationID)
	}
	e, err = GetEvidence(ctx, f.ws, "generation", c2.GenerationID)
	if err != nil || e.SupersededBy != "" {
		t.Fatalf("live generation: %+v %v", e, err)
	}
	if _, err := GetEvidence(ctx, f.ws, "generation", "00000000-0000-0000-0000-000000000000"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("unknown generation: %v", err)
	}
}
