package chart

import (
	"bytes"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/query"
)

const (
	sampleQuestion = `Is <script>alert("x")</script> & </h1><b>scan faster?`
	sampleRun      = "0190d7a0-1111-7222-8333-444455556666"
	citedRun       = "0190d7a0-5555-7222-8333-444455556666"
)

func u64(x uint64) *uint64 { return &x }

// sampleReport is an investigation as query.SummarizeInvestigation
// returns it, with hostile text where a person typed it.
func sampleReport() *query.InvestigationReport {
	base, cand := "rs-"+strings.Repeat("a", 32), "rs-"+strings.Repeat("b", 32)
	return &query.InvestigationReport{SchemaVersion: 1, CorpusCommitID: strings.Repeat("d", 64),
		Investigation: query.InvestigationSummary{InvestigationID: "0190d7a0-aaaa-7bbb-8ccc-ddddeeeeffff", Question: sampleQuestion,
			Status: "open", CreatedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Symptom: "<img src=x onerror=alert(2)>"},
		Hypotheses: []query.HypothesisSummary{{HypothesisID: "0190d7a0-2222-7222-8333-444455556666",
			HypothesisRevision: query.HypothesisRevision{Revision: 1, Claim: "cand <i>scans</i> faster", Prediction: "10% lower"}}},
		Experiments: []query.ExperimentReport{{ExperimentID: "0190d7a0-3333-7222-8333-444455556666", PrimaryMetric: "gobench.sec/op",
			Polarity: "lower_is_better", Estimand: "median_paired_log_ratio", PracticalThreshold: 0.05, ConfidenceLevel: 0.95,
			Variants: []query.ExperimentVariant{{Name: "base", Outcomes: map[string]int{"succeeded": 6}}, {Name: "cand", Outcomes: map[string]int{"succeeded": 5, "failed": 1}}},
			RunSets:  []query.RunSetSummary{{RunSetID: base, MemberCount: 6}, {RunSetID: cand, MemberCount: 6}},
			Trials:   []query.ExperimentTrial{{TrialID: "t1", BlockID: "block-001", Variant: "base", RunID: sampleRun, Outcome: "succeeded"}}, TrialsTotal: 12}},
		Comparisons: []query.RecordedComparison{{ComparisonID: "cmp-" + strings.Repeat("e", 32), BaselineRunSetID: base, CandidateRunSetID: cand,
			Metric: "gobench.sec/op", RelativeChange: f(-0.0987654321), ConfidenceLow: f(-0.12), ConfidenceHigh: f(-0.0712345),
			ConfidenceLevel: f(0.95), Decision: "meaningful_improvement", Validity: "valid", Mismatches: []string{"<b>none</b>"}, Pairs: u64(6)}},
		Findings: []query.ReportFinding{{FindingID: "0190d7a0-4444-7222-8333-444455556666", Title: "faster</p><script>x()</script>", Claim: "10% faster",
			Evidence: []query.ReportRef{{Type: "run", ID: citedRun, Relation: "supports"}, {Type: "comparison", ID: "cmp-" + strings.Repeat("e", 32), Relation: "supports"}}}},
	}
}

var (
	idAttr   = regexp.MustCompile(`\sid="([^"]*)"`)
	hrefAttr = regexp.MustCompile(`href="#([^"]*)"`)
	numAttr  = regexp.MustCompile(`data-field="([a-z_]+)" href="#([^"]*)" data-value="([^"]*)"`)
)

func TestPageEscapesText(t *testing.T) {
	b, err := Page(sampleReport(), Pictures{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "<img", "<i>", "<b>", "onerror=alert"} {
		if bytes.Contains(b, []byte(bad)) && !(bad == "onerror=alert" && bytes.Contains(b, []byte("&lt;img src=x onerror=alert(2)&gt;"))) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	for _, want := range []string{
		`<h1 id="question">Is &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;/h1&gt;&lt;b&gt;scan faster?</h1>`,
		`<title>Is &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;/h1&gt;&lt;b&gt;scan faster? · flameox report</title>`,
		`faster&lt;/p&gt;&lt;script&gt;x()&lt;/script&gt;`,
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestPageNumbers: every number of the comparisons table is the query's
// value exactly, and links to the comparison's row of ids; every link
// resolves to an id of the page.
func TestPageNumbers(t *testing.T) {
	r := sampleReport()
	b, err := Page(r, Pictures{Experiments: []ExperimentPictures{{Effects: []Effect{{Name: "cand / base", Ratio: 0.9, Lo: 0.88, Hi: 0.93, Decision: "meaningful_improvement"}},
		EffectSets: [][2]string{{r.Comparisons[0].BaselineRunSetID, r.Comparisons[0].CandidateRunSetID}}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Comparisons[0]
	want := map[string]float64{"relative_change": *c.RelativeChange, "confidence_low": *c.ConfidenceLow,
		"confidence_high": *c.ConfidenceHigh, "complete_pair_n": float64(*c.Pairs)}
	got := map[string]float64{}
	for _, m := range numAttr.FindAllStringSubmatch(string(b), -1) {
		if m[2] != c.ComparisonID {
			t.Errorf("%s links to %q, not its comparison %s", m[1], m[2], c.ComparisonID)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
		got[m[1]] = v
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s on the page is %v, the query says %v", k, got[k], v)
		}
	}
	if !bytes.Contains(b, []byte(`>-9.88%</a>`)) {
		t.Error("the relative change is not printed as -9.88%")
	}
	ids := map[string]int{}
	for _, m := range idAttr.FindAllStringSubmatch(string(b), -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q appears %d times", id, n)
		}
	}
	links := hrefAttr.FindAllStringSubmatch(string(b), -1)
	if len(links) < 10 {
		t.Fatalf("%d links on the page", len(links))
	}
	for _, m := range links {
		id, err := url.PathUnescape(m[1])
		if err != nil || ids[id] == 0 {
			t.Errorf("link #%s goes nowhere", m[1])
		}
	}
	for _, id := range []string{sampleRun, citedRun, c.ComparisonID, c.BaselineRunSetID, r.Investigation.InvestigationID, r.Findings[0].FindingID} {
		if ids[id] != 1 {
			t.Errorf("no row of ids for %s", id)
		}
	}
}

func TestScriptHash(t *testing.T) {
	// The hash of CSP's script-src is over the script element's text.
	svg := []byte("<svg><script><![CDATA[\nalert(1)]]></script></svg>")
	if got, want := scriptHash(svg), "sha256-"; !strings.HasPrefix(got, want) || scriptHash([]byte("<svg/>")) != "" {
		t.Errorf("scriptHash = %q", got)
	}
}
