package flameox

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/workspace"
)

// executionCommands are analyze execution.
func executionCommands() []*Command {
	return []*Command{{Name: "analyze execution", Args: "RUN",
		Summary: "what ran: coverage per file, the SDK observations and configuration facts, the phases; --against RUN2: what was added, removed or changed (coverage is not causality)",
		MCPTool: "analyze_execution", Run: analyzeExecution}}
}

func analyzeExecution(ctx context.Context, c *Context, args []string) error {
	var req analysis.ExecutionRequest
	var res *analysis.ExecutionResult
	return recipeCmd{name: "analyze execution", records: "its commit and input runs", positional: 1, flags: req.Flags,
		synopsis:  "RUN [--against RUN2] [--limit N] [--format text|markdown|json] [--record]",
		wrongArgs: "analyze execution needs one RUN",
		run: func(ctx context.Context, ws *workspace.Workspace, pos []string) (analysis.Recordable, error) {
			req.Input = pos[0]
			var err error
			res, err = analysis.Execution(ctx, ws, req)
			return res, err
		},
		emit: func(rec *analysis.Recorded, md bool) error {
			out := analysis.ExecutionOutput{ExecutionResult: res, Recorded: rec}
			return c.emit(out, func(w io.Writer) { renderExecution(w, &out, md) })
		}}.exec(ctx, c, args)
}

// factValues prints a fact's values compactly: value (×count).
func factValues(vs []analysis.FactValue) string {
	if len(vs) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		s := cli.Name(string(v.Value))
		if v.Count > 1 {
			s += fmt.Sprintf(" (x%d)", v.Count)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func renderExecution(w io.Writer, out *analysis.ExecutionOutput, md bool) {
	res := out.ExecutionResult
	line := func(label, text string) {
		if md {
			fmt.Fprintf(w, "- **%s** %s\n", label, text)
			return
		}
		fmt.Fprintf(w, "%-12s %s\n", label, text)
	}
	if md {
		fmt.Fprintf(w, "### flameox analyze execution: `%s`", res.Base.RunID)
		if res.Candidate != nil {
			fmt.Fprintf(w, " against `%s`", res.Candidate.RunID)
		}
		fmt.Fprint(w, "\n\n")
	}
	line("commit", corpus.Short(res.CorpusCommitID))
	side := func(label string, s *analysis.ExecutionSide) {
		text := fmt.Sprintf("run %s: %d fact(s), %d phase(s)", s.RunID, s.FactsTotal, len(s.Phases))
		if cv := s.Coverage; cv != nil {
			text += fmt.Sprintf(", coverage of %d file(s)", cv.Files)
			if cv.PercentCovered != nil {
				text += fmt.Sprintf(" (%.2f%% covered)", *cv.PercentCovered)
			}
		}
		line(label, text)
	}
	if res.Candidate == nil {
		side("run", &res.Base)
		for _, f := range res.Base.Facts {
			line("fact", fmt.Sprintf("%s %s%s = %s", f.Kind, cli.Name(f.Name), phaseSuffix(f.Context), factValues(f.Values)))
			for _, v := range f.Values {
				line("", "observation "+v.ObservationID)
			}
		}
		if res.Base.FactsTotal > len(res.Base.Facts) {
			line("facts", fmt.Sprintf("%d of %d shown (--limit)", len(res.Base.Facts), res.Base.FactsTotal))
		}
		for _, p := range res.Base.Phases {
			line("phase", fmt.Sprintf("%s: %s in %d call(s)", cli.Name(p.Name), analysis.HumanDuration(p.TotalNs), p.Count))
		}
		for _, f := range res.Base.Files {
			line("file", fmt.Sprintf("%s: %d of %d %ss executed, %d of %d arcs", cli.Name(f.File), f.Executed, f.Units, f.Unit, f.ArcsExecuted, f.Arcs))
		}
	} else {
		side("base", &res.Base)
		side("candidate", res.Candidate)
		ch := res.Changes
		if ch.Identical {
			line("changes", "none: the same facts and the same lines ran")
		}
		for _, f := range ch.Facts {
			line(f.Status, fmt.Sprintf("%s %s%s: %s -> %s", f.Kind, cli.Name(f.Name), phaseSuffix(f.Context), factValues(f.Base), factValues(f.Candidate)))
			// What a finding cites (--evidence observation:ID).
			for _, v := range f.Candidate {
				line("", "candidate's observation "+v.ObservationID)
			}
		}
		for _, f := range ch.Files {
			var parts []string
			if len(f.NowExecuted) > 0 {
				parts = append(parts, "now runs "+rangeList(f.NowExecuted))
			}
			if len(f.NoLongerExecuted) > 0 {
				parts = append(parts, "no longer runs "+rangeList(f.NoLongerExecuted))
			}
			if f.ArcsAdded+f.ArcsRemoved > 0 {
				parts = append(parts, fmt.Sprintf("arcs +%d -%d", f.ArcsAdded, f.ArcsRemoved))
			}
			line("file", fmt.Sprintf("%s (%s): %s", cli.Name(f.File), f.Status, strings.Join(parts, "; ")))
		}
		for _, p := range ch.Phases {
			line("phase", fmt.Sprintf("%s: %s -> %s", cli.Name(p.Name), analysis.HumanDuration(p.BaseNs), analysis.HumanDuration(p.CandNs)))
		}
		if ch.Truncated {
			line("truncated", fmt.Sprintf("%d of %d fact changes, %d of %d file changes shown (--limit)", len(ch.Facts), ch.FactsTotal, len(ch.Files), ch.FilesTotal))
		}
	}
	for _, l := range res.Limitations {
		line("limitation", cli.Safe(l))
	}
	if out.Recorded != nil {
		line("recorded", fmt.Sprintf("as analysis %s in commit %s", out.Recorded.AnalysisID, corpus.Short(out.Recorded.CorpusCommitID)))
	}
}

func phaseSuffix(ctx string) string {
	if ctx == "" {
		return ""
	}
	return " [" + cli.Name(ctx) + "]"
}

func rangeList(rs []analysis.LineRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}
