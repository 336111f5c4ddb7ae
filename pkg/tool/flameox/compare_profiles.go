package flameox

import (
	"fmt"
	"io"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/compare"
)

// profileSummary is the lines above a comparison's profile table: what
// was merged, each side's counts and totals, and what the rows show.
func profileSummary(pc *compare.ProfileChanges, vf analysis.ValueFormat) []string {
	b, k := pc.Baseline, pc.Candidate
	return []string{
		fmt.Sprintf("%s: the candidate's %d profiles merged minus the baseline's %d, as go tool pprof -top -diff_base ranks functions",
			cli.Name(pc.SampleType), k.Merged, b.Merged),
		fmt.Sprintf("baseline %d of %d runs with a profile, total %s; candidate %d of %d, total %s (%s)",
			b.WithProfile, b.Runs, vf.Format(b.Total), k.WithProfile, k.Runs, vf.Format(k.Total), signed(vf, pc.TotalDelta)),
		fmt.Sprintf("top %d of %d changed functions (%d new, %d gone), accounting for %s, %s of the baseline's total",
			len(pc.Rows), pc.Changed, pc.Added, pc.Removed, signed(vf, pc.ShownDelta), strings.TrimSpace(analysis.Percentage(pc.ShownDelta, b.Total))),
	}
}

// renderProfileChanges prints a run-set comparison's top profile changes:
// the summary, go tool pprof -top -diff_base's table (signed flat and cum
// deltas, percentages of the baseline's total) and the limitations of
// the diff. Nothing when there are none.
func renderProfileChanges(w io.Writer, pc *compare.ProfileChanges) {
	if pc == nil {
		return
	}
	vf := pc.Format()
	for _, l := range profileSummary(pc, vf) {
		fmt.Fprintf(w, "profiles     %s\n", l)
	}
	if len(pc.Rows) > 0 {
		fmt.Fprintf(w, "%10s %5s%% %5s%% %10s %5s%%\n", "flat", "flat", "sum", "cum", "cum")
	}
	total := pc.Baseline.Total
	for _, r := range pc.Rows {
		fmt.Fprintf(w, "%10s %s %s %10s %s  %s\n", signed(vf, r.SelfDelta), analysis.Percentage(r.SelfDelta, total), analysis.Percentage(r.SumDelta, total),
			signed(vf, r.InclusiveDelta), analysis.Percentage(r.InclusiveDelta, total), diffName(r, cli.NameWidth))
	}
	printLimitations(w, "limitation   profiles: ", pc.Limitations)
}

// renderProfileChangesMarkdown is renderProfileChanges for a
// pull-request comment: both sides' values beside the deltas.
func renderProfileChangesMarkdown(w io.Writer, pc *compare.ProfileChanges) {
	if pc == nil {
		return
	}
	vf := pc.Format()
	fmt.Fprintf(w, "\n#### Profile changes (`%s`)\n\n", cli.Name(pc.SampleType))
	for _, l := range profileSummary(pc, vf) {
		fmt.Fprintf(w, "%s  \n", mdText(l))
	}
	total := pc.Baseline.Total
	pct := func(v int64) string {
		p := strings.TrimSpace(analysis.Percentage(v, total))
		switch {
		case v < 0:
			return "-" + p
		case v > 0:
			return "+" + p
		}
		return p
	}
	if len(pc.Rows) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| flat Δ | flat Δ% | base flat | cand flat | cum Δ | cum Δ% | base cum | cand cum | name |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|:---|")
	}
	for _, r := range pc.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", signed(vf, r.SelfDelta), pct(r.SelfDelta), vf.Format(r.BaseSelf), vf.Format(r.CandidateSelf),
			signed(vf, r.InclusiveDelta), pct(r.InclusiveDelta), vf.Format(r.BaseInclusive), vf.Format(r.CandidateInclusive), mdCode(diffName(r, cli.NameWidth)))
	}
	if len(pc.Limitations) > 0 {
		fmt.Fprintln(w, "\nProfile limitations:")
		for _, l := range pc.Limitations {
			fmt.Fprintf(w, "- %s\n", cli.Safe(l))
		}
	}
}
