package status

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/lease"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
)

// profile is a real pprof CPU profile from the CLI suites' fixtures.
var profile = filepath.Join("..", "tool", "flameox", "testdata", "artifacts", "google-pprof__sample.cpu.pb.gz")

func TestInitIsIdempotent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, ws, err := Init(ctx, dir, time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Created) == 0 {
		t.Errorf("first init created nothing")
	}
	st := first.Status
	if !digest.Valid(st.Head.CommitID) || st.Head.Generations != 0 || st.Runs.Total != 0 || st.Artifacts.Objects != 0 {
		t.Errorf("fresh status %+v", st)
	}
	if st.Workspace.Root != ws.Root || st.Workspace.WorkspaceID == "" {
		t.Errorf("workspace %+v, root %s", st.Workspace, ws.Root)
	}
	if len(st.Warnings) != 0 || st.Catalog.Exists {
		t.Errorf("fresh workspace warns %v, catalog %+v", st.Warnings, st.Catalog)
	}
	again, _, err := Init(ctx, dir, time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	if again.Created == nil || len(again.Created) != 0 {
		t.Errorf("second init created %#v, want []", again.Created)
	}
	if again.Status.Head.CommitID != st.Head.CommitID || again.Status.Workspace.WorkspaceID != st.Workspace.WorkspaceID {
		t.Errorf("second init moved HEAD or the identity: %+v vs %+v", again.Status.Head, st.Head)
	}
}

// TestCollectCountsPublishedAndUnpublished imports two artifacts, publishes
// one run, and checks that status counts both runs and objects, the second
// as unpublished, and that PublishedRevisions names only the first.
func TestCollectCountsPublishedAndUnpublished(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	svc := &capture.Service{WS: ws, Now: time.Now, Identity: &capture.IdentityCollector{Runner: broker.Default}, Adapters: all.Registry()}
	abs, err := filepath.Abs(profile)
	if err != nil {
		t.Fatal(err)
	}
	published, err := svc.Import(ctx, capture.ImportRequest{Path: abs, Kind: "sample_profile", RequestedBy: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(other, []byte("not published\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unpublished, err := svc.Import(ctx, capture.ImportRequest{Path: other, RequestedBy: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	pub := &publish.Publisher{WS: ws, Now: time.Now, Extractors: all.Registry().Extractors()}
	if _, err := pub.PublishRuns(ctx, []publish.RunRef{{RunID: published.Run.RunID, Revision: published.Run.Revision}}); err != nil {
		t.Fatal(err)
	}

	st, err := Collect(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs.Total != 2 || st.Runs.Unpublished != 1 || st.Runs.ByType["import"] != 2 {
		t.Errorf("runs %+v, want 2 imports, 1 unpublished", st.Runs)
	}
	if st.Head.Generations != 1 || st.Head.Rows["runs"] != 1 || len(st.Head.Orphans) != 0 {
		t.Errorf("head %+v, want one generation with one run", st.Head)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]KindStats{
		"sample_profile": {Objects: 1, Bytes: fi.Size()},
		"unpublished":    {Objects: 1, Bytes: int64(len("not published\n"))},
	}
	if st.Artifacts.Objects != 2 || !reflect.DeepEqual(st.Artifacts.ByKind, want) {
		t.Errorf("artifacts %+v, want by kind %+v", st.Artifacts, want)
	}
	revs, err := PublishedRevisions(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(revs, map[string]int{published.Run.RunID: published.Run.Revision}) {
		t.Errorf("PublishedRevisions = %v, want only %s (not %s)", revs, published.Run.RunID, unpublished.Run.RunID)
	}
}

// TestAbandonedStaging: a staging entry is abandoned when its owner is
// provably gone, unreadable, or missing for longer than a write takes; a
// live owner's entry and DuckDB's temporary directory never are.
func TestAbandonedStaging(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	self, err := lease.Self()
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	gone := self
	gone.StartTime++
	owner := func(o lease.Owner) string {
		b, _ := json.Marshal(o)
		return string(b)
	}
	old := time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name, owner string // owner "" writes no owner file
		old         bool
		why         string // "" when not abandoned
	}{
		{"gone", owner(gone), false, "owner process gone"},
		{"live", owner(self), true, ""},
		{"unreadable", "{not json", false, "owner record unreadable"},
		{"young-ownerless", "", false, ""},
		{"old-ownerless", "", true, "no owner recorded"},
		{"duckdb-temp", "", true, ""},
	} {
		dir := ws.Path("staging", tc.name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if tc.owner != "" {
			if err := os.WriteFile(filepath.Join(dir, artifact.StagingOwner), []byte(tc.owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if tc.old {
			if err := os.Chtimes(dir, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(ws.Path("staging", "stray-file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Collect(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range st.AbandonedStaging {
		got = append(got, e.Path+": "+e.Owner)
	}
	want := []string{
		"staging/gone: owner process gone",
		"staging/old-ownerless: no owner recorded",
		"staging/unreadable: owner record unreadable",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("abandoned staging %q\nwant %q", got, want)
	}
	for _, w := range want {
		path, _, _ := strings.Cut(w, ":")
		if !slices.ContainsFunc(st.Warnings, func(s string) bool {
			return strings.Contains(s, path) && strings.Contains(s, "flameox recover")
		}) {
			t.Errorf("no warning names %s: %q", path, st.Warnings)
		}
	}
}

// TestCollectWarnsAboutOrphans: a publication that crashed before HEAD
// moved leaves files status names, and readers never see.
func TestCollectWarnsAboutOrphans(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	for _, d := range []string{"generations/crashed", "evidence/frames/generation=crashed"} {
		if err := os.MkdirAll(ws.Path(filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st, err := Collect(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"evidence/frames/generation=crashed", "generations/crashed"}; !reflect.DeepEqual(st.Head.Orphans, want) {
		t.Errorf("orphans %q, want %q", st.Head.Orphans, want)
	}
	if !slices.ContainsFunc(st.Warnings, func(s string) bool { return strings.HasPrefix(s, "2 orphaned publication file(s)") }) {
		t.Errorf("warnings %q lack the orphan count", st.Warnings)
	}
}

// newWorkspace initializes a workspace the way `flameox init` does.
func newWorkspace(t *testing.T) *workspace.Workspace {
	t.Helper()
	_, ws, err := Init(context.Background(), t.TempDir(), time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
