package investigate

import (
	"context"

	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/publish"
)

// ComparisonRecorded is `flameox analyze record-comparison --json` and the
// MCP record_comparison result: the comparison (as compare_run_sets gives
// it) and where it was recorded.
type ComparisonRecorded struct {
	SchemaVersion int                        `json:"schema_version"`
	Comparison    *compare.Comparison        `json:"comparison"`
	Recorded      publish.RecordedComparison `json:"recorded"`
	fault.Next
}

// RecordComparison compares two frozen run sets (compare.Confirm) and
// records the comparison with its evidence references and the commit it
// read (publish.PublishComparisons). The same comparison recorded again is
// reported already recorded, and nothing is published. An invalid
// comparison is recorded too, as evidence that it proves nothing; the
// caller then fails with compare.Exit (COMPARISON_INVALID, exit 6), so
// that no script takes it for proof.
func RecordComparison(ctx context.Context, pub *publish.Publisher, req compare.ConfirmRequest) (*ComparisonRecorded, error) {
	started := now(pub)
	c, err := compare.Confirm(ctx, pub.WS, req)
	if err != nil {
		return nil, err
	}
	pc, err := publish.ComparisonOf(c)
	if err != nil {
		return nil, err
	}
	out, err := pub.PublishComparisons(ctx, []*publish.Comparison{pc}, started)
	if err != nil {
		return nil, err
	}
	res := &ComparisonRecorded{SchemaVersion: 1, Comparison: c, Recorded: out.Recorded[0], Next: fault.Next{NextSteps: []string{}}}
	id := res.Recorded.ComparisonID
	res.Then(fault.Step{Command: "flameox evidence get comparison " + id, Tool: "get_evidence",
		Arguments: map[string]any{"type": "comparison", "id": id}})
	return res, nil
}
