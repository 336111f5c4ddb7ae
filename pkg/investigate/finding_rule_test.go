package investigate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workload"
)

// good is a comparison that meets every requirement.
func good() *query.ComparisonFacts {
	trial := func(id, run string) query.ComparedTrial {
		return query.ComparedTrial{TrialID: id, RunID: run, Outcome: inquiry.TrialSucceeded, ValidationStatus: "passed",
			OracleStrength: workload.StrengthCrossTreatment}
	}
	return &query.ComparisonFacts{ComparisonID: "cmp-1", ExperimentID: "exp-1", Validity: "valid", Decision: "meaningful_improvement",
		Metric: "gobench.sec/op", Estimand: "median_paired_log_ratio", Threshold: 0.05, Mismatches: []string{"blocks: note"},
		Declared: &query.DeclaredExperiment{Metric: "gobench.sec/op", Estimand: "median_paired_log_ratio", Threshold: 0.05},
		Trials:   []query.ComparedTrial{trial("tr-1", "r-1"), trial("tr-2", "r-2")}}
}

// TestSupportGaps: each way a comparison falls short of SPEC §7's rule is
// named under its requirement; a comparison that meets them all leaves
// no gap.
func TestSupportGaps(t *testing.T) {
	supports := []inquiry.EvidenceRef{{RefType: "comparison", RefID: "cmp-1", Relation: "supports"}}
	for _, tc := range []struct {
		name string
		kind string
		refs []inquiry.EvidenceRef
		edit func(*query.ComparisonFacts)
		want map[string]string // requirement -> a word of its reason
	}{
		{"supported", "", nil, func(*query.ComparisonFacts) {}, nil},
		{"invalid", "", nil, func(c *query.ComparisonFacts) { c.Validity = "invalid" }, map[string]string{NeedValidComparison: "is invalid"}},
		{"exploratory", "", nil, func(c *query.ComparisonFacts) { c.Validity = "exploratory" }, map[string]string{NeedValidComparison: "exploratory"}},
		{"inconclusive", "", nil, func(c *query.ComparisonFacts) { c.Decision = "inconclusive" }, map[string]string{NeedValidComparison: "decided inconclusive"}},
		{"descriptive", "", nil, func(c *query.ComparisonFacts) { c.Decision = "descriptive_only" }, map[string]string{NeedValidComparison: "descriptive_only"}},
		{"no difference is a decision", "", nil, func(c *query.ComparisonFacts) { c.Decision = "no_meaningful_difference" }, nil},
		{"critical mismatch", "", nil, func(c *query.ComparisonFacts) {
			c.Validity = "invalid"
			c.Mismatches = append(c.Mismatches, "environment (critical): the candidate ran on another host")
		}, map[string]string{NeedValidComparison: "invalid", NeedNoCriticalMisfit: "environment (critical): the candidate ran on another host"}},
		{"no experiment", "", nil, func(c *query.ComparisonFacts) { c.ExperimentID, c.Declared = "", nil },
			map[string]string{NeedEstimand: "no experiment", NeedThreshold: "no experiment", NeedOracle: "no experiment"}},
		{"experiment missing", "", nil, func(c *query.ComparisonFacts) { c.Declared = nil },
			map[string]string{NeedEstimand: "not in the corpus", NeedThreshold: "not in the corpus", NeedOracle: "not in the corpus"}},
		{"no estimand", "", nil, func(c *query.ComparisonFacts) { c.Declared.Estimand = "" }, map[string]string{NeedEstimand: "declared no estimand"}},
		{"other estimand", "", nil, func(c *query.ComparisonFacts) { c.Estimand = "mean_ratio" }, map[string]string{NeedEstimand: "estimates mean_ratio"}},
		{"other metric", "", nil, func(c *query.ComparisonFacts) { c.Metric = "wall" }, map[string]string{NeedEstimand: "measures wall"}},
		{"no threshold", "", nil, func(c *query.ComparisonFacts) { c.Declared.Threshold = 0 }, map[string]string{NeedThreshold: "no practical threshold"}},
		{"other threshold", "", nil, func(c *query.ComparisonFacts) { c.Threshold = 0.01 }, map[string]string{NeedThreshold: "used threshold 0.01"}},
		{"no trials", "", nil, func(c *query.ComparisonFacts) { c.Trials = nil }, map[string]string{NeedOracle: "no trial"}},
		{"runs without trial", "", nil, func(c *query.ComparisonFacts) { c.RunsWithoutTrial = 2 }, map[string]string{NeedOracle: "2 run(s)"}},
		{"weaker oracle", "", nil, func(c *query.ComparisonFacts) { c.Trials[1].OracleStrength = workload.StrengthExecution },
			map[string]string{NeedOracle: "ran oracle execution_check, not a cross_treatment_equivalence oracle (tr-2)"}},
		{"no oracle", "", nil, func(c *query.ComparisonFacts) { c.Trials[0].OracleStrength = "" }, map[string]string{NeedOracle: "ran no oracle, not a"}},
		{"oracle failed", "", nil, func(c *query.ComparisonFacts) { c.Trials[0].Outcome = inquiry.TrialOracleFailed },
			map[string]string{NeedOracle: "1 trial(s) of experiment exp-1 failed their oracle (tr-1)"}},
		{"oracle not checked", "", nil, func(c *query.ComparisonFacts) {
			c.Trials[1].ExclusionReason = "cross-treatment equivalence not checked: the base trial of b1 did not succeed"
		}, map[string]string{NeedOracle: "not checked against the reference"}},
		{"validation not passed", "", nil, func(c *query.ComparisonFacts) { c.Trials[0].ValidationStatus = "not_requested" },
			map[string]string{NeedOracle: "no passed validation"}},
		{"performance without a comparison", inquiry.FindingPerformance,
			[]inquiry.EvidenceRef{{RefType: "analysis", RefID: "a-1", Relation: "supports"}}, func(*query.ComparisonFacts) {},
			map[string]string{NeedValidComparison: "cites the recorded comparison"}},
		{"comparison only as context", "", []inquiry.EvidenceRef{{RefType: "comparison", RefID: "cmp-1", Relation: "context"}},
			func(*query.ComparisonFacts) {}, map[string]string{NeedValidComparison: "cites the recorded comparison", NeedSupportingRef: "no reference supports"}},
		{"correctness on an analysis", inquiry.FindingCorrectness,
			[]inquiry.EvidenceRef{{RefType: "analysis", RefID: "a-1", Relation: "supports"}}, func(*query.ComparisonFacts) {}, nil},
		{"unrecorded comparison", "", []inquiry.EvidenceRef{{RefType: "comparison", RefID: "cmp-2", Relation: "supports"}},
			func(*query.ComparisonFacts) {}, map[string]string{NeedValidComparison: "cmp-2 is not recorded"}},
	} {
		c := good()
		tc.edit(c)
		f := finding(tc.kind)
		refs := tc.refs
		if refs == nil {
			refs = supports
		}
		g := SupportGaps(f, refs, map[string]*query.ComparisonFacts{"cmp-1": c})
		var wantNames []string
		for _, n := range Requirements() {
			if _, ok := tc.want[n]; ok {
				wantNames = append(wantNames, n)
			}
		}
		if got := g.Missing(); !reflect.DeepEqual(got, wantNames) {
			t.Errorf("%s: missing %v, want %v (%v)", tc.name, got, wantNames, g)
			continue
		}
		for n, word := range tc.want {
			if why := strings.Join(g[n], "; "); !strings.Contains(why, word) {
				t.Errorf("%s: %s says %q, want it to name %q", tc.name, n, why, word)
			}
		}
	}
}

func finding(kind string) *inquiry.Finding {
	if kind == "" {
		kind = inquiry.FindingPerformance
	}
	return &inquiry.Finding{FindingID: "fnd-1", Kind: kind, Assessment: inquiry.Supported}
}

// TestUnsupportedNamesEachPiece: the refusal's code, exit status and
// details name every requirement that does not hold, with why.
func TestUnsupportedNamesEachPiece(t *testing.T) {
	c := good()
	c.Validity, c.Trials[0].Outcome = "invalid", inquiry.TrialOracleFailed
	c.Declared.Threshold = 0
	c.Mismatches = []string{"oracle (critical): 1 of the candidate's trials failed their oracle"}
	g := SupportGaps(finding(""), []inquiry.EvidenceRef{{RefType: "comparison", RefID: "cmp-1", Relation: "supports"}}, map[string]*query.ComparisonFacts{"cmp-1": c})
	e := asFault(unsupported(finding(""), g))
	if e.Code != "COMPARISON_INVALID" || e.ExitCode() != 6 {
		t.Fatalf("refusal %v, exit %d", e, e.ExitCode())
	}
	if e.Details["missing"] != "valid_comparison,declared_threshold,cross_treatment_oracle,no_critical_mismatch" {
		t.Fatalf("missing %q", e.Details["missing"])
	}
	for _, n := range []string{NeedValidComparison, NeedThreshold, NeedOracle, NeedNoCriticalMisfit} {
		if e.Details[n] == "" || !strings.Contains(e.Message, n) {
			t.Errorf("%s not named: %v", n, e)
		}
	}
}

func asFault(err error) *fault.Error { return fault.As(err) }
