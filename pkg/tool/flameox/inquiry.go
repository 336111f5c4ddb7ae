package flameox

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/investigate"
	"github.com/flameox/flameox/pkg/query"
)

// inquiryCommands are the investigations, hypotheses and run-sets groups.
func inquiryCommands() []*Command {
	return []*Command{
		{Name: "investigations create", Args: "--question Q", Summary: "open an investigation: the question, the symptom, the investigation it splits from", MCPTool: "create_investigation", Run: investigationsCreate},
		{Name: "investigations list", Summary: "investigations, newest first, with their hypothesis counts", MCPTool: "list_investigations", Run: investigationsList},
		{Name: "investigations show", Args: "ID", Summary: "an investigation and its hypotheses at their latest revision", MCPTool: "get_investigation", Run: investigationsShow},
		{Name: "hypotheses record", Args: "--investigation ID [flags]", Summary: "record a hypothesis (--claim, --prediction, --discriminating-condition), or revise one (--hypothesis ID --expected-revision N, refused unless N is still its latest)", MCPTool: "record_hypothesis", Run: hypothesesRecord},
		{Name: "hypotheses show", Args: "ID", Summary: "every revision of a hypothesis, newest first", MCPTool: "get_hypothesis", Run: hypothesesShow},
		{Name: "run-sets freeze", Args: "--runs ID,ID... [--label TEXT]", Summary: "freeze published runs into a run set pinned at HEAD (sorted members, membership digest); the same runs and label again give the same set", MCPTool: "freeze_run_set", Run: runSetsFreeze},
		{Name: "run-sets list", Summary: "frozen run sets, newest first", MCPTool: "list_run_sets", Run: runSetsList},
		{Name: "run-sets show", Args: "ID", Summary: "a run set: its commit, selection, digest and members", MCPTool: "get_run_set", Run: runSetsShow},
	}
}

func investigationsCreate(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("investigations create", "--question Q [--symptom S] [--parent ID]")
	var req investigate.CreateInvestigationRequest
	fs.StringVar(&req.Question, "question", "", "the question under investigation (required)")
	fs.StringVar(&req.Symptom, "symptom", "", "the observed symptom")
	fs.StringVar(&req.ParentInvestigationID, "parent", "", "investigation this one is split from")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("investigations create takes no arguments; the question goes in --question")
	}
	if strings.TrimSpace(req.Question) == "" {
		return cli.Usagef("investigations create needs --question")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := investigate.CreateInvestigation(ctx, c.publisher(ws), req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "investigation %s\n  question %s\n", res.Investigation.InvestigationID, cli.SafeLines(res.Investigation.Question))
		if res.Investigation.Symptom != "" {
			fmt.Fprintf(w, "  symptom  %s\n", cli.SafeLines(res.Investigation.Symptom))
		}
		if res.Investigation.ParentInvestigationID != "" {
			fmt.Fprintf(w, "  parent   %s\n", res.Investigation.ParentInvestigationID)
		}
		fmt.Fprintf(w, "published as commit %s\n", corpus.Short(res.CommitID))
	})
}

func investigationsList(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("investigations list", "[--status open|closed] [--limit N] [--cursor C]")
	var req query.ListInvestigationsRequest
	fs.StringVar(&req.Status, "status", "", "open or closed")
	cli.PageFlags(fs, &req.Limit, &req.Cursor, query.DefaultLimit, query.MaxLimit)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("investigations list takes no arguments")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.ListInvestigations(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		if len(res.Investigations) == 0 {
			fmt.Fprintln(w, "no investigations; open one with `flameox investigations create --question Q`")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "INVESTIGATION\tSTATUS\tHYPOTHESES\tCREATED\tQUESTION")
		for _, i := range res.Investigations {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", i.InvestigationID, i.Status, i.HypothesisCount, i.CreatedAt.Format(time.RFC3339), cli.Cut(cli.Safe(i.Question), 60))
		}
		tw.Flush()
		pageFooter(w, res.Page, "investigations")
	})
}

func investigationsShow(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("investigations show", "ID")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("investigations show needs one ID")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.GetInvestigation(ctx, ws, fs.Arg(0))
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		i := res.InvestigationSummary
		fmt.Fprintf(w, "investigation %s (%s, created %s)\n  question %s\n", i.InvestigationID, i.Status, i.CreatedAt.Format(time.RFC3339), cli.SafeLines(i.Question))
		if i.Symptom != "" {
			fmt.Fprintf(w, "  symptom  %s\n", cli.SafeLines(i.Symptom))
		}
		if i.ParentInvestigationID != "" {
			fmt.Fprintf(w, "  parent   %s\n", i.ParentInvestigationID)
		}
		if len(res.Hypotheses) == 0 {
			fmt.Fprintf(w, "no hypotheses; record one with `flameox hypotheses record --investigation %s --claim C --prediction P --discriminating-condition D`\n", i.InvestigationID)
			return
		}
		fmt.Fprintf(w, "hypotheses: %d\n", i.HypothesisCount)
		for _, h := range res.Hypotheses {
			fmt.Fprintf(w, "  %s  revision %d of %d, %s, %s\n", h.HypothesisID, h.Revision, h.Revisions, h.Assessment, h.Lifecycle)
			renderHypothesisText(w, "    ", h.HypothesisRevision)
		}
		if res.HypothesesTruncated {
			fmt.Fprintf(w, "(first %d hypotheses shown)\n", len(res.Hypotheses))
		}
	})
}

func renderHypothesisText(w io.Writer, indent string, r query.HypothesisRevision) {
	fmt.Fprintf(w, "%sclaim                    %s\n", indent, cli.SafeLines(r.Claim))
	fmt.Fprintf(w, "%sprediction               %s\n", indent, cli.SafeLines(r.Prediction))
	fmt.Fprintf(w, "%sdiscriminating condition %s\n", indent, cli.SafeLines(r.DiscriminatingCondition))
}

func hypothesesRecord(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("hypotheses record", "--investigation ID --claim C --prediction P --discriminating-condition D [--hypothesis ID --expected-revision N] [--assessment A] [--lifecycle L]")
	var req investigate.RecordHypothesisRequest
	var expected int
	fs.StringVar(&req.InvestigationID, "investigation", "", "investigation the hypothesis belongs to (required for a new hypothesis)")
	fs.StringVar(&req.HypothesisID, "hypothesis", "", "hypothesis to revise")
	fs.IntVar(&expected, "expected-revision", 0, "the revision this one replaces, which must still be the latest (with --hypothesis)")
	fs.StringVar(&req.Claim, "claim", "", "the claim")
	fs.StringVar(&req.Prediction, "prediction", "", "what should be observed if the claim holds")
	fs.StringVar(&req.DiscriminatingCondition, "discriminating-condition", "", "what tells the claim apart from the alternatives")
	fs.StringVar(&req.Assessment, "assessment", "", "unassessed (default), supported, contradicted or inconclusive")
	fs.StringVar(&req.Lifecycle, "lifecycle", "", "active (default) or retired")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("hypotheses record takes no arguments")
	}
	if expected < 0 || expected > 1<<30 {
		return cli.Usagef("--expected-revision must be 0 or a revision number")
	}
	req.ExpectedRevision = int32(expected)
	switch {
	case req.HypothesisID == "" && req.InvestigationID == "":
		return cli.Usagef("hypotheses record needs --investigation (or --hypothesis to revise one)")
	case req.HypothesisID != "" && !fs.Changed("expected-revision"):
		return cli.Usagef("revising hypothesis %s needs --expected-revision, its latest revision (flameox hypotheses show %s)", req.HypothesisID, req.HypothesisID)
	case req.ExpectedRevision == 0 && (req.Claim == "" || req.Prediction == "" || req.DiscriminatingCondition == ""):
		return cli.Usagef("a new hypothesis needs --claim, --prediction and --discriminating-condition")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := investigate.RecordHypothesis(ctx, c.publisher(ws), req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		h := res.Hypothesis
		fmt.Fprintf(w, "hypothesis %s revision %d (%s, %s) in investigation %s\n", h.HypothesisID, h.Revision, h.Assessment, h.Lifecycle, h.InvestigationID)
		renderHypothesisText(w, "  ", query.HypothesisRevision{Claim: h.Claim, Prediction: h.Prediction, DiscriminatingCondition: h.DiscriminatingCondition})
		fmt.Fprintf(w, "published as commit %s; revise it with --hypothesis %s --expected-revision %d\n", corpus.Short(res.CommitID), h.HypothesisID, h.Revision)
	})
}

func hypothesesShow(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("hypotheses show", "ID [--limit N]")
	var req query.GetHypothesisRequest
	fs.IntVar(&req.Limit, "limit", query.DefaultLimit, fmt.Sprintf("revisions to show, newest first (max %d)", query.MaxLimit))
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("hypotheses show needs one ID")
	}
	req.HypothesisID = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.GetHypothesis(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "hypothesis %s in investigation %s: current revision %d\n", res.HypothesisID, res.InvestigationID, res.Current)
		for _, r := range res.Revisions {
			fmt.Fprintf(w, "revision %d  %s, %s, %s\n", r.Revision, r.Assessment, r.Lifecycle, r.CreatedAt.Format(time.RFC3339))
			renderHypothesisText(w, "  ", r)
		}
		if res.Truncated {
			fmt.Fprintf(w, "(%d of %d revisions shown)\n", res.Returned, res.Total)
		}
	})
}

func runSetsFreeze(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("run-sets freeze", "--runs ID,ID... [--label TEXT]")
	var req investigate.FreezeRequest
	var runs []string
	fs.StringSliceVar(&runs, "runs", nil, "run ids, comma-separated (repeatable)")
	fs.StringArrayVar(&runs, "run", nil, "one run id (repeatable)")
	fs.StringVar(&req.Label, "label", "", "what the set is, in a few words")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("run-sets freeze takes its runs in --runs ID,ID... or --run ID")
	}
	for _, r := range runs {
		if r = strings.TrimSpace(r); r != "" {
			req.Runs = append(req.Runs, r)
		}
	}
	if len(req.Runs) == 0 {
		return cli.Usagef("run-sets freeze needs --runs ID,ID... or --run ID")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := investigate.Freeze(ctx, c.publisher(ws), req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		rs := res.RunSet
		verb := "froze"
		if res.AlreadyFrozen {
			verb = "already frozen:"
		}
		fmt.Fprintf(w, "%s run set %s\n  %d runs at commit %s\n  membership %s\n", verb, rs.RunSetID, rs.MemberCount, corpus.Short(rs.CorpusCommitID), rs.MembershipDigest)
		if !res.AlreadyFrozen {
			fmt.Fprintf(w, "published as commit %s\n", corpus.Short(res.CommitID))
		}
	})
}

func runSetsList(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("run-sets list", "[--limit N] [--cursor C]")
	var req query.ListRunSetsRequest
	cli.PageFlags(fs, &req.Limit, &req.Cursor, query.DefaultLimit, query.MaxLimit)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("run-sets list takes no arguments")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.ListRunSets(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		if len(res.RunSets) == 0 {
			fmt.Fprintln(w, "no run sets; freeze one with `flameox run-sets freeze --runs ID,ID...`")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN SET\tRUNS\tCOMMIT\tCREATED\tSELECTION")
		for _, r := range res.RunSets {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.RunSetID, r.MemberCount, corpus.Short(r.CorpusCommitID), r.CreatedAt.Format(time.RFC3339), cli.Cut(cli.Safe(string(r.Selection)), 60))
		}
		tw.Flush()
		pageFooter(w, res.Page, "run sets")
	})
}

func runSetsShow(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("run-sets show", "ID [--limit N]")
	var req query.GetRunSetRequest
	fs.IntVar(&req.Limit, "limit", query.DefaultLimit, fmt.Sprintf("members to show, by run id (max %d)", query.MaxLimit))
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("run-sets show needs one ID")
	}
	req.RunSetID = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.GetRunSet(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		rs := res.RunSet
		fmt.Fprintf(w, "run set %s, frozen %s at commit %s\n  selection  %s\n  membership %s\n  %d runs:\n", rs.RunSetID,
			rs.CreatedAt.Format(time.RFC3339), corpus.Short(rs.CorpusCommitID), cli.Safe(string(rs.Selection)), rs.MembershipDigest, rs.MemberCount)
		for _, m := range res.Members {
			if m.TrialID != "" {
				fmt.Fprintf(w, "    %s  trial %s\n", m.RunID, m.TrialID)
			} else {
				fmt.Fprintf(w, "    %s\n", m.RunID)
			}
		}
		if res.Truncated {
			fmt.Fprintf(w, "  (%d of %d shown; --limit for more)\n", res.Returned, res.Total)
		}
	})
}

// pageFooter says how many rows a truncated list left out.
func pageFooter(w io.Writer, p query.Page, what string) {
	if p.Truncated {
		fmt.Fprintf(w, "%d of %d %s; next page: --cursor %s\n", p.Returned, p.Total, what, p.Cursor)
	}
}
