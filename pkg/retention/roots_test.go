package retention_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/capture/capturetest"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/workspace"
)

// TestRegisteredObjectsAreRoots: an object registered only by a run the
// corpus does not hold yet (imported, not published), or only by a run
// directory recover quarantined, is never listed; the same object with
// no run is.
func TestRegisteredObjectsAreRoots(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		setup  func(t *testing.T, ws *workspace.Workspace) string // returns the artifact id
		listed bool
	}{
		{"unpublished import", func(t *testing.T, ws *workspace.Workspace) string {
			svc := capture.New(ws, capture.Options{Identity: &capture.IdentityCollector{Runner: broker.Default}})
			imp, err := svc.Import(ctx, capture.ImportRequest{Path: files(t, "unpub", 1)[0], Kind: "collector_metadata"})
			if err != nil {
				t.Fatal(err)
			}
			return imp.Registration.ArtifactID
		}, false},
		{"quarantined run", func(t *testing.T, ws *workspace.Workspace) string {
			svc := capture.New(ws, capture.Options{Identity: &capture.IdentityCollector{Runner: broker.Default}})
			imp, err := svc.Import(ctx, capture.ImportRequest{Path: files(t, "quar", 1)[0], Kind: "collector_metadata"})
			if err != nil {
				t.Fatal(err)
			}
			q := filepath.Join(ws.Root, "quarantine", "runs")
			os.MkdirAll(q, 0o700)
			if err := os.Rename(filepath.Join(ws.Root, "runs", imp.Run.RunID), filepath.Join(q, imp.Run.RunID)); err != nil {
				t.Fatal(err)
			}
			return imp.Registration.ArtifactID
		}, false},
		{"no run", func(t *testing.T, ws *workspace.Workspace) string {
			return placeUnregistered(t, ws, "orphan object")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, _ := capturetest.Published(t, "collector_metadata", files(t, "base", 1)...)
			id := tt.setup(t, ws)
			p, err := retention.MakePlan(ctx, ws, retention.Options{MinAge: &zero, KeepCommits: keep(0)})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(ids(p, retention.KindArtifact), id); got != tt.listed {
				t.Fatalf("%s listed=%v, want %v (%v)", id, got, tt.listed, ids(p, retention.KindArtifact))
			}
		})
	}
}

// TestQuarantine lists, shows and restores both kinds of quarantine entry
// and refuses a restore over an existing path.
func TestQuarantine(t *testing.T) {
	ctx := context.Background()
	ws, _ := capturetest.Published(t, "collector_metadata", files(t, "q", 1)...)
	// An object quarantined the way repair does (pkg/integrity).
	obj := placeUnregistered(t, ws, "corrupt, say")
	rel := artifact.ObjectRel(obj)
	qid := "20260102T030405Z-0a1b2c3d"
	qdir := filepath.Join(ws.Root, "quarantine", qid)
	contents := []retention.TrashFile{}
	for _, name := range []string{"artifact.json", "payload.bin"} {
		b, _ := os.ReadFile(filepath.Join(ws.Root, rel, name))
		contents = append(contents, retention.TrashFile{Path: rel + "/" + name, Bytes: int64(len(b)), SHA256: sum(b)})
	}
	m := retention.QuarantineManifest{SchemaVersion: 1, QuarantineID: qid, Operation: "repair:sha256:00", State: "quarantined",
		OriginalPath: rel, StoredPath: "object/" + rel, Reason: "payload changed", Contents: contents}
	os.MkdirAll(filepath.Dir(filepath.Join(qdir, "object", rel)), 0o700)
	durable.WriteJSON(filepath.Join(qdir, "manifest.json"), m, 0o600)
	if err := os.Rename(filepath.Join(ws.Root, rel), filepath.Join(qdir, "object", rel)); err != nil {
		t.Fatal(err)
	}
	// A run directory recover set aside.
	runName := "0b1e3c6e-9a3e-4f2e-8f7c-000000000003"
	os.MkdirAll(filepath.Join(ws.Root, "quarantine", "runs", runName, "revisions"), 0o700)
	os.WriteFile(filepath.Join(ws.Root, "quarantine", "runs", runName, "revisions", "00000000.json"), []byte("{"), 0o600)

	l, err := retention.ListQuarantine(ws)
	if err != nil || len(l.Entries) != 2 {
		t.Fatalf("list %+v %v", l, err)
	}
	for _, tt := range []struct {
		id, kind, original string
		files              int
	}{
		{qid, retention.QuarantineObject, rel, 2},
		{"runs/" + runName, retention.QuarantineRun, "runs/" + runName, 1},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			q, err := retention.ShowQuarantine(ws, tt.id)
			if err != nil || q.Kind != tt.kind || q.OriginalPath != tt.original || len(q.Contents) != tt.files || !q.Restorable {
				t.Fatalf("show %+v %v", q, err)
			}
			for _, f := range q.Contents {
				if len(f.SHA256) != len("sha256:")+64 {
					t.Fatalf("no digest: %+v", f)
				}
			}
			// The original path is taken: refused, nothing moved.
			os.MkdirAll(filepath.Join(ws.Root, tt.original), 0o700)
			if _, err := retention.RestoreQuarantine(ctx, ws, tt.id); fault.As(err).Code != fault.RevisionConflict {
				t.Fatalf("restore over an existing path: %v", err)
			}
			os.Remove(filepath.Join(ws.Root, tt.original))
			res, err := retention.RestoreQuarantine(ctx, ws, tt.id)
			if err != nil || res.RestoredTo != tt.original {
				t.Fatalf("restore %+v %v", res, err)
			}
			if _, err := os.Lstat(filepath.Join(ws.Root, tt.original)); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, _, err := (&artifact.Store{Root: ws.Root}).Stat(obj); err != nil {
		t.Fatalf("the restored object: %v", err)
	}
	if err := (&artifact.Store{Root: ws.Root}).Verify(obj); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../../etc", "runs/../../x", "runs/not-a-run", ""} {
		if _, err := retention.ShowQuarantine(ws, bad); fault.As(err).Code != fault.InvalidArguments {
			t.Errorf("show %q: %v", bad, err)
		}
	}
}

// TestFindingReferencesAreRoots: what a finding's evidence names — an
// object no run registers, a superseded generation, a commit beyond the
// kept history — is never listed; without the finding each would be.
func TestFindingReferencesAreRoots(t *testing.T) {
	ctx := context.Background()
	for _, cited := range []bool{false, true} {
		t.Run(map[bool]string{false: "uncited", true: "cited"}[cited], func(t *testing.T) {
			ws := capturetest.Workspace(t)
			capturetest.Import(t, ws, "collector_metadata", files(t, "a", 1)...)
			old, _ := corpus.Head(ws.Root)
			gen := old.Generations[0].GenerationID
			capturetest.Import(t, ws, "collector_metadata", files(t, "b", 1)...)
			pub := publish.New(ws, publish.Options{})
			if _, err := pub.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			art := placeUnregistered(t, ws, "cited object")
			if cited {
				// The finding was checked at the old commit, which its
				// evidence references record.
				refs := []inquiry.EvidenceRef{{RefType: "artifact", RefID: art, Relation: "supports"},
					{RefType: "generation", RefID: gen, Relation: "supports"}}
				f := &inquiry.Finding{FindingID: "fnd-roots", Revision: 1, Kind: inquiry.FindingBehavior, Title: "t", Claim: "c",
					EvidenceLevel: inquiry.LevelDerived, Confidence: "low", Assessment: inquiry.Unassessed, Lifecycle: inquiry.Active, CreatedAt: time.Now()}
				if _, err := pub.PublishFinding(ctx, f, refs, refs, old.CommitID); err != nil {
					t.Fatal(err)
				}
			}
			p, err := retention.MakePlan(ctx, ws, retention.Options{MinAge: &zero, KeepCommits: keep(0)})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct{ kind, id string }{
				{retention.KindArtifact, art}, {retention.KindSuperseded, gen}, {retention.KindCommit, old.CommitID},
			} {
				if listed := slices.Contains(ids(p, c.kind), c.id); listed == cited {
					t.Errorf("%s %s listed=%v with the finding cited=%v", c.kind, c.id, listed, cited)
				}
			}
			if cited && p.Roots.ReferencedBy["finding"] == 0 {
				t.Errorf("referenced by %v", p.Roots.ReferencedBy)
			}
		})
	}
}

// TestEmptyTrashDirectory: an apply that failed before its manifest
// existed (a full disk) leaves at most an empty directory; list skips it
// and purge removes it.
func TestEmptyTrashDirectory(t *testing.T) {
	ws := capturetest.Workspace(t)
	dir := filepath.Join(ws.Root, "trash", "20260101T000000Z-deadbeef")
	os.MkdirAll(filepath.Join(dir, "objects"), 0o700)
	l, err := retention.List(ws)
	if err != nil || len(l.Trash) != 0 {
		t.Fatalf("list %+v %v", l, err)
	}
	res, err := retention.Purge(context.Background(), ws, time.Hour, time.Now())
	if err != nil || len(res.Purged) != 1 {
		t.Fatalf("purge %+v %v", res, err)
	}
	if _, err := os.Lstat(dir); err == nil {
		t.Fatal("the empty trash directory is still there")
	}
}
