package compare

import (
	"context"
	"encoding/json"

	"github.com/flameox/flameox/pkg/experiment"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/workspace"
)

// VariantComparison is one variant's confirmatory comparison against the
// experiment's reference variant (its first), on the declared rule.
type VariantComparison struct {
	Baseline   string      `json:"baseline_variant"`
	Candidate  string      `json:"candidate_variant"`
	Comparison *Comparison `json:"comparison,omitempty"`
	// Error is why there is no comparison (a structured fault's message),
	// e.g. a variant none of whose runs measured the metric.
	Error string `json:"error,omitempty"`
}

// Declared compares every variant's run set with the first variant's, on
// the decision rule the experiment declared (primary metric, polarity,
// practical threshold, confidence level) and the default interval. sets
// are the experiment's run sets in the variants' declared order, as
// capture.VariantRunSets freezes them. A comparison that cannot be made
// is reported on its row, not as an error: the others still stand.
func Declared(ctx context.Context, ws *workspace.Workspace, plan *experiment.Plan, sets []inquiry.RunSet) ([]VariantComparison, error) {
	if plan == nil || plan.PrimaryMetric == "" {
		return nil, fault.New(fault.InvalidArguments, "the experiment declares no primary metric to compare on")
	}
	if len(sets) < 2 {
		return []VariantComparison{}, nil
	}
	label := func(rs inquiry.RunSet) string {
		var sel struct {
			Label string `json:"label"`
		}
		_ = json.Unmarshal([]byte(rs.SelectionJSON), &sel)
		if sel.Label == "" {
			return rs.RunSetID
		}
		return sel.Label
	}
	out := make([]VariantComparison, 0, len(sets)-1)
	for _, rs := range sets[1:] {
		vc := VariantComparison{Baseline: label(sets[0]), Candidate: label(rs)}
		c, err := Confirm(ctx, ws, ConfirmRequest{Baseline: sets[0].RunSetID, Candidate: rs.RunSetID, Metric: plan.PrimaryMetric,
			Polarity: plan.Polarity, Threshold: plan.PracticalThreshold, Confidence: plan.ConfidenceLevel})
		switch {
		case err == nil:
			vc.Comparison = c
		case ctx.Err() != nil, fault.Is(err, fault.InternalError), fault.Is(err, fault.StorageFull):
			return nil, err
		default:
			vc.Error = err.Error()
		}
		out = append(out, vc)
	}
	return out, nil
}
