package publish

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
)

// comparisonJSON is a comparison as compare.Confirm writes it, with edit
// applied to its decoded object.
func comparisonJSON(t *testing.T, commit, base, cand string, edit func(map[string]any)) []byte {
	t.Helper()
	c := map[string]any{
		"schema_version": 1, "corpus_commit_id": commit, "metric": "gobench.sec/op", "subject": "Scan", "unit": "sec/op",
		"estimand": "median_paired_log_ratio", "independent_unit": "block", "polarity": "lower_is_better",
		"practical_threshold": 0.05, "confidence_level": 0.95, "confidence_method": "bca", "resamples": 999, "seed": 3,
		"paired_count": 2, "ratio": 0.9, "ratio_low": 0.85, "ratio_high": 0.95, "degenerate_interval": false,
		"decision": "meaningful_improvement", "validity": "exploratory",
		"mismatches":  []any{map[string]any{"what": "identity_quality", "detail": `the baseline's source identity is "partial"`, "critical": false}},
		"baseline":    map[string]any{"run_set_id": base, "attempted": 3, "eligible": 2, "failed": 1, "excluded": 0, "paired": 2},
		"candidate":   map[string]any{"run_set_id": cand, "attempted": 2, "eligible": 2, "failed": 0, "excluded": 0, "paired": 2},
		"limitations": []any{"blocks are the independent unit"},
	}
	if edit != nil {
		edit(c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeComparison(t *testing.T, b []byte) *Comparison {
	t.Helper()
	c, err := DecodeComparison(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// comparedWorkspace publishes two run sets of experiment e-1 (named by
// their selections) and two frozen by hand whose trials belong to e-2,
// and returns the publisher and HEAD.
func comparedWorkspace(t *testing.T) (*Publisher, string) {
	t.Helper()
	ws, _ := newWorkspace(t, 0)
	p := &Publisher{WS: ws, Now: func() time.Time { return inqAt }}
	ctx := context.Background()
	head, _ := corpus.HeadID(ws.Root)
	set := func(id, selection string, members ...inquiry.Member) *inquiry.RunSet {
		ms := inquiry.SortMembers(members)
		b, _ := json.Marshal(ms)
		d, _ := inquiry.MembershipDigest(ms)
		return &inquiry.RunSet{RunSetID: id, CorpusCommitID: head, CreatedAt: inqAt, SelectionJSON: selection, MembersJSON: string(b),
			MemberCount: uint64(len(ms)), MembershipDigest: d}
	}
	bodies := []any{investigation("inv-1"),
		&inquiry.Experiment{ExperimentID: "e-2", InvestigationID: "inv-1", Recipe: "scan", PrimaryMetric: "m", Polarity: inquiry.LowerIsBetter, ConfidenceLevel: 0.95, CreatedAt: inqAt},
		set("rs-a", `{"method":"experiment_variant","experiment_id":"e-1","variant_id":"v-a"}`, inquiry.Member{RunID: "r-3"}, inquiry.Member{RunID: "r-1"}, inquiry.Member{RunID: "r-2"}),
		set("rs-b", `{"method":"experiment_variant","experiment_id":"e-1","variant_id":"v-b"}`, inquiry.Member{RunID: "r-4"}, inquiry.Member{RunID: "r-5"}),
		set("rs-c", `{"method":"explicit"}`, inquiry.Member{RunID: "r-6", TrialID: "t-6"}),
		set("rs-d", `{"method":"explicit"}`, inquiry.Member{RunID: "r-7"}),
	}
	for i, id := range []string{"t-6", "t-7"} {
		bodies = append(bodies, &inquiry.Trial{TrialID: id, ExperimentID: "e-2", VariantID: "v", RunID: []string{"r-6", "r-7"}[i], Attempt: 1, Outcome: inquiry.TrialSucceeded})
	}
	res, err := p.PublishInquiry(ctx, bodies)
	if err != nil {
		t.Fatal(err)
	}
	return p, res.CommitID
}

// scanTable returns the named columns of every row of table tb at HEAD.
func scanTable(t *testing.T, p *Publisher, tb *schema.Table, cols ...string) [][]any {
	t.Helper()
	snap, err := corpus.Pin(p.WS.Root)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for _, f := range snap.Files[tb.Name] {
		if err := schema.Scan(context.Background(), tb, f, cols, func(r []any) error {
			rows = append(rows, slices.Clone(r))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// TestPublishComparison: one generation holds the comparisons row (the
// ratio as a relative change, its interval on the same scale, counts,
// mismatches), the analyses row (canonical parameters, the comparison's
// commit, both sets' runs) and the references between them; recording
// the same comparison again, even read at a later commit, publishes
// nothing and names the first recording.
func TestPublishComparison(t *testing.T) {
	p, commit := comparedWorkspace(t)
	ctx := context.Background()
	c := decodeComparison(t, comparisonJSON(t, commit, "rs-a", "rs-b", nil))
	out, err := p.PublishComparisons(ctx, []*Comparison{c}, inqAt.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rec := out.Recorded[0]
	if out.Result == nil || rec.AlreadyRecorded || rec.CorpusCommitID != out.Result.CommitID || rec.ExperimentID != "e-1" ||
		!strings.HasPrefix(rec.ComparisonID, "cmp-") || len(rec.ComparisonID) != 36 {
		t.Fatalf("recorded %+v, result %+v", rec, out.Result)
	}
	if got := out.Result.Tables; got["comparisons"] != 1 || got["analyses"] != 1 || got["evidence_refs"] != 3+1+5 {
		t.Fatalf("tables %v", got)
	}
	rows := scanTable(t, p, schema.Comparisons, "comparison_id", "experiment_id", "relative_change", "confidence_low", "confidence_high",
		"random_seed", "complete_pair_n", "baseline_failed_n", "decision", "validity", "baseline_value_float", "unit")
	if len(rows) != 1 {
		t.Fatalf("comparisons rows %v", rows)
	}
	r := rows[0]
	near := func(v any, want float64) bool { f, ok := v.(float64); return ok && f > want-1e-12 && f < want+1e-12 }
	if r[0] != rec.ComparisonID || r[1] != "e-1" || !near(r[2], -0.1) || !near(r[3], -0.15) || !near(r[4], -0.05) ||
		r[5] != uint64(3) || r[6] != uint64(2) || r[7] != uint64(1) || r[8] != "meaningful_improvement" || r[9] != "exploratory" ||
		r[10] != nil || r[11] != "sec/op" {
		t.Fatalf("comparisons row %v", r)
	}
	an := scanTable(t, p, schema.Analyses, "analysis_id", "recipe", "corpus_commit_id", "parameters_json", "started_at")
	if len(an) != 1 || an[0][0] != rec.AnalysisID || an[0][1] != ComparisonRecipe || an[0][2] != commit ||
		an[0][3] != `{"baseline_run_set":"rs-a","candidate_run_set":"rs-b","confidence_level":0.95,"confidence_method":"bca","metric":"gobench.sec/op","polarity":"lower_is_better","practical_threshold":0.05,"resamples":999,"seed":3,"subject":"Scan"}` ||
		!an[0][4].(time.Time).Equal(inqAt.Add(-time.Second)) {
		t.Fatalf("analyses row %v", an)
	}
	var refs []string
	for _, r := range scanTable(t, p, schema.EvidenceRefs, "owner_type", "owner_id", "ref_type", "ref_id", "relation") {
		refs = append(refs, strings.Join([]string{r[0].(string), r[2].(string), r[3].(string), r[4].(string)}, " "))
		if id := r[1].(string); id != rec.ComparisonID && id != rec.AnalysisID {
			t.Fatalf("reference of %s", id)
		}
	}
	want := []string{"comparison run_set rs-a context", "comparison run_set rs-b context", "comparison analysis " + rec.AnalysisID + " supports",
		"analysis commit " + commit + " input"}
	for _, id := range []string{"r-1", "r-2", "r-3", "r-4", "r-5"} {
		want = append(want, "analysis run "+id+" input")
	}
	if !slices.Equal(refs, want) {
		t.Fatalf("evidence_refs\n%v\nwant\n%v", refs, want)
	}

	// Again, and read at the later commit: the same comparison.
	head, _ := corpus.HeadID(p.WS.Root)
	again := decodeComparison(t, comparisonJSON(t, head, "rs-a", "rs-b", nil))
	out2, err := p.PublishComparisons(ctx, []*Comparison{again, c}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out2.Recorded {
		if out2.Result != nil || !r.AlreadyRecorded || r.ComparisonID != rec.ComparisonID || r.AnalysisID != rec.AnalysisID || r.CorpusCommitID != head {
			t.Fatalf("recorded again: %+v (result %+v)", r, out2.Result)
		}
	}
	if now, _ := corpus.HeadID(p.WS.Root); now != head {
		t.Fatalf("HEAD moved from %s to %s for a comparison already recorded", head, now)
	}

	// Another rule is another comparison; a batch holding it twice and an
	// old one publishes it once. Sets frozen by hand take their
	// experiment from their members' trials; nothing is resampled, so no
	// seed is recorded.
	other := decodeComparison(t, comparisonJSON(t, head, "rs-c", "rs-d", func(m map[string]any) {
		m["confidence_method"], m["seed"], m["resamples"] = "order_statistic", 0, 0
		m["decision"], m["validity"] = "inconclusive", "invalid"
		delete(m, "ratio")
		delete(m, "ratio_low")
		delete(m, "ratio_high")
		m["mismatches"] = []any{map[string]any{"what": "oracle", "detail": "1 of the candidate's trials failed their oracle", "critical": true}}
	}))
	out3, err := p.PublishComparisons(ctx, []*Comparison{other, c, other}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if out3.Result == nil || out3.Result.Tables["comparisons"] != 1 || !out3.Recorded[1].AlreadyRecorded || out3.Recorded[0] != out3.Recorded[2] ||
		out3.Recorded[0].ExperimentID != "e-2" {
		t.Fatalf("mixed batch: %+v, %+v", out3.Recorded, out3.Result)
	}
	for _, r := range scanTable(t, p, schema.Comparisons, "comparison_id", "random_seed", "relative_change") {
		if r[0] == out3.Recorded[0].ComparisonID && (r[1] != nil || r[2] != nil) {
			t.Fatalf("an order-statistic comparison without a ratio: %v", r)
		}
	}
}

// TestPublishComparisonRefusals: a comparison whose commit or run sets
// the workspace does not have is refused, and nothing is published.
func TestPublishComparisonRefusals(t *testing.T) {
	p, commit := comparedWorkspace(t)
	ctx := context.Background()
	missing := "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct {
		name string
		c    []byte
		code fault.Code
	}{
		{"unknown commit", comparisonJSON(t, missing, "rs-a", "rs-b", nil), fault.InvalidArguments},
		{"unknown run set", comparisonJSON(t, commit, "rs-a", "rs-zzz", nil), fault.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.PublishComparisons(ctx, []*Comparison{decodeComparison(t, tc.c)}, time.Time{})
			if !fault.Is(err, tc.code) {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if head, _ := corpus.HeadID(p.WS.Root); head != commit {
				t.Fatalf("HEAD moved to %s", head)
			}
		})
	}
	if _, err := p.PublishComparisons(ctx, []*Comparison{{}}, time.Time{}); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("an undecoded comparison: %v", err)
	}
}

// TestDecodeComparison: what no comparisons row can hold is refused,
// naming the field.
func TestDecodeComparison(t *testing.T) {
	commit := "sha256:" + strings.Repeat("a", 64)
	for _, tc := range []struct {
		name, field string
		edit        func(map[string]any)
	}{
		{"valid", "", nil},
		{"schema", "schema_version", func(m map[string]any) { m["schema_version"] = 2 }},
		{"no baseline", "baseline.run_set_id", func(m map[string]any) { m["baseline"] = map[string]any{} }},
		{"same sets", "candidate.run_set_id", func(m map[string]any) { m["candidate"] = m["baseline"] }},
		{"no metric", "metric", func(m map[string]any) { m["metric"] = " " }},
		{"commit", "corpus_commit_id", func(m map[string]any) { m["corpus_commit_id"] = "HEAD" }},
		{"old vocabulary", "decision", func(m map[string]any) { m["decision"] = "improved" }},
		{"validity", "validity", func(m map[string]any) { m["validity"] = "fine" }},
		{"confidence", "confidence_level", func(m map[string]any) { m["confidence_level"] = 1 }},
		{"negative count", "paired_count", func(m map[string]any) { m["baseline"].(map[string]any)["failed"] = -1 }},
		{"half an interval", "ratio", func(m map[string]any) { delete(m, "ratio_high") }},
		{"zero ratio", "ratio", func(m map[string]any) { m["ratio_low"] = 0 }},
		{"outside its interval", "ratio", func(m map[string]any) { m["ratio"] = 2 }},
		{"a verdict without a ratio", "decision", func(m map[string]any) {
			delete(m, "ratio")
			delete(m, "ratio_low")
			delete(m, "ratio_high")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeComparison(comparisonJSON(t, commit, "rs-a", "rs-b", tc.edit))
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if fe := fault.As(err); err == nil || fe.Code != fault.InvalidArguments || fe.Details["field"] != tc.field {
				t.Fatalf("got %v, want INVALID_ARGUMENTS on %s", err, tc.field)
			}
		})
	}
	for _, b := range []string{``, `[]`, `{"schema_version":1} {}`, `{"schema_version":"1"}`} {
		if _, err := DecodeComparison([]byte(b)); !fault.Is(err, fault.InvalidArguments) {
			t.Errorf("%q: %v", b, err)
		}
	}
}

// FuzzDecodeComparison: a comparison_result is a line of fox-publish's
// input and may be anything: DecodeComparison never panics, and what it
// accepts has an id and canonical parameters.
func FuzzDecodeComparison(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"corpus_commit_id":"sha256:` + strings.Repeat("a", 64) + `","metric":"m","estimand":"e","independent_unit":"block","polarity":"neutral","confidence_level":0.9,"confidence_method":"bca","decision":"inconclusive","validity":"invalid","baseline":{"run_set_id":"a"},"candidate":{"run_set_id":"b"}}`))
	f.Add([]byte(`{"ratio":1e308,"ratio_low":-0,"ratio_high":1}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeComparison(b)
		if err != nil {
			if !fault.Is(err, fault.InvalidArguments) {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		if id, err := c.ID(); err != nil || !strings.HasPrefix(id, "cmp-") {
			t.Fatalf("accepted comparison has no id: %q, %v", id, err)
		}
	})
}
