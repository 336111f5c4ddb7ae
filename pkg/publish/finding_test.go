package publish

import (
	"context"
	"sync"
	"testing"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
)

func findingRev(id string, expected int32, assessment string) *inquiry.Finding {
	return &inquiry.Finding{FindingID: id, Revision: expected + 1, ExpectedRevision: expected, Kind: inquiry.FindingBehavior,
		Title: "t", Claim: "c", EvidenceLevel: inquiry.LevelDerived, Confidence: "low", Assessment: assessment,
		Lifecycle: inquiry.Active, CreatedAt: inqAt}
}

// TestFindingCASRace: writers racing with the same expected revision:
// exactly one wins, every other one gets REVISION_CONFLICT (exit 7)
// naming the winner's revision, and HEAD holds one row per revision.
func TestFindingCASRace(t *testing.T) {
	ws, _ := newWorkspace(t, 1)
	p := &Publisher{WS: ws}
	ctx := context.Background()
	head, err := corpus.HeadID(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	refs := []inquiry.EvidenceRef{{RefType: "run", RefID: "r-1", Relation: "supports"}}
	if _, err := p.PublishFinding(ctx, findingRev("fnd-1", 0, inquiry.Unassessed), refs, refs, head); err != nil {
		t.Fatal(err)
	}
	const writers = 4
	errs := make([]error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Each writer has its own publisher, as separate processes would.
			_, errs[i] = (&Publisher{WS: ws}).PublishFinding(ctx, findingRev("fnd-1", 1, inquiry.Inconclusive), refs, nil, head)
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		fe := fault.As(err)
		if fe.Code != fault.RevisionConflict || fe.Details["current_revision"] != "2" || fe.ExitCode() != 7 {
			t.Fatalf("loser: %v (details %v, exit %d)", err, fe.Details, fe.ExitCode())
		}
	}
	if won != 1 {
		t.Fatalf("%d writers won, want exactly 1 (%v)", won, errs)
	}
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if rev, err := FindingRevision(ctx, snap, "fnd-1"); err != nil || rev != 2 {
		t.Fatalf("latest revision %d (%v), want 2", rev, err)
	}
	// Two revisions; refs: the first revision's run and commit, the
	// winner's commit.
	if snap.Rows[schema.Findings.Name] != 2 || snap.Rows[schema.EvidenceRefs.Name] != 3 {
		t.Fatalf("%d finding rows, %d evidence_refs rows; want 2 and 3", snap.Rows[schema.Findings.Name], snap.Rows[schema.EvidenceRefs.Name])
	}
}

// TestFindingRefusals: a revision that does not follow the latest, a new
// finding under an id in use, a commit the workspace lacks and a finding
// that fails validation publish nothing.
func TestFindingRefusals(t *testing.T) {
	ws, _ := newWorkspace(t, 1)
	p := &Publisher{WS: ws}
	ctx := context.Background()
	head, _ := corpus.HeadID(ws.Root)
	refs := []inquiry.EvidenceRef{{RefType: "run", RefID: "r-1", Relation: "supports"}}
	if _, err := p.PublishFinding(ctx, findingRev("fnd-1", 0, inquiry.Unassessed), refs, refs, head); err != nil {
		t.Fatal(err)
	}
	before, _ := corpus.HeadID(ws.Root)
	noEvidence := findingRev("fnd-3", 0, inquiry.Unassessed)
	for _, tc := range []struct {
		name   string
		f      *inquiry.Finding
		refs   []inquiry.EvidenceRef
		commit string
		code   fault.Code
	}{
		{"id in use", findingRev("fnd-1", 0, inquiry.Unassessed), refs, head, fault.RevisionConflict},
		{"stale revision", findingRev("fnd-1", 2, inquiry.Unassessed), refs, head, fault.RevisionConflict},
		{"no such finding", findingRev("fnd-2", 1, inquiry.Unassessed), refs, head, fault.RevisionConflict},
		{"unknown commit", findingRev("fnd-4", 0, inquiry.Unassessed), refs, "sha256:00", fault.InvalidArguments},
		{"no evidence", noEvidence, nil, head, fault.InvalidArguments},
	} {
		_, err := p.PublishFinding(ctx, tc.f, tc.refs, tc.refs, tc.commit)
		if fault.As(err).Code != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if after, _ := corpus.HeadID(ws.Root); after != before {
		t.Fatalf("a refused finding moved HEAD from %s to %s", before, after)
	}
}
