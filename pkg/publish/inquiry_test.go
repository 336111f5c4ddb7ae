package publish

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
)

var inqAt = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func investigation(id string) *inquiry.Investigation {
	return &inquiry.Investigation{InvestigationID: id, Question: "why is scan slow?", ProjectRoot: "/p", Status: inquiry.StatusOpen, CreatedAt: inqAt}
}

func hypothesis(id, inv string, expected int32, claim string) *inquiry.Hypothesis {
	return &inquiry.Hypothesis{HypothesisID: id, InvestigationID: inv, Revision: expected + 1, ExpectedRevision: expected,
		Claim: claim, Prediction: "p", DiscriminatingCondition: "d", Assessment: inquiry.Unassessed, Lifecycle: inquiry.Active, CreatedAt: inqAt}
}

func latestRevisions(t *testing.T, p *Publisher) map[string]int32 {
	t.Helper()
	snap, err := corpus.Pin(p.WS.Root)
	if err != nil {
		t.Fatal(err)
	}
	revs, err := HypothesisRevisions(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	return revs
}

// TestHypothesisCASRace: writers racing with the same expected revision:
// exactly one wins, every other one gets REVISION_CONFLICT naming the
// winner's revision, and HEAD holds the winner's revision only.
func TestHypothesisCASRace(t *testing.T) {
	ws, _ := newWorkspace(t, 0)
	p := &Publisher{WS: ws}
	ctx := context.Background()
	if _, err := p.PublishInquiry(ctx, []any{investigation("inv-1"), hypothesis("h-1", "inv-1", 0, "first")}); err != nil {
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
			_, errs[i] = (&Publisher{WS: ws}).PublishInquiry(ctx, []any{hypothesis("h-1", "inv-1", 1, "revised")})
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
	if got := latestRevisions(t, p)["h-1"]; got != 2 {
		t.Fatalf("latest revision %d, want 2", got)
	}
	snap, _ := corpus.Pin(ws.Root)
	if snap.Rows[schema.Hypotheses.Name] != 2 {
		t.Fatalf("%d hypothesis rows, want 2", snap.Rows[schema.Hypotheses.Name])
	}
}

// TestInquiryRefusals: what depends on the corpus is refused with the
// right code and nothing is published.
func TestInquiryRefusals(t *testing.T) {
	ws, _ := newWorkspace(t, 0)
	p := &Publisher{WS: ws}
	ctx := context.Background()
	base, err := p.PublishInquiry(ctx, []any{investigation("inv-1"), hypothesis("h-1", "inv-1", 0, "c"), hypothesis("h-1", "inv-1", 1, "c2")})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := corpus.HeadID(ws.Root)
	members := []inquiry.Member{{RunID: "r-1"}}
	d, _ := inquiry.MembershipDigest(members)
	rs := &inquiry.RunSet{RunSetID: "rs-1", CorpusCommitID: head, CreatedAt: inqAt, SelectionJSON: "{}", MembersJSON: `[{"run_id":"r-1"}]`, MemberCount: 1, MembershipDigest: d}
	if _, err := p.PublishInquiry(ctx, []any{rs}); err != nil {
		t.Fatal(err)
	}
	badCommit := *rs
	badCommit.RunSetID, badCommit.CorpusCommitID = "rs-2", "c0ffee"
	badDigest := *rs
	badDigest.RunSetID, badDigest.MembershipDigest = "rs-3", "sha256:00"
	bad := hypothesis("h-2", "inv-1", 0, "c")
	bad.Assessment = "probably"
	cases := []struct {
		name   string
		bodies []any
		code   fault.Code
		detail [2]string
	}{
		{"stale revision", []any{hypothesis("h-1", "inv-1", 1, "late")}, fault.RevisionConflict, [2]string{"current_revision", "2"}},
		{"new hypothesis that exists", []any{hypothesis("h-1", "inv-1", 0, "again")}, fault.RevisionConflict, [2]string{"current_revision", "2"}},
		{"revision of a missing hypothesis", []any{hypothesis("h-9", "inv-1", 3, "x")}, fault.RevisionConflict, [2]string{"current_revision", "0"}},
		{"skipped revision", []any{&inquiry.Hypothesis{HypothesisID: "h-1", InvestigationID: "inv-1", Revision: 5, ExpectedRevision: 2,
			Claim: "c", Prediction: "p", DiscriminatingCondition: "d", Assessment: inquiry.Unassessed, Lifecycle: inquiry.Active, CreatedAt: inqAt}},
			fault.InvalidArguments, [2]string{"field", "revision"}},
		{"bad assessment", []any{bad}, fault.InvalidArguments, [2]string{"field", "assessment"}},
		{"missing investigation", []any{hypothesis("h-3", "inv-9", 0, "c")}, fault.NotFound, [2]string{"investigation_id", "inv-9"}},
		{"investigation twice", []any{investigation("inv-1")}, fault.RevisionConflict, [2]string{"investigation_id", "inv-1"}},
		{"run set twice", []any{rs}, fault.RevisionConflict, [2]string{"run_set_id", "rs-1"}},
		{"run set of a missing commit", []any{&badCommit}, fault.InvalidArguments, [2]string{"field", "corpus_commit_id"}},
		{"run set digest", []any{&badDigest}, fault.InvalidArguments, [2]string{"field", "membership_digest"}},
		{"bad trial outcome", []any{&inquiry.Trial{TrialID: "t", ExperimentID: "e", VariantID: "v", Outcome: "eligible"}}, fault.InvalidArguments, [2]string{"field", "outcome"}},
		{"bad id", []any{investigation("../x")}, fault.InvalidArguments, [2]string{"field", "investigation_id"}},
		{"revision moved to another investigation", []any{investigation("inv-2"), hypothesis("h-1", "inv-2", 2, "moved")}, fault.InvalidArguments, [2]string{"field", "investigation_id"}},
		{"experiment of a missing investigation", []any{&inquiry.Experiment{ExperimentID: "e-9", InvestigationID: "inv-9", Recipe: "r", PrimaryMetric: "m",
			Polarity: inquiry.LowerIsBetter, CreatedAt: inqAt}}, fault.NotFound, [2]string{"investigation_id", "inv-9"}},
		{"experiment of a missing hypothesis", []any{&inquiry.Experiment{ExperimentID: "e-9", InvestigationID: "inv-1", HypothesisID: "h-9", Recipe: "r", PrimaryMetric: "m",
			Polarity: inquiry.LowerIsBetter, CreatedAt: inqAt}}, fault.NotFound, [2]string{"hypothesis_id", "h-9"}},
		{"not a record", []any{"text"}, fault.InvalidArguments, [2]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := corpus.HeadID(ws.Root)
			_, err := p.PublishInquiry(ctx, c.bodies)
			if err == nil {
				t.Fatalf("published, want %s", c.code)
			}
			fe := fault.As(err)
			if fe.Code != c.code || (c.detail[0] != "" && fe.Details[c.detail[0]] != c.detail[1]) {
				t.Fatalf("got %v (details %v), want %s with %s=%s", err, fe.Details, c.code, c.detail[0], c.detail[1])
			}
			if after, _ := corpus.HeadID(ws.Root); after != before {
				t.Fatal("a refused publication moved HEAD")
			}
		})
	}
	if got := latestRevisions(t, p)["h-1"]; got != 2 || base.Tables["hypotheses"] != 2 {
		t.Fatalf("latest %d, tables %v", got, base.Tables)
	}
}

// TestCASAfterCompaction: many small inquiry publications are merged
// (automatic compaction), and the compare-and-swap still sees the latest
// revision in the merged files.
func TestCASAfterCompaction(t *testing.T) {
	ws, _ := newWorkspace(t, 0)
	p := &Publisher{WS: ws, AutoCompact: true}
	ctx := context.Background()
	if _, err := p.PublishInquiry(ctx, []any{investigation("inv-1")}); err != nil {
		t.Fatal(err)
	}
	compacted := false
	for rev := int32(0); rev < int32(AutoCompactGenerations)+2; rev++ {
		res, err := p.PublishInquiry(ctx, []any{hypothesis("h-1", "inv-1", rev, "c")})
		if err != nil {
			t.Fatal(err)
		}
		compacted = compacted || res.Compaction != nil
	}
	snap, _ := corpus.Pin(ws.Root)
	if !compacted || len(snap.Generations) >= AutoCompactGenerations {
		t.Fatalf("compacted %v, %d live generations", compacted, len(snap.Generations))
	}
	want := int32(AutoCompactGenerations + 2)
	if got := latestRevisions(t, p)["h-1"]; got != want {
		t.Fatalf("latest revision %d, want %d", got, want)
	}
	_, err := p.PublishInquiry(ctx, []any{hypothesis("h-1", "inv-1", 3, "stale")})
	if fe := fault.As(err); err == nil || fe.Code != fault.RevisionConflict || fe.Details["current_revision"] != strconv.Itoa(int(want)) {
		t.Fatalf("stale revision after compaction: %v", err)
	}
}

// TestPublishAllKinds: one body of every kind lands in one generation,
// one row in each table, and reads back.
func TestPublishAllKinds(t *testing.T) {
	ws, _ := newWorkspace(t, 0)
	p := &Publisher{WS: ws}
	head, _ := corpus.HeadID(ws.Root)
	order := int32(1)
	d, _ := inquiry.MembershipDigest(nil)
	res, err := p.PublishInquiry(context.Background(), []any{
		*investigation("inv-1"),
		hypothesis("h-1", "inv-1", 0, "c"),
		&inquiry.Experiment{ExperimentID: "e-1", InvestigationID: "inv-1", Recipe: "scan", PrimaryMetric: "wall_time", Polarity: inquiry.LowerIsBetter,
			ConfidenceLevel: 0.95, CreatedAt: inqAt},
		&inquiry.Variant{VariantID: "v-1", ExperimentID: "e-1", Name: "baseline"},
		&inquiry.Trial{TrialID: "t-1", ExperimentID: "e-1", VariantID: "v-1", OrderInBlock: &order, Attempt: 1, Outcome: inquiry.TrialFailed},
		&inquiry.RunSet{RunSetID: "rs-1", CorpusCommitID: head, CreatedAt: inqAt, SelectionJSON: "{}", MembersJSON: "[]", MembershipDigest: d},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range []string{"investigations", "hypotheses", "experiments", "variants", "trials", "run_sets"} {
		if res.Tables[tb] != 1 {
			t.Fatalf("tables %v", res.Tables)
		}
	}
	snap, _ := corpus.Pin(ws.Root)
	var got []any
	if err := schema.Scan(context.Background(), schema.Trials, snap.Files["trials"][0], []string{"trial_id", "order_in_block", "run_id", "factors_json"}, func(r []any) error {
		got = append(got, r...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0] != "t-1" || got[1] != int32(1) || got[2] != nil || got[3] != "{}" {
		t.Fatalf("trial row %v", got)
	}
}

// BenchmarkHypothesisRevision: one compare-and-swap revision published on
// top of the previous one (the check reads every hypotheses file of HEAD).
func BenchmarkHypothesisRevision(b *testing.B) {
	ws, _ := newWorkspace(b, 0)
	p := &Publisher{WS: ws, AutoCompact: true}
	ctx := context.Background()
	if _, err := p.PublishInquiry(ctx, []any{investigation("inv-1")}); err != nil {
		b.Fatal(err)
	}
	rev := int32(0)
	for b.Loop() {
		if _, err := p.PublishInquiry(ctx, []any{hypothesis("h-1", "inv-1", rev, "c")}); err != nil {
			b.Fatal(err)
		}
		rev++
	}
}
