package flameox

import (
	"context"
	"fmt"
	"io"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/investigate"
)

// comparisonRecordCommands are analyze record-comparison.
func comparisonRecordCommands() []*Command {
	return []*Command{
		{Name: "analyze record-comparison", Args: "BASE_SET CAND_SET --metric M", Summary: "compare two frozen run sets as experiment compare does and record the comparison (comparisons, analyses and evidence_refs rows) with the commit it read; the same comparison again is reported already recorded", MCPTool: "record_comparison", Run: analyzeRecordComparison},
	}
}

// analyzeRecordComparison records a comparison, then fails as experiment
// compare does when it is invalid (exit 6): the invalid comparison is kept
// as evidence (SPEC §7 keeps every attempt), and its exit status keeps any
// script from taking it for proof (SPEC §9, criterion 8).
func analyzeRecordComparison(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("analyze record-comparison", "BASELINE_SET CANDIDATE_SET --metric M [--subject S] [--polarity P] [--threshold T] [--confidence C] [--method M] [--seed N] [--resamples N]")
	var req compare.ConfirmRequest
	req.Flags(fs)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 || req.Metric == "" {
		return cli.Usagef("analyze record-comparison needs BASELINE_SET, CANDIDATE_SET and --metric M")
	}
	req.Baseline, req.Candidate = fs.Arg(0), fs.Arg(1)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := investigate.RecordComparison(ctx, c.publisher(ws), req)
	if err != nil {
		return err
	}
	if err := c.emit(res, func(w io.Writer) { renderComparisonRecorded(w, res) }); err != nil {
		return err
	}
	return compare.Exit(res.Comparison)
}

func renderComparisonRecorded(w io.Writer, res *investigate.ComparisonRecorded) {
	renderComparison(w, res.Comparison)
	r := res.Recorded
	again := ""
	if r.AlreadyRecorded {
		again = " (already recorded: nothing published)"
	}
	fmt.Fprintf(w, "recorded     comparison %s (analysis %s) in commit %s%s\n", r.ComparisonID, r.AnalysisID, corpus.Short(r.CorpusCommitID), again)
	if r.ExperimentID != "" {
		fmt.Fprintf(w, "experiment   %s\n", r.ExperimentID)
	}
	fmt.Fprintf(w, "read at      commit %s\n", corpus.Short(res.Comparison.CorpusCommitID))
}
