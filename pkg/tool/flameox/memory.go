package flameox

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/workspace"
)

// memoryCommands are analyze memory.
func memoryCommands() []*Command {
	return []*Command{{Name: "analyze memory", Args: "RUN_ARTIFACT_OR_RUN_SET",
		Summary: "why memory grows: the figures with the concept behind each (peak heap, retained at end, total allocated, allocations, peak RSS), the top retained, peak and allocating stacks, the heap over time by phase, the collector's limitations; --against: what grew, by stack, and for two run sets whether it is meaningful",
		MCPTool: "analyze_memory", Run: analyzeMemory}}
}

func analyzeMemory(ctx context.Context, c *Context, args []string) error {
	var req compare.MemoryRequest
	var out *compare.MemoryReport
	return recipeCmd{name: "analyze memory", records: "its commit and inputs", positional: 1, flags: req.Flags,
		synopsis:  "RUN_ARTIFACT_OR_RUN_SET [--against CANDIDATE] [--limit N] [--points N] [--metric M] [--threshold T] [--format text|markdown|json] [--record]",
		wrongArgs: "analyze memory needs one RUN_ARTIFACT_OR_RUN_SET",
		run: func(ctx context.Context, ws *workspace.Workspace, pos []string) (analysis.Recordable, error) {
			req.Input = pos[0]
			var err error
			if out, err = compare.Memory(ctx, ws, req); err != nil {
				return nil, err
			}
			return out.MemoryResult, nil
		},
		emit: func(rec *analysis.Recorded, md bool) error {
			out.Recorded = rec
			return c.emit(out, func(w io.Writer) { renderMemory(w, out, md) })
		}}.exec(ctx, c, args)
}

// renderMemory prints each side's figures, stacks and timeline, then what
// grew and the comparison; as Markdown the same under headings.
func renderMemory(w io.Writer, out *compare.MemoryReport, md bool) {
	res := out.MemoryResult
	line := func(label, text string) {
		if md {
			fmt.Fprintf(w, "- **%s** %s\n", label, text)
			return
		}
		fmt.Fprintf(w, "%-12s %s\n", label, text)
	}
	if md {
		fmt.Fprintf(w, "### flameox analyze memory: `%s`", cli.Name(res.Base.Input))
		if res.Candidate != nil {
			fmt.Fprintf(w, " against `%s`", cli.Name(res.Candidate.Input))
		}
		fmt.Fprint(w, "\n\n")
	}
	line("commit", corpus.Short(res.CorpusCommitID))
	sides := []*analysis.MemorySide{&res.Base}
	if res.Candidate != nil {
		sides = append(sides, res.Candidate)
	}
	for i, side := range sides {
		label := "memory"
		if res.Candidate != nil {
			label = []string{"base", "candidate"}[i]
		}
		line(label, sideSummary(side))
	}
	if res.Candidate == nil {
		renderSide(w, &res.Base, md)
	} else {
		renderChanges(w, res)
		for i, side := range sides {
			if md {
				fmt.Fprintf(w, "\n#### %s\n", []string{"Base", "Candidate"}[i])
			} else {
				fmt.Fprintf(w, "\n%s %s\n", []string{"base", "candidate"}[i], cli.Name(side.Input))
			}
			renderSide(w, side, md)
		}
	}
	if c := out.Comparison; c != nil {
		fmt.Fprintln(w)
		line("comparison", fmt.Sprintf("%s (%s): %s (threshold %g), %s", cli.Name(c.Metric), c.Polarity, c.Decision, c.Threshold, c.Validity))
		line("verdict", verdict(c))
		for _, m := range c.Mismatches {
			line("mismatch", cli.Safe(m.What)+": "+cli.Safe(m.Detail))
		}
		for _, l := range c.Limitations {
			line("limitation", "comparison: "+cli.Safe(l))
		}
	}
	for _, l := range res.Limitations {
		line("limitation", cli.Safe(l))
	}
	for _, n := range res.NextSteps {
		line("next", cli.Safe(n))
	}
	if out.Recorded != nil {
		line("recorded", fmt.Sprintf("as analysis %s in commit %s", out.Recorded.AnalysisID, corpus.Short(out.Recorded.CorpusCommitID)))
	}
}

// sideSummary is one line naming what a side read.
func sideSummary(side *analysis.MemorySide) string {
	var caps []string
	for i, s := range side.Sources {
		if i == 3 {
			caps = append(caps, fmt.Sprintf("… %d more", len(side.Sources)-3))
			break
		}
		caps = append(caps, s.Collector+" "+cli.Name(s.DisplayName))
	}
	what := side.Kind + " " + cli.Name(side.Input)
	if side.Kind == "run_set" {
		what += fmt.Sprintf(", %d runs", side.RunsTotal)
	}
	return what + ": " + strings.Join(caps, ", ")
}

// renderSide prints one side's figures, stack lists, timeline and
// collector limitations.
func renderSide(w io.Writer, side *analysis.MemorySide, md bool) {
	if md {
		fmt.Fprintln(w, "\n| figure | value | runs | concept |\n|---|---:|---:|---|")
		for _, f := range side.Figures {
			fmt.Fprintf(w, "| `%s` | %s | %d | %s |\n", cli.Name(f.Name), figureValue(f), f.Runs, cli.Safe(f.Concept))
		}
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nFIGURE\tVALUE\tRUNS\tCONCEPT")
		for _, f := range side.Figures {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", cli.Name(f.Name), figureValue(f), f.Runs, cli.Safe(f.Concept))
		}
		tw.Flush()
	}
	for _, st := range []*analysis.MemoryStacks{side.Retained, side.Peak, side.Allocated} {
		if st == nil {
			continue
		}
		title := map[string]string{"retained": "top retained", "peak": "top at peak", "allocated": "top allocating"}[st.Role]
		fmt.Fprintf(w, "\n%s  %s, %s: %s (%d of %d stacks)\n", title, cli.Name(st.SampleType), formatValue(st.Total, st.Unit), cli.Safe(st.Concept), st.Returned, st.Page.Total)
		for _, s := range st.Stacks {
			fmt.Fprintf(w, "  %10s %5.1f%%  %s\n", formatValue(s.Value, st.Unit), 100*s.Fraction, stackLine(s.Frames, s.Depth))
		}
	}
	if tl := side.Timeline; tl != nil {
		unit := tl.TimeUnit
		fmt.Fprintf(w, "\ntimeline     %s: %d snapshots (time in %s); peak %s at snapshot %d (time %d)", tl.Collector, tl.Page.Total, cli.Name(orDash(unit)),
			bytesHuman(heapWithExtra(tl.Peak)), tl.Peak.Index, tl.Peak.Time)
		if tl.Steepest != "" {
			fmt.Fprintf(w, "; grew most in %s of the time", tl.Steepest)
		}
		fmt.Fprintln(w)
		for _, p := range tl.Phases {
			fmt.Fprintf(w, "  %-15s %10d..%-10d %10s -> %-10s %s\n", p.Name, p.From, p.To, bytesHuman(p.Start), bytesHuman(p.End), signedBytes(p.Growth))
		}
	}
	for _, l := range side.Limitations {
		fmt.Fprintf(w, "collector    %s\n", cli.Safe(l))
	}
}

// renderChanges prints the figures side by side and what grew.
func renderChanges(w io.Writer, res *analysis.MemoryResult) {
	if len(res.Figures) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nFIGURE\tBASE\tCANDIDATE\tCHANGE")
		for _, f := range res.Figures {
			ch := signedValue(f.Delta, f.Unit)
			if f.Ratio != nil {
				ch += fmt.Sprintf(" (x%.3g)", *f.Ratio)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cli.Name(f.Name), formatValue(f.Base, f.Unit), formatValue(f.Candidate, f.Unit), ch)
		}
		tw.Flush()
	}
	g := res.Growth
	if g == nil {
		return
	}
	fmt.Fprintf(w, "\nwhat grew    %s (%s): %s -> %s, %s; %d stacks grew, %d new, %d shrank, %d gone\n", cli.Name(g.SampleType), g.Role,
		formatValue(g.BaseTotal, g.Unit), formatValue(g.CandidateTotal, g.Unit), signedValue(g.Delta, g.Unit), g.Grew, g.New, g.Shrank, g.Gone)
	for _, s := range g.Stacks {
		fmt.Fprintf(w, "  %10s  %-5s  %s\n", signedValue(s.Delta, g.Unit), s.Status, stackLine(s.Frames, s.Depth))
	}
}

// stackLine names a stack leaf first: the allocating function with its
// file, then up to three callers.
func stackLine(frames []analysis.MemoryFrame, depth int) string {
	if len(frames) == 0 {
		return "(no frames)"
	}
	var parts []string
	for i := len(frames) - 1; i >= 0 && len(parts) < 4; i-- {
		f := frames[i]
		name := cli.Name(f.Function)
		if name == "" {
			name = "?"
		}
		if len(parts) == 0 && f.File != "" {
			name += " (" + cli.Name(f.File) + ")"
		}
		parts = append(parts, name)
	}
	s := strings.Join(parts, " <- ")
	if rest := depth - len(parts); rest > 0 {
		s += fmt.Sprintf(" <- … %d more", rest)
	}
	return s
}

func figureValue(f analysis.MemoryFigure) string {
	v := formatValue(f.Value, f.Unit)
	if f.Runs > 1 && f.Min != f.Max {
		v += fmt.Sprintf(" (%s..%s)", formatValue(f.Min, f.Unit), formatValue(f.Max, f.Unit))
	}
	return v
}

func heapWithExtra(p analysis.MemoryPoint) int64 {
	if p.HeapExtra != nil {
		return p.Heap + *p.HeapExtra
	}
	return p.Heap
}

func signedBytes(v int64) string { return signedValue(v, "bytes") }

func signedValue(v int64, unit string) string {
	if v < 0 {
		return "-" + formatValue(-v, unit)
	}
	return "+" + formatValue(v, unit)
}
