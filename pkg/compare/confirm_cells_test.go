package compare

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
)

// TestPairsWithinBlockCells: an experiment whose blocks hold several
// sizes pairs each trial with the other side's trial of the same size in
// the same block, never another size; every block counts once.
func TestPairsWithinBlockCells(t *testing.T) {
	member := func(block, impl string, n int, v float64) query.SetMember {
		return query.SetMember{RunID: fmt.Sprintf("%s-%s-%d", block, impl, n), TrialOutcome: inquiry.TrialSucceeded,
			ExecutionStatus: "succeeded", ValidationStatus: "passed", SourceStateID: "s", IdentityQuality: "exact",
			EnvironmentID: "e", DefinitionID: "d", Adapter: "gotest", CollectorVersion: "1", ProtocolID: "p", Values: 1,
			Median: &v, Unit: "sec/op", BlockID: block, Factors: fmt.Sprintf(`{"impl":%q,"n":%d}`, impl, n)}
	}
	base := &query.SetEvidence{RunSetID: "rs-b", CorpusCommitID: "c"}
	cand := &query.SetEvidence{RunSetID: "rs-c", CorpusCommitID: "c"}
	for b := range 6 {
		block := fmt.Sprintf("block-%03d", b+1)
		// Reverse the candidate's order, so a pairing by position or by
		// block alone would match different sizes.
		for _, n := range []int{1, 2, 4} {
			base.Members = append(base.Members, member(block, "base", n, 100*float64(n)*(1+0.01*float64(b))))
		}
		for _, n := range []int{4, 2, 1} {
			cand.Members = append(cand.Members, member(block, "cand", n, 90*float64(n)*(1+0.01*float64(b))))
		}
	}
	req, err := ConfirmRequest{Baseline: "rs-b", Candidate: "rs-c", Metric: "gobench.sec/op", Threshold: 0.05}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	c, err := confirmEvidence(req, base, cand)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pairs != 6 || c.Baseline.Paired != 18 || c.Candidate.Paired != 18 || c.Ratio == nil || math.Abs(*c.Ratio-0.9) > 1e-12 ||
		c.Decision != "meaningful_improvement" || c.Validity != Valid {
		t.Fatalf("comparison: %d pairs (%d, %d cells), ratio %v, %s, %s", c.Pairs, c.Baseline.Paired, c.Candidate.Paired, *c.Ratio, c.Decision, c.Validity)
	}
	if !strings.Contains(strings.Join(c.Limitations, "\n"), "blocks hold up to 3 cells (factors [n])") {
		t.Fatalf("limitations: %v", c.Limitations)
	}

	// A size one side lacks in a block is named, not paired with another.
	cand.Members = cand.Members[1:] // block-001's n=4
	c, err = confirmEvidence(req, base, cand)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pairs != 6 || c.Baseline.Paired != 17 || math.Abs(*c.Ratio-0.9) > 1e-12 || c.Validity != Exploratory ||
		len(c.Mismatches) != 1 || !strings.Contains(c.Mismatches[0].Detail, "[block-001 (n=4)]") {
		t.Fatalf("comparison: %d pairs, ratio %v, %s, %+v", c.Pairs, *c.Ratio, c.Validity, c.Mismatches)
	}
}
