package query

import (
	"context"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/publish"
)

// TestInquiryQueries: investigations page newest first with totals and
// cursors; an investigation shows each hypothesis at its latest revision
// with its revision count; a hypothesis lists every revision newest first;
// run sets list without members and show their members, bounded.
func TestInquiryQueries(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	pub := &publish.Publisher{WS: f.ws}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var bodies []any
	for i, id := range []string{"inv-a", "inv-b", "inv-c"} {
		bodies = append(bodies, &inquiry.Investigation{InvestigationID: id, Question: "q " + id, ProjectRoot: "/p",
			Status: inquiry.StatusOpen, CreatedAt: at.Add(time.Duration(i) * time.Minute)})
	}
	hyp := func(id string, expected int32, claim string) *inquiry.Hypothesis {
		return &inquiry.Hypothesis{HypothesisID: id, InvestigationID: "inv-b", Revision: expected + 1, ExpectedRevision: expected,
			Claim: claim, Prediction: "p", DiscriminatingCondition: "d", Assessment: inquiry.Unassessed, Lifecycle: inquiry.Active,
			CreatedAt: at.Add(time.Duration(expected) * time.Second)}
	}
	bodies = append(bodies, hyp("h-1", 0, "one"), hyp("h-1", 1, "two"), hyp("h-1", 2, "three"), hyp("h-2", 0, "other"))
	if _, err := pub.PublishInquiry(ctx, bodies); err != nil {
		t.Fatal(err)
	}

	page, err := ListInvestigations(ctx, f.ws, ListInvestigationsRequest{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 3 || page.Returned != 2 || !page.Truncated || page.Investigations[0].InvestigationID != "inv-c" ||
		page.Investigations[1].HypothesisCount != 2 {
		t.Fatalf("first page %+v", page)
	}
	next, err := ListInvestigations(ctx, f.ws, ListInvestigationsRequest{Limit: 2, Cursor: page.Cursor})
	if err != nil || next.Returned != 1 || next.Truncated || next.Investigations[0].InvestigationID != "inv-a" {
		t.Fatalf("second page %+v, %v", next, err)
	}
	if _, err := ListInvestigations(ctx, f.ws, ListInvestigationsRequest{Limit: 2, Cursor: page.Cursor, Status: "closed"}); err == nil {
		t.Fatal("a cursor was accepted for other filters")
	}

	inv, err := GetInvestigation(ctx, f.ws, "inv-b")
	if err != nil {
		t.Fatal(err)
	}
	if inv.HypothesisCount != 2 || len(inv.Hypotheses) != 2 || inv.Hypotheses[0].HypothesisID != "h-1" ||
		inv.Hypotheses[0].Revision != 3 || inv.Hypotheses[0].Revisions != 3 || inv.Hypotheses[0].Claim != "three" || inv.Hypotheses[1].Revisions != 1 {
		t.Fatalf("investigation %+v", inv)
	}
	h, err := GetHypothesis(ctx, f.ws, GetHypothesisRequest{HypothesisID: "h-1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if h.Current != 3 || h.Total != 3 || h.Returned != 2 || !h.Truncated || h.Revisions[0].Claim != "three" || h.Revisions[1].Revision != 2 {
		t.Fatalf("hypothesis %+v", h)
	}
	for _, err := range []error{
		func() error { _, err := GetInvestigation(ctx, f.ws, "inv-x"); return err }(),
		func() error {
			_, err := GetHypothesis(ctx, f.ws, GetHypothesisRequest{HypothesisID: "h-x"})
			return err
		}(),
		func() error { _, err := GetRunSet(ctx, f.ws, GetRunSetRequest{RunSetID: "rs-x"}); return err }(),
	} {
		if !fault.Is(err, fault.NotFound) {
			t.Fatalf("missing record: %v", err)
		}
	}

	head, _ := corpus.HeadID(f.ws.Root)
	members := []inquiry.Member{{RunID: "r-3"}, {RunID: "r-1"}, {RunID: "r-2", TrialID: "t"}}
	d, _ := inquiry.MembershipDigest(members)
	rs := &inquiry.RunSet{RunSetID: "rs-1", CorpusCommitID: head, CreatedAt: at, SelectionJSON: `{"method":"explicit"}`,
		MembersJSON: `[{"run_id":"r-3"},{"run_id":"r-1"},{"run_id":"r-2","trial_id":"t"}]`, MemberCount: 3, MembershipDigest: d}
	if _, err := pub.PublishInquiry(ctx, []any{rs}); err != nil {
		t.Fatal(err)
	}
	list, err := ListRunSets(ctx, f.ws, ListRunSetsRequest{})
	if err != nil || list.Total != 1 || list.RunSets[0].MemberCount != 3 || string(list.RunSets[0].Selection) != `{"method":"explicit"}` {
		t.Fatalf("run sets %+v, %v", list, err)
	}
	got, err := GetRunSet(ctx, f.ws, GetRunSetRequest{RunSetID: "rs-1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got.RunSet.CorpusCommitID != head || got.Total != 3 || !got.Truncated || got.Members[0].RunID != "r-1" || got.Members[1].TrialID != "t" {
		t.Fatalf("run set %+v", got)
	}
}
