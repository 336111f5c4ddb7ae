package flameox

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/experiment"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
)

// experimentCommands are the experiment group.
func experimentCommands() []*Command {
	return []*Command{
		{Name: "experiment plan", Args: "NAME --adapter ADAPTER", Summary: "every trial of a declared experiment in order (block, variant, parameters, seed), without running anything", MCPTool: "plan_experiment", Run: experimentPlan},
		{Name: "experiment run", Args: "NAME --adapter ADAPTER", Summary: "run every trial of a declared experiment, publishing each run, trial and one frozen run set per variant", MCPTool: "start_experiment", Run: experimentRun},
		{Name: "experiment compare", Args: "BASELINE_SET CANDIDATE_SET --metric M", Summary: "compare two variants' frozen run sets block by block: median paired ratio with its confidence interval, decision against --threshold, validity with every mismatch named", MCPTool: "compare_run_sets", Run: experimentCompare},
		{Name: "experiment show", Args: "EXPERIMENT_ID", Summary: "a published experiment: design, each variant's trial outcomes, run sets, and its trials in block order (--outcome filters)", MCPTool: "get_experiment", Run: experimentShow},
	}
}

func (c *Context) experimentRequest(name string, args []string) (*capture.ExperimentRequest, error) {
	fs := c.flags(name, "NAME --adapter ADAPTER [--investigation ID] [--hypothesis ID]")
	var req capture.ExperimentRequest
	fs.StringVar(&req.Adapter, "adapter", "", "adapter that captures every trial (required)")
	fs.StringVar(&req.InvestigationID, "investigation", "", "investigation the experiment belongs to (default: running it opens one)")
	fs.StringVar(&req.HypothesisID, "hypothesis", "", "hypothesis the experiment tests")
	if err := c.parse(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 || req.Adapter == "" {
		return nil, cli.Usagef("%s needs NAME and --adapter ADAPTER", name)
	}
	req.Experiment = fs.Arg(0)
	return &req, nil
}

func experimentPlan(ctx context.Context, c *Context, args []string) error {
	req, err := c.experimentRequest("experiment plan", args)
	if err != nil {
		return err
	}
	svc, err := c.captureService()
	if err != nil {
		return err
	}
	p, err := svc.PlanExperiment(ctx, *req)
	if err != nil {
		return err
	}
	return c.emit(p, func(w io.Writer) { renderExperimentPlan(w, p) })
}

func renderExperimentPlan(w io.Writer, p *experiment.Plan) {
	fmt.Fprintf(w, "experiment   %s  (workload %s, adapter %s)\n", cli.Name(p.Experiment), cli.Name(p.Workload), cli.Name(p.Adapter))
	combos := 1
	for _, f := range p.Factors {
		combos *= len(f.Values)
	}
	fmt.Fprintf(w, "design       %s: %d blocks × %d combinations = %d trials, seed %d\n", p.Design, p.Blocks, combos, len(p.Trials), p.RandomSeed)
	fmt.Fprintf(w, "treatment    %s: %s\n", cli.Name(p.TreatmentParameter), cli.Safe(strings.Join(p.Variants, ", ")))
	for _, f := range p.Factors[1:] {
		fmt.Fprintf(w, "factor       %s: %s\n", cli.Name(f.Parameter), cli.Safe(strings.Join(f.Values, ", ")))
	}
	fmt.Fprintf(w, "decision     %s (%s), %s, threshold %g, confidence %g\n", cli.Safe(p.PrimaryMetric), p.Polarity, p.Estimand, p.PracticalThreshold, p.ConfidenceLevel)
	if p.Oracle != "" {
		fmt.Fprintf(w, "oracle       %s\n", p.Oracle)
	}
	fmt.Fprintf(w, "order        %s\n", experiment.Generator)
	fmt.Fprintf(w, "design id    %s\n\n", p.DesignID)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tBLOCK\tORDER\tVARIANT\tPARAMETERS\tSEED")
	for _, t := range p.Trials {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%d,%d\n", t.Index, t.BlockID, t.OrderInBlock, cli.Safe(t.Variant), cli.Safe(paramText(t.Parameters)), t.Seed[0], t.Seed[1])
	}
	tw.Flush()
}

func experimentRun(ctx context.Context, c *Context, args []string) error {
	req, err := c.experimentRequest("experiment run", args)
	if err != nil {
		return err
	}
	svc, err := c.captureService()
	if err != nil {
		return err
	}
	// A bar over the trials, on a terminal only (Env.ShowProgress).
	var onTrial func(experiment.Trial, int)
	if c.Env.ShowProgress() {
		bar := c.Env.StartProgress("experiment "+req.Experiment, 0)
		defer bar.Stop()
		onTrial = func(t experiment.Trial, of int) {
			bar.Update(fmt.Sprintf("trial %d/%d  %s  %s", t.Index, of, t.BlockID, paramText(t.Parameters)), int64(max(t.Index-1, 0)), int64(of))
		}
	}
	res, err := c.publisher(svc.WS).RunExperiment(ctx, svc, *req, onTrial)
	if res == nil {
		return err
	}
	// A completed experiment's text ends with its declared comparisons
	// (start_experiment's job carries the same); --json stays the
	// experiment, and experiment compare gives each comparison in full.
	var verdicts []compare.VariantComparison
	if err == nil && !c.JSON && res.Status == capture.ExperimentCompleted {
		if verdicts, err = compare.Declared(ctx, svc.WS, res.Plan, res.RunSets); err != nil {
			return err
		}
	}
	if perr := c.emit(res, func(w io.Writer) { renderExperimentRun(w, res); renderVerdicts(w, verdicts) }); perr != nil {
		return perr
	}
	if err != nil {
		return err
	}
	return capture.ExperimentExit(res)
}

func renderExperimentRun(w io.Writer, res *capture.ExperimentResult) {
	fmt.Fprintf(w, "experiment   %s  %s (%s)\n", res.Experiment.ExperimentID, cli.Name(res.Plan.Experiment), res.Status)
	fmt.Fprintf(w, "investigation %s\n", res.Experiment.InvestigationID)
	var counts []string
	for _, o := range inquiry.TerminalOutcomes() {
		if n := res.Outcomes[o]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, o))
		}
	}
	fmt.Fprintf(w, "trials       %d: %s\n\n", len(res.Trials), strings.Join(counts, ", "))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tBLOCK\tVARIANT\tPARAMETERS\tOUTCOME\tRUN\tWHY")
	for i, t := range res.Trials {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, t.BlockID, cli.Safe(t.Variant), cli.Safe(paramText(t.Parameters)), t.Outcome, orDash(t.RunID), cli.Safe(t.ExclusionReason))
	}
	tw.Flush()
	for _, rs := range res.RunSets {
		fmt.Fprintf(w, "run set      %s  %d runs\n", rs.RunSetID, rs.MemberCount)
	}
	printLimitations(w, "limitation   ", res.Limitations)
	if res.CorpusCommitID != "" {
		fmt.Fprintf(w, "published    commit %s\n", corpus.Short(res.CorpusCommitID))
	}
}

// renderVerdicts prints each variant's declared comparison in one line.
func renderVerdicts(w io.Writer, vs []compare.VariantComparison) {
	for _, v := range vs {
		what := cli.Name(v.Candidate) + " vs " + cli.Name(v.Baseline)
		if v.Comparison == nil {
			fmt.Fprintf(w, "compared     %s: %s\n", what, cli.Safe(v.Error))
			continue
		}
		c := v.Comparison
		fmt.Fprintf(w, "compared     %s: %s, %s: %s\n", what, c.Decision, c.Validity, verdict(c))
	}
	if len(vs) > 0 {
		fmt.Fprintln(w, "             (flameox experiment compare BASELINE_SET CANDIDATE_SET --metric M shows one in full)")
	}
}

func experimentShow(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("experiment show", "EXPERIMENT_ID [--outcome O] [--limit N] [--cursor C]")
	var req query.GetExperimentRequest
	fs.StringVar(&req.Outcome, "outcome", "", "only trials with this outcome ("+strings.Join(inquiry.TerminalOutcomes(), ", ")+")")
	cli.PageFlags(fs, &req.Limit, &req.Cursor, query.DefaultLimit, query.MaxLimit)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("experiment show needs exactly one EXPERIMENT_ID")
	}
	req.ExperimentID = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.GetExperiment(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { renderExperimentShow(w, res) })
}

func renderExperimentShow(w io.Writer, res *query.ExperimentDetail) {
	fmt.Fprintf(w, "experiment   %s  (investigation %s)\n", res.ExperimentID, res.InvestigationID)
	fmt.Fprintf(w, "decision     %s (%s), %s, threshold %g, confidence %g, seed %d\n", cli.Safe(res.PrimaryMetric), res.Polarity, res.Estimand,
		res.PracticalThreshold, res.ConfidenceLevel, res.RandomSeed)
	for _, v := range res.Variants {
		var counts []string
		for _, o := range inquiry.TerminalOutcomes() {
			if n := v.Outcomes[o]; n > 0 {
				counts = append(counts, fmt.Sprintf("%d %s", n, o))
			}
		}
		fmt.Fprintf(w, "variant      %s  %s\n", cli.Name(v.Name), orDash(strings.Join(counts, ", ")))
	}
	for _, rs := range res.RunSets {
		fmt.Fprintf(w, "run set      %s  %d runs\n", rs.RunSetID, rs.MemberCount)
	}
	if len(res.Trials) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "BLOCK\tORDER\tVARIANT\tOUTCOME\tRUN\tWHY")
		for _, t := range res.Trials {
			order := "-"
			if t.OrderInBlock != nil {
				order = fmt.Sprint(*t.OrderInBlock)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", orDash(t.BlockID), order, cli.Name(t.Variant), t.Outcome, orDash(t.RunID), cli.Safe(t.ExclusionReason))
		}
		tw.Flush()
	}
	footer(w, res.Returned, res.Total, res.Truncated, res.Cursor)
}

func experimentCompare(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("experiment compare", "BASELINE_SET CANDIDATE_SET --metric M [--subject S] [--polarity P] [--threshold T] [--confidence C] [--method M] [--seed N] [--resamples N] [--format text|markdown|json] [--fail-on regression[,inconclusive]]")
	var req compare.ConfirmRequest
	req.Flags(fs)
	format := fs.String("format", "text", "output: text, markdown (a pull-request comment), or json (as --json)")
	failOn := fs.String("fail-on", "", "exit 1 when the decision is a meaningful regression (regression), or also inconclusive (regression,inconclusive)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 || req.Metric == "" {
		return cli.Usagef("experiment compare needs BASELINE_SET, CANDIDATE_SET and --metric M")
	}
	if err := c.outputFormat(*format, "text", "markdown"); err != nil {
		return err
	}
	req.Baseline, req.Candidate = fs.Arg(0), fs.Arg(1)
	return confirmCmd(ctx, c, req, *format, *failOn)
}

func renderComparison(w io.Writer, c *compare.Comparison) {
	what := cli.Safe(c.Metric)
	if c.Subject != "" {
		what += " of " + cli.Safe(c.Subject)
	}
	fmt.Fprintf(w, "metric       %s (%s)\n", what, c.Polarity)
	if c.Ratio != nil {
		how := c.Method
		if c.Resamples > 0 {
			how = fmt.Sprintf("%s, %d resamples, seed %d", c.Method, c.Resamples, c.Seed)
		}
		fmt.Fprintf(w, "ratio        %.4f  [%.4f, %.4f] at %g (%s)\n", *c.Ratio, *c.RatioLow, *c.RatioHigh, c.Confidence, how)
	}
	fmt.Fprintf(w, "decision     %s (threshold %g)\n", c.Decision, c.Threshold)
	fmt.Fprintf(w, "verdict      %s\n", verdict(c))
	fmt.Fprintf(w, "validity     %s\n", c.Validity)
	for _, m := range c.Mismatches {
		mark := ""
		if m.Critical {
			mark = " (critical)"
		}
		fmt.Fprintf(w, "mismatch     %s%s: %s\n", m.What, mark, cli.Safe(m.Detail))
	}
	for _, s := range []struct {
		name string
		s    compare.Side
	}{{"baseline", c.Baseline}, {"candidate", c.Candidate}} {
		fmt.Fprintf(w, "%-12s %s: %d attempted, %d eligible, %d failed, %d excluded, %d paired\n", s.name, s.s.RunSetID,
			s.s.Attempted, s.s.Eligible, s.s.Failed, s.s.Excluded, s.s.Paired)
	}
	renderProfileChanges(w, c.ProfileChanges)
	printLimitations(w, "limitation   ", c.Limitations)
}
