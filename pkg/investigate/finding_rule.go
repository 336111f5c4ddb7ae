package investigate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workload"
)

// The requirements of SPEC §7's rule for a supported performance finding,
// by the name a refusal gives each in its details.
const (
	NeedValidComparison  = "valid_comparison"
	NeedEstimand         = "declared_estimand"
	NeedThreshold        = "declared_threshold"
	NeedOracle           = "cross_treatment_oracle"
	NeedNoCriticalMisfit = "no_critical_mismatch"
	NeedSupportingRef    = "supporting_evidence"
)

// Requirements lists the rule's requirements in the order a refusal names
// them.
func Requirements() []string {
	return []string{NeedValidComparison, NeedEstimand, NeedThreshold, NeedOracle, NeedNoCriticalMisfit, NeedSupportingRef}
}

// Gaps is what a finding lacks to be supported: per requirement, each
// reason it does not hold (empty: supported).
type Gaps map[string][]string

func (g Gaps) add(need, format string, args ...any) {
	g[need] = append(g[need], fmt.Sprintf(format, args...))
}

// Missing lists the requirements that do not hold, in Requirements order.
func (g Gaps) Missing() []string {
	var out []string
	for _, n := range Requirements() {
		if len(g[n]) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// SupportGaps applies SPEC §7's rule to a finding that claims `supported`
// with references refs, reading the cited comparisons from facts. Every
// finding supported needs a reference that supports it. A performance
// finding needs a comparison that supports it, and every comparison that
// supports any finding must meet the rule: valid, with a decision (not
// inconclusive or descriptive only), from an experiment that declared its
// estimand and a practical threshold before collection (the comparison
// using those), whose trials behind the compared runs all passed a
// cross-treatment equivalence oracle, and with no critical mismatch.
func SupportGaps(f *inquiry.Finding, refs []inquiry.EvidenceRef, facts map[string]*query.ComparisonFacts) Gaps {
	g := Gaps{}
	var comparisons []string
	supports := false
	for _, r := range refs {
		if r.Relation != "supports" {
			continue
		}
		supports = true
		if r.RefType == "comparison" {
			comparisons = append(comparisons, r.RefID)
		}
	}
	sort.Strings(comparisons)
	if !supports {
		g.add(NeedSupportingRef, "no reference supports the claim (cite evidence with relation supports)")
	}
	if f.Kind == inquiry.FindingPerformance && len(comparisons) == 0 {
		g.add(NeedValidComparison, "a performance finding cites the recorded comparison that supports it (--evidence comparison:cmp-…); none does")
	}
	for _, id := range comparisons {
		c := facts[id]
		if c == nil {
			g.add(NeedValidComparison, "comparison %s is not recorded", id)
			continue
		}
		comparisonGaps(g, c)
	}
	return g
}

func comparisonGaps(g Gaps, c *query.ComparisonFacts) {
	id := c.ComparisonID
	switch c.Validity {
	case "valid":
	case "exploratory":
		g.add(NeedValidComparison, "comparison %s is exploratory, not confirmatory", id)
	default:
		g.add(NeedValidComparison, "comparison %s is %s", id, c.Validity)
	}
	if c.Decision == "inconclusive" || c.Decision == "descriptive_only" {
		g.add(NeedValidComparison, "comparison %s decided %s: no evidence of a difference or of its absence", id, c.Decision)
	}
	for _, m := range c.Mismatches {
		if what, _, ok := strings.Cut(m, ": "); ok && strings.HasSuffix(what, "(critical)") {
			g.add(NeedNoCriticalMisfit, "comparison %s: %s", id, m)
		}
	}
	if c.ExperimentID == "" || c.Declared == nil {
		why := "belongs to no experiment"
		if c.ExperimentID != "" {
			why = "names experiment " + c.ExperimentID + ", which is not in the corpus"
		}
		g.add(NeedEstimand, "comparison %s %s, so no estimand was declared before collection", id, why)
		g.add(NeedThreshold, "comparison %s %s, so no practical threshold was declared before collection", id, why)
		g.add(NeedOracle, "comparison %s %s, so no cross-treatment oracle checked its runs", id, why)
		return
	}
	d := c.Declared
	switch {
	case strings.TrimSpace(d.Estimand) == "":
		g.add(NeedEstimand, "experiment %s declared no estimand", c.ExperimentID)
	case d.Estimand != c.Estimand:
		g.add(NeedEstimand, "comparison %s estimates %s; experiment %s declared %s", id, c.Estimand, c.ExperimentID, d.Estimand)
	}
	if d.Metric != c.Metric {
		g.add(NeedEstimand, "comparison %s measures %s; experiment %s declared primary metric %s", id, c.Metric, c.ExperimentID, d.Metric)
	}
	switch {
	case !(d.Threshold > 0):
		g.add(NeedThreshold, "experiment %s declared no practical threshold (0)", c.ExperimentID)
	case d.Threshold != c.Threshold:
		g.add(NeedThreshold, "comparison %s used threshold %g; experiment %s declared %g", id, c.Threshold, c.ExperimentID, d.Threshold)
	}
	oracleGaps(g, c)
}

// oracleGaps: every trial behind the compared runs ran a cross-treatment
// equivalence oracle and passed it (validation passed, the trial not
// oracle_failed, and its equivalence checked against the reference).
func oracleGaps(g Gaps, c *query.ComparisonFacts) {
	id := c.ComparisonID
	if len(c.Trials) == 0 {
		g.add(NeedOracle, "no trial of experiment %s ran the runs comparison %s compares", c.ExperimentID, id)
		return
	}
	if c.RunsWithoutTrial > 0 {
		g.add(NeedOracle, "%d run(s) comparison %s compares were not trials of experiment %s", c.RunsWithoutTrial, id, c.ExperimentID)
	}
	var weak, failed, unchecked, unvalidated []string
	strengths := map[string]bool{}
	for _, t := range c.Trials {
		switch {
		case t.Outcome == inquiry.TrialOracleFailed:
			failed = append(failed, t.TrialID)
		case t.OracleStrength != workload.StrengthCrossTreatment:
			weak = append(weak, t.TrialID)
			s := "no oracle"
			if t.OracleStrength != "" {
				s = "oracle " + t.OracleStrength
			}
			strengths[s] = true
		case strings.HasPrefix(t.ExclusionReason, "cross-treatment equivalence not checked"):
			unchecked = append(unchecked, t.TrialID)
		case t.Outcome == inquiry.TrialSucceeded && t.ValidationStatus != "passed":
			unvalidated = append(unvalidated, t.TrialID)
		}
	}
	if len(weak) > 0 {
		names := make([]string, 0, len(strengths))
		for s := range strengths {
			names = append(names, s)
		}
		sort.Strings(names)
		g.add(NeedOracle, "%d trial(s) of experiment %s ran %s, not a %s oracle (%s)", len(weak), c.ExperimentID,
			strings.Join(names, " or "), workload.StrengthCrossTreatment, few(weak))
	}
	if len(failed) > 0 {
		g.add(NeedOracle, "%d trial(s) of experiment %s failed their oracle (%s)", len(failed), c.ExperimentID, few(failed))
	}
	if len(unchecked) > 0 {
		g.add(NeedOracle, "%d trial(s) of experiment %s were not checked against the reference treatment (%s)", len(unchecked), c.ExperimentID, few(unchecked))
	}
	if len(unvalidated) > 0 {
		g.add(NeedOracle, "%d trial(s) of experiment %s have no passed validation (%s)", len(unvalidated), c.ExperimentID, few(unvalidated))
	}
}

// few names at most three ids and how many more.
func few(ids []string) string {
	sort.Strings(ids)
	if len(ids) <= 3 {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:3], ", ") + fmt.Sprintf(" and %d more", len(ids)-3)
}
