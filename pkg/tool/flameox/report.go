package flameox

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
)

// reportCommands are evidence summarize.
func reportCommands() []*Command {
	return []*Command{
		{Name: "evidence summarize", Args: "INVESTIGATION_ID", Summary: "an investigation as a report a reviewer can check: question, hypotheses, experiment designs, every trial's outcome, comparisons, analyses and findings, with the ids behind each number (--format markdown or json)",
			MCPTool: "summarize_investigation", Run: evidenceSummarize},
	}
}

func evidenceSummarize(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("evidence summarize", "INVESTIGATION_ID [--format markdown|json]")
	format := fs.String("format", "markdown", "output: markdown (a report), or json (as --json)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("evidence summarize needs exactly one INVESTIGATION_ID")
	}
	if err := c.outputFormat(*format, "markdown"); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.SummarizeInvestigation(ctx, ws, fs.Arg(0))
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { renderReport(w, res) })
}

// md escapes text for a Markdown table cell or line: terminal escapes
// neutralized (cli.Safe), pipes and newlines kept from breaking the table.
func md(s string) string {
	s = cli.Safe(s)
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

func renderReport(w io.Writer, r *query.InvestigationReport) {
	inv := r.Investigation
	fmt.Fprintf(w, "# Investigation: %s\n\n", md(inv.Question))
	fmt.Fprintf(w, "- investigation `%s`, %s, opened %s\n", inv.InvestigationID, md(inv.Status), inv.CreatedAt.Format("2006-01-02 15:04:05Z"))
	if inv.Symptom != "" {
		fmt.Fprintf(w, "- symptom: %s\n", md(inv.Symptom))
	}
	fmt.Fprintf(w, "- corpus commit `%s`: every number below is read there\n", r.CorpusCommitID)

	fmt.Fprintf(w, "\n## Hypotheses\n\n")
	if len(r.Hypotheses) == 0 {
		fmt.Fprintln(w, "None recorded.")
	}
	for _, h := range r.Hypotheses {
		fmt.Fprintf(w, "- **%s** (`%s`, revision %d, %s, %s)\n", md(h.Claim), h.HypothesisID, h.Revision, h.Assessment, h.Lifecycle)
		if h.Prediction != "" {
			fmt.Fprintf(w, "  - prediction: %s\n", md(h.Prediction))
		}
		if h.DiscriminatingCondition != "" {
			fmt.Fprintf(w, "  - discriminating condition: %s\n", md(h.DiscriminatingCondition))
		}
	}

	for _, e := range r.Experiments {
		fmt.Fprintf(w, "\n## Experiment `%s`\n\n", e.ExperimentID)
		fmt.Fprintf(w, "- decision rule: %s of `%s` (%s), practical threshold %g, confidence %g\n", md(e.Estimand), md(e.PrimaryMetric),
			e.Polarity, e.PracticalThreshold, e.ConfidenceLevel)
		fmt.Fprintf(w, "- design `%s`, seed %d, stopping rule `%s`\n", e.DesignID, e.RandomSeed, md(string(e.StoppingRule)))
		fmt.Fprintf(w, "- workload definition `%s`, measurement protocol `%s`\n", e.WorkloadDefinition, e.ProtocolID)
		if e.HypothesisID != "" {
			fmt.Fprintf(w, "- tests hypothesis `%s`\n", e.HypothesisID)
		}
		fmt.Fprintf(w, "\n| variant | parameters | %s |\n|---|---|%s\n", strings.Join(inquiry.TerminalOutcomes(), " | "),
			strings.Repeat("---|", len(inquiry.TerminalOutcomes())))
		for _, v := range e.Variants {
			cells := []string{md(v.Name), "`" + md(v.Parameters) + "`"}
			for _, o := range inquiry.TerminalOutcomes() {
				cells = append(cells, fmt.Sprint(v.Outcomes[o]))
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
		if len(e.RunSets) > 0 {
			fmt.Fprintln(w)
			for _, rs := range e.RunSets {
				fmt.Fprintf(w, "- run set `%s`: %d runs, %s\n", rs.RunSetID, rs.MemberCount, md(string(rs.Selection)))
			}
		}
		fmt.Fprintf(w, "\nTrials (%d", e.TrialsTotal)
		if e.TrialsTruncated {
			fmt.Fprintf(w, "; the first %d listed", len(e.Trials))
		}
		fmt.Fprintf(w, "):\n\n| block | order | variant | outcome | run | why |\n|---|---|---|---|---|---|\n")
		for _, t := range e.Trials {
			order := "-"
			if t.OrderInBlock != nil {
				order = fmt.Sprint(*t.OrderInBlock)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", md(orDash(t.BlockID)), order, md(t.Variant), t.Outcome, orDash(t.RunID), md(t.ExclusionReason))
		}
	}

	fmt.Fprintf(w, "\n## Comparisons\n\n")
	if len(r.Comparisons) == 0 {
		fmt.Fprintln(w, "None recorded.")
	} else {
		fmt.Fprintln(w, "| comparison | metric | change | interval | decision | validity | pairs | baseline (attempted/eligible/failed/excluded) | candidate |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	}
	for _, c := range r.Comparisons {
		change, ci := "-", "-"
		if c.RelativeChange != nil {
			change = fmt.Sprintf("%+.2f%%", *c.RelativeChange*100)
		}
		if c.ConfidenceLow != nil && c.ConfidenceHigh != nil && c.ConfidenceLevel != nil {
			ci = fmt.Sprintf("[%+.2f%%, %+.2f%%] at %g (%s)", *c.ConfidenceLow*100, *c.ConfidenceHigh*100, *c.ConfidenceLevel, md(c.Method))
		}
		pairs := "-"
		if c.Pairs != nil {
			pairs = fmt.Sprint(*c.Pairs)
		}
		fmt.Fprintf(w, "| `%s` | `%s` %s | %s | %s | %s | %s | %s | `%s` %d/%d/%d/%d | `%s` %d/%d/%d/%d |\n", c.ComparisonID, md(c.Metric), md(c.Polarity),
			change, ci, c.Decision, c.Validity, pairs, c.BaselineRunSetID, c.BaselineAttempted, c.BaselineEligible, c.BaselineFailed,
			c.BaselineExcluded, c.CandidateRunSetID, c.CandidateAttempted, c.CandidateEligible, c.CandidateFailed, c.CandidateExcluded)
	}
	for _, c := range r.Comparisons {
		for _, m := range c.Mismatches {
			fmt.Fprintf(w, "- `%s` mismatch: %s\n", c.ComparisonID, md(m))
		}
	}

	fmt.Fprintf(w, "\n## Analyses\n\n")
	if len(r.Analyses) == 0 {
		fmt.Fprintln(w, "None recorded.")
	}
	for _, a := range r.Analyses {
		fmt.Fprintf(w, "- **%s** %s `%s` over %d runs at `%s`: parameters `%s`, result digest `%s`", md(a.Recipe), md(a.RecipeVersion),
			a.AnalysisID, a.InputRuns, a.CorpusCommitID, md(string(a.Parameters)), a.ResultDigest)
		if a.ResultArtifactID != "" {
			fmt.Fprintf(w, ", result artifact `%s`", a.ResultArtifactID)
		}
		fmt.Fprintln(w)
		for _, l := range a.Limitations {
			fmt.Fprintf(w, "  - limitation: %s\n", md(l))
		}
	}

	fmt.Fprintf(w, "\n## Findings\n\n")
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "None recorded.")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "- **%s** (`%s`, revision %d): %s\n", md(f.Title), f.FindingID, f.Revision, md(f.Claim))
		fmt.Fprintf(w, "  - %s, evidence level %s, confidence %s, %s, %s\n", md(f.Kind), f.EvidenceLevel, f.Confidence, f.Assessment, f.Lifecycle)
		refs := make([]string, 0, len(f.Evidence))
		for _, e := range f.Evidence {
			refs = append(refs, fmt.Sprintf("%s `%s` (%s)", e.Type, e.ID, e.Relation))
		}
		sort.Strings(refs)
		if len(refs) > 0 {
			fmt.Fprintf(w, "  - cites %s\n", strings.Join(refs, ", "))
		}
		for _, l := range f.Limitations {
			fmt.Fprintf(w, "  - limitation: %s\n", md(l))
		}
	}
	if len(r.Limitations) > 0 {
		fmt.Fprintf(w, "\n## Limitations\n\n")
		for _, l := range r.Limitations {
			fmt.Fprintf(w, "- %s\n", md(l))
		}
	}
}
