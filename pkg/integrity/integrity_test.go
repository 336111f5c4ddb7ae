package integrity_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/capture/capturetest"
	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/integrity"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/oplog"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

const (
	sample = "testdata/google-pprof__sample.cpu.pb.gz"
	fgprof = "testdata/parca__fgprof.pb.gz"
)

func validate(t *testing.T, ws *workspace.Workspace, level integrity.Level) *integrity.IntegrityResult {
	t.Helper()
	res, err := integrity.Validate(context.Background(), ws, level)
	if err != nil {
		t.Fatalf("validate %s: %v", level, err)
	}
	return res
}

// find returns the first problem with code, or nil.
func find(res *integrity.IntegrityResult, code string) *integrity.Problem {
	for i := range res.Problems {
		if res.Problems[i].Code == code {
			return &res.Problems[i]
		}
	}
	return nil
}

func codes(res *integrity.IntegrityResult) []string {
	var out []string
	for _, p := range res.Problems {
		out = append(out, p.Severity+" "+p.Code+" "+p.File)
	}
	return out
}

// flipByte changes one byte of a file in place, keeping its size.
func flipByte(t testing.TB, path string, at int64) {
	t.Helper()
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

func headFiles(t *testing.T, ws *workspace.Workspace) []corpus.GenerationFile {
	t.Helper()
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpus.GenerationFile
	for _, g := range snap.Generations {
		out = append(out, g.Files...)
	}
	return out
}

func payloadOf(t testing.TB, ws *workspace.Workspace, runID string) (string, string) {
	t.Helper()
	m, err := (&run.Store{Root: ws.Root}).Get(runID)
	if err != nil {
		t.Fatal(err)
	}
	reg := m.Artifacts[0]
	return reg.ArtifactID, filepath.Join(ws.Root, filepath.FromSlash(reg.PayloadPath))
}

func TestIntactAtEveryLevel(t *testing.T) {
	ws, _ := capturetest.Published(t, "", sample, fgprof)
	for _, level := range []integrity.Level{integrity.Quick, integrity.Standard, integrity.Full} {
		res := validate(t, ws, level)
		if !res.Valid || res.Total != 0 {
			t.Errorf("%s: valid=%v problems %v", level, res.Valid, codes(res))
		}
		if res.Checked.Artifacts != 2 || res.Checked.Runs != 2 || res.Checked.Generations != 1 || res.Checked.ParquetFiles == 0 {
			t.Errorf("%s: checked %+v", level, res.Checked)
		}
		if (level == integrity.Full) != (res.Checked.BytesHashed > 0) {
			t.Errorf("%s: hashed %d bytes", level, res.Checked.BytesHashed)
		}
	}
}

// TestAlteredArtifactByte: criterion 13. A changed byte anywhere in a
// payload (first, middle, last) is found by full validation, with the
// digests and the run that registers it, and not by quick.
func TestAlteredArtifactByte(t *testing.T) {
	for _, where := range []string{"first", "middle", "last"} {
		t.Run(where, func(t *testing.T) {
			ws, ids := capturetest.Published(t, "", sample)
			id, payload := payloadOf(t, ws, ids[0])
			fi, _ := os.Stat(payload)
			at := map[string]int64{"first": 0, "middle": fi.Size() / 2, "last": fi.Size() - 1}[where]
			flipByte(t, payload, at)
			if res := validate(t, ws, integrity.Quick); !res.Valid {
				t.Errorf("quick found %v", codes(res))
			}
			res := validate(t, ws, integrity.Full)
			p := find(res, integrity.CodeArtifactDigest)
			if res.Valid || p == nil {
				t.Fatalf("full: valid=%v %v", res.Valid, codes(res))
			}
			if p.Expected != id || p.Found == "" || p.Found == id || !strings.HasSuffix(p.File, "/payload.pb.gz") {
				t.Errorf("problem %+v", p)
			}
			var registered bool
			for _, d := range p.Dependents {
				registered = registered || (d.Type == "run" && d.ID == ids[0])
			}
			if !registered || p.Remediation.Command != "flameox repair" {
				t.Errorf("dependents %+v remediation %+v", p.Dependents, p.Remediation)
			}
		})
	}
}

// TestAlteredParquetByte: a changed byte in every Parquet file of HEAD,
// one at a time, is found by full validation and not by quick.
func TestAlteredParquetByte(t *testing.T) {
	ws0, _ := capturetest.Published(t, "", sample)
	files := headFiles(t, ws0)
	if len(files) < 3 {
		t.Fatalf("only %d files", len(files))
	}
	for _, f := range files {
		t.Run(f.Table, func(t *testing.T) {
			ws, _ := capturetest.Published(t, "", sample)
			var path string
			var size int64
			for _, g := range headFiles(t, ws) {
				if g.Table == f.Table {
					path, size = filepath.Join(ws.Root, filepath.FromSlash(g.Path)), g.ByteLength
				}
			}
			flipByte(t, path, size/2)
			if res := validate(t, ws, integrity.Quick); !res.Valid {
				t.Errorf("quick found %v", codes(res))
			}
			res := validate(t, ws, integrity.Full)
			if res.Valid {
				t.Fatalf("full missed the altered byte of %s", path)
			}
			p := find(res, integrity.CodeEvidenceDigest)
			if p == nil {
				p = find(res, integrity.CodeEvidenceUnreadable)
			}
			if p == nil || !strings.HasPrefix(p.File, "evidence/"+f.Table+"/") || p.Subject == nil || p.Subject.Type != "generation" {
				t.Fatalf("problems %v", codes(res))
			}
		})
	}
}

func TestStandardFindings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, ws *workspace.Workspace, runID string)
		code   string
		quick  bool // quick finds it too
	}{
		{"deleted parquet file", func(t *testing.T, ws *workspace.Workspace, _ string) {
			f := headFiles(t, ws)[0]
			if err := os.Remove(filepath.Join(ws.Root, filepath.FromSlash(f.Path))); err != nil {
				t.Fatal(err)
			}
		}, integrity.CodeEvidenceMissing, true},
		{"deleted generation manifest", func(t *testing.T, ws *workspace.Workspace, _ string) {
			head, _ := corpus.Head(ws.Root)
			if err := os.Remove(filepath.Join(ws.Root, filepath.FromSlash(head.Generations[0].Manifest))); err != nil {
				t.Fatal(err)
			}
		}, integrity.CodeManifestMissing, true},
		{"dangling registration", func(t *testing.T, ws *workspace.Workspace, runID string) {
			id, _ := payloadOf(t, ws, runID)
			dir := filepath.Join(ws.Root, filepath.FromSlash(artifact.ObjectRel(id)))
			_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chmod(p, 0o700) })
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, integrity.CodeDanglingReference, false},
		{"stale catalog", func(t *testing.T, ws *workspace.Workspace, _ string) {
			if _, err := catalog.Rebuild(context.Background(), ws.Root, ws.Locks()); err != nil {
				t.Fatal(err)
			}
			capturetest.Import(t, ws, "", fgprof)
		}, integrity.CodeCatalogStale, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, ids := capturetest.Published(t, "", sample)
			tc.damage(t, ws, ids[0])
			quick := validate(t, ws, integrity.Quick)
			if got := find(quick, tc.code) != nil; got != tc.quick {
				t.Errorf("quick found %s: %v, want %v (%v)", tc.code, got, tc.quick, codes(quick))
			}
			std := validate(t, ws, integrity.Standard)
			p := find(std, tc.code)
			if p == nil {
				t.Fatalf("standard did not find %s: %v", tc.code, codes(std))
			}
			if p.File == "" || p.Message == "" || p.Remediation.Command == "" {
				t.Errorf("imprecise problem %+v", p)
			}
			// A stale catalog loses nothing: a warning; the rest are errors.
			if wantValid := tc.code == integrity.CodeCatalogStale; std.Valid != wantValid {
				t.Errorf("valid = %v, want %v: %v", std.Valid, wantValid, codes(std))
			}
		})
	}
}

func TestBoundedProblems(t *testing.T) {
	ws, _ := capturetest.Published(t, "", sample)
	for _, f := range headFiles(t, ws) {
		os.Remove(filepath.Join(ws.Root, filepath.FromSlash(f.Path)))
	}
	res, err := integrity.ValidateWith(context.Background(), ws, integrity.Standard, integrity.Options{MaxProblems: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 2 || !res.Truncated || res.Total <= 2 || res.Errors != res.Total {
		t.Fatalf("returned %d, total %d, truncated %v, errors %d", len(res.Problems), res.Total, res.Truncated, res.Errors)
	}
}

// logged reports whether the operation log has a repair.apply line with
// result whose ids include id.
func logged(t *testing.T, ws *workspace.Workspace, result, id string) bool {
	t.Helper()
	entries, err := oplog.Read(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Operation != "repair.apply" || e.Result != result {
			continue
		}
		for _, ids := range e.IDs {
			for _, v := range ids {
				if v == id {
					return true
				}
			}
		}
	}
	return false
}

func publisher(ws *workspace.Workspace) *publish.Publisher {
	return publish.New(ws, publish.Options{Extractors: all.Registry().Extractors()})
}

// damaged builds a workspace of two runs in two generations and damages
// it: a changed byte in run a's payload, and one in the frames file of run
// b's generation. It returns a, b, a's artifact id and b's generation.
func damaged(t testing.TB) (ws *workspace.Workspace, a, b, idA string, genB *corpus.Generation) {
	t.Helper()
	ws = capturetest.Workspace(t)
	a = capturetest.Import(t, ws, "", sample)[0]
	b = capturetest.Import(t, ws, "", fgprof)[0]
	idA, payloadA := payloadOf(t, ws, a)
	flipByte(t, payloadA, 10)
	head, _ := corpus.Head(ws.Root)
	for _, ref := range head.Generations {
		g, err := corpus.ReadGeneration(ws.Root, ref, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.InputRunIDs) == 1 && g.InputRunIDs[0] == b {
			genB = g
		}
	}
	for _, f := range genB.Files {
		if f.Table == "frames" {
			flipByte(t, filepath.Join(ws.Root, filepath.FromSlash(f.Path)), f.ByteLength/2)
		}
	}
	return ws, a, b, idA, genB
}

// TestRepair: a corrupt artifact (run A) and a corrupt Parquet file of
// another generation (run B) are repaired as planned: A's object is
// quarantined with its registrations kept, B's generation is published
// again from its intact artifact, the catalog is rebuilt, and full
// validation passes afterwards.
func TestRepair(t *testing.T) {
	ctx := context.Background()
	ws, a, b, idA, genB := damaged(t)
	plan, err := integrity.Plan(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]integrity.Action{}
	for _, act := range plan.Actions {
		kinds[act.Kind] = act
	}
	if q := kinds[integrity.ActionQuarantineArtifact]; q.Target.ID != idA || len(q.Runs) != 1 || q.Runs[0] != a {
		t.Errorf("quarantine action %+v", q)
	}
	if r := kinds[integrity.ActionRepublishGeneration]; r.Target.ID != genB.GenerationID || len(r.Runs) != 1 || r.Runs[0] != b || r.Loses == "" {
		t.Errorf("republish action %+v", r)
	}
	if _, ok := kinds[integrity.ActionRebuildCatalog]; !ok || len(plan.Actions) != 3 || plan.Intact {
		t.Errorf("plan %+v", plan)
	}
	// A second plan of the same workspace has the same digest.
	again, err := integrity.Plan(ctx, ws)
	if err != nil || again.PlanDigest != plan.PlanDigest {
		t.Fatalf("replanned %v, %v", again, err)
	}
	res, err := integrity.Apply(ctx, ws, plan.PlanDigest, publisher(ws))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 4 || res.CommitID == plan.CommitID {
		t.Fatalf("applied %+v", res)
	}
	after := validate(t, ws, integrity.Full)
	if !after.Valid {
		t.Fatalf("after repair: %v", codes(after))
	}
	if p := find(after, integrity.CodeArtifactQuarantined); p == nil || p.Subject.ID != idA {
		t.Errorf("the quarantined artifact is not reported: %v", codes(after))
	}
	// The registration is kept.
	if m, err := (&run.Store{Root: ws.Root}).Get(a); err != nil || len(m.Artifacts) != 1 || m.Artifacts[0].ArtifactID != idA {
		t.Errorf("run A lost its registration: %v %v", m, err)
	}
	// The quarantined object sits under quarantine/<id>/object/<its path>,
	// beside its manifest (the layout `flameox quarantine` reads).
	qdir := filepath.Join(ws.Root, filepath.FromSlash(res.Applied[0].Quarantine))
	if _, err := os.Stat(filepath.Join(qdir, "object", filepath.FromSlash(artifact.ObjectRel(idA)), "artifact.json")); err != nil {
		t.Errorf("quarantine entry: %v", err)
	}
	// `flameox quarantine list` (pkg/retention) reads the entries repair
	// wrote: the object and the superseded frames file.
	list, err := retention.ListQuarantine(ws)
	if err != nil || len(list.Entries) != 2 {
		t.Fatalf("quarantine list: %+v %v", list, err)
	}
	for _, e := range list.Entries {
		if e.Kind != retention.QuarantineObject || e.State != "quarantined" || !e.Restorable || e.Files == 0 {
			t.Errorf("quarantine entry %+v", e)
		}
	}
	// The operation log has the repair, with what it did.
	if !logged(t, ws, "ok", idA) {
		t.Error("the repair is not in the operation log")
	}
	// Nothing is left to repair but the warning.
	final, err := integrity.Plan(ctx, ws)
	if err != nil || len(final.Actions) != 0 || len(final.Unresolved) != 0 || !final.Intact {
		t.Errorf("final plan %+v %v", final, err)
	}
}

// TestApplyStaleDigest: a plan made before the workspace changed is
// refused and changes nothing; a malformed digest is an argument error.
func TestApplyStaleDigest(t *testing.T) {
	ctx := context.Background()
	ws, ids := capturetest.Published(t, "", sample)
	_, payload := payloadOf(t, ws, ids[0])
	flipByte(t, payload, 3)
	plan, err := integrity.Plan(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	capturetest.Import(t, ws, "", fgprof) // HEAD moves: the plan is stale
	headBefore, _ := corpus.HeadID(ws.Root)
	_, err = integrity.Apply(ctx, ws, plan.PlanDigest, publisher(ws))
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.RevisionConflict || fe.Details["current_plan_digest"] == "" {
		t.Fatalf("apply of a stale plan: %v", err)
	}
	if !logged(t, ws, "error", plan.PlanDigest) {
		t.Error("the refused repair is not in the operation log")
	}
	if headAfter, _ := corpus.HeadID(ws.Root); headAfter != headBefore {
		t.Errorf("HEAD moved")
	}
	if _, err := os.Stat(payload); err != nil {
		t.Errorf("the object moved: %v", err)
	}
	_, err = integrity.Apply(ctx, ws, "not-a-digest", publisher(ws))
	if !errors.As(err, &fe) || fe.Code != fault.InvalidArguments {
		t.Fatalf("apply of a bad digest: %v", err)
	}
}

// TestUnrepairable: a deleted generation manifest cannot be rebuilt; the
// plan says so and what is lost, with no action.
func TestUnrepairable(t *testing.T) {
	ws, _ := capturetest.Published(t, "", sample)
	head, _ := corpus.Head(ws.Root)
	os.Remove(filepath.Join(ws.Root, filepath.FromSlash(head.Generations[0].Manifest)))
	plan, err := integrity.Plan(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Actions) != 0 || len(plan.Unresolved) != 1 || plan.Unresolved[0].Loses == "" || plan.Apply != "" {
		t.Fatalf("plan %+v", plan)
	}
}

// TestValidateTakesNoWriteLock: validation at every level runs while
// another process holds the write lock (a publication in progress).
func TestValidateTakesNoWriteLock(t *testing.T) {
	ws, _ := capturetest.Published(t, "", sample)
	release, err := lock.NewSet(ws.Root, time.Second).Lock(context.Background(), lock.Write, false)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, level := range []integrity.Level{integrity.Quick, integrity.Standard, integrity.Full} {
		if res := validate(t, ws, level); !res.Valid {
			t.Errorf("%s: %v", level, codes(res))
		}
	}
}

// TestSupersededFiles: after compaction the replaced generations' files
// stay on disk; a changed byte in one is found by full validation (not by
// quick) and repaired by setting the file aside. A damaged compacted
// segment cannot be rebuilt from artifacts: the plan says what is lost.
func TestSupersededFiles(t *testing.T) {
	ctx := context.Background()
	ws := capturetest.Workspace(t)
	capturetest.Import(t, ws, "", sample)
	capturetest.Import(t, ws, "", fgprof)
	before, _ := corpus.Pin(ws.Root)
	old := before.Generations[0]
	if res, err := publisher(ws).Compact(ctx); err != nil || !res.Compacted {
		t.Fatalf("compact: %v %v", res, err)
	}
	var frames corpus.GenerationFile
	for _, f := range old.Files {
		if f.Table == "frames" {
			frames = f
		}
	}
	flipByte(t, filepath.Join(ws.Root, filepath.FromSlash(frames.Path)), frames.ByteLength/2)
	if res := validate(t, ws, integrity.Quick); !res.Valid {
		t.Errorf("quick found %v", codes(res))
	}
	res := validate(t, ws, integrity.Full)
	p := find(res, integrity.CodeEvidenceDigest)
	if res.Valid || p == nil || p.File != frames.Path || !strings.Contains(p.Message, "superseded by") {
		t.Fatalf("full: %v", codes(res))
	}
	plan, err := integrity.Plan(ctx, ws)
	if err != nil || len(plan.Actions) != 1 || plan.Actions[0].Kind != integrity.ActionQuarantineFile || len(plan.Unresolved) != 0 {
		t.Fatalf("plan %+v %v", plan, err)
	}
	if _, err := integrity.Apply(ctx, ws, plan.PlanDigest, publisher(ws)); err != nil {
		t.Fatal(err)
	}
	if res := validate(t, ws, integrity.Full); !res.Valid || res.Total != 0 {
		t.Fatalf("after repair: %v", codes(res))
	}

	// The live, compacted segment: unresolved, with what is lost.
	seg := headFiles(t, ws)[0]
	flipByte(t, filepath.Join(ws.Root, filepath.FromSlash(seg.Path)), seg.ByteLength/2)
	plan, err = integrity.Plan(ctx, ws)
	if err != nil || len(plan.Actions) != 0 || len(plan.Unresolved) != 1 ||
		!strings.Contains(plan.Unresolved[0].Why, "compact") || !strings.Contains(plan.Unresolved[0].Loses, seg.Table) {
		t.Fatalf("plan for a damaged segment %+v %v", plan, err)
	}
}

// TestAfterGarbageCollection: what gc removes on purpose (old commits
// beyond the kept history, superseded generations, their files) is no
// damage: full validation passes after a real gc; a commit removed
// without gc's marker is still found.
func TestAfterGarbageCollection(t *testing.T) {
	ctx := context.Background()
	ws := capturetest.Workspace(t)
	capturetest.Import(t, ws, "", sample)
	capturetest.Import(t, ws, "", fgprof)
	if _, err := publisher(ws).Compact(ctx); err != nil {
		t.Fatal(err)
	}
	zero, keep := time.Duration(0), 0
	opt := retention.Options{MinAge: &zero, KeepCommits: &keep}
	plan, err := retention.MakePlan(ctx, ws, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := retention.Apply(ctx, ws, opt, plan.PlanDigest); err != nil {
		t.Fatal(err)
	}
	if marks, _ := os.ReadDir(filepath.Join(ws.Root, "corpus", "collected")); len(marks) == 0 {
		t.Fatalf("gc collected no commit: %+v", plan)
	}
	res := validate(t, ws, integrity.Full)
	if !res.Valid || res.Errors != 0 {
		t.Fatalf("after gc: %v", codes(res))
	}
	// A commit that vanished without gc is damage.
	head, _ := corpus.Head(ws.Root)
	if head.ParentCommitID == nil {
		t.Fatal("no parent")
	}
	parent := *head.ParentCommitID
	path := corpus.CommitPath(ws.Root, parent)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("gc collected HEAD's parent too (%v); nothing left to remove", err)
	}
	os.Remove(path)
	if res := validate(t, ws, integrity.Quick); find(res, integrity.CodeCommitInvalid) == nil {
		t.Fatalf("a vanished commit is not reported: %v", codes(res))
	}
}
