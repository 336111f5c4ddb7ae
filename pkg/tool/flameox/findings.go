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
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/investigate"
	"github.com/flameox/flameox/pkg/query"
)

// findingsCommands are findings record, show and list.
func findingsCommands() []*Command {
	return []*Command{
		{Name: "findings record", Args: "--claim C --evidence TYPE:ID... [flags]", Summary: "record a finding tied to the evidence it rests on, or revise one (--finding ID --expected-revision N); supported only when SPEC §7's rule holds, else refused naming what is missing", MCPTool: "record_finding", Run: findingsRecord},
		{Name: "findings show", Args: "ID", Summary: "a finding: its current revision, its evidence and its revisions, newest first", MCPTool: "get_finding", Run: findingsShow},
		{Name: "findings list", Summary: "findings at their latest revision, newest first", MCPTool: "list_findings", Run: findingsList},
	}
}

func findingsRecord(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("findings record", "--kind K --title T --claim C --evidence-level L --evidence TYPE:ID[:RELATION]... [--confidence C] [--assessment A] [--lifecycle L] [--limitation TEXT]... [--next-experiment TEXT]... [--finding ID --expected-revision N]")
	var req investigate.RecordFindingRequest
	var expected int
	var evidence, limitations, next []string
	fs.StringVar(&req.FindingID, "finding", "", "finding to revise")
	fs.IntVar(&expected, "expected-revision", 0, "the revision this one replaces, which must still be the latest (with --finding)")
	fs.StringVar(&req.Kind, "kind", "", strings.Join(inquiry.FindingKinds(), ", "))
	fs.StringVar(&req.Title, "title", "", "the finding in a few words")
	fs.StringVar(&req.Claim, "claim", "", "what the evidence shows")
	fs.StringVar(&req.EvidenceLevel, "evidence-level", "", "observed, derived or inferred")
	fs.StringVar(&req.Confidence, "confidence", "", "high, medium, low or unknown (default)")
	fs.StringVar(&req.Assessment, "assessment", "", "unassessed (default), supported, refuted or inconclusive")
	fs.StringVar(&req.Lifecycle, "lifecycle", "", "active (default), superseded or retracted")
	fs.StringArrayVar(&evidence, "evidence", nil, "TYPE:ID[:RELATION] (repeatable); TYPE one of "+strings.Join(inquiry.RefTypes(), ", ")+"; RELATION supports (default), contradicts, context or validates")
	fs.StringArrayVar(&limitations, "limitation", nil, "a stated limitation (repeatable)")
	fs.StringArrayVar(&next, "next-experiment", nil, "a suggested next experiment (repeatable)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("findings record takes no arguments; cite evidence with --evidence TYPE:ID")
	}
	if expected < 0 || expected > 1<<30 {
		return cli.Usagef("--expected-revision must be 0 or a revision number")
	}
	req.ExpectedRevision = int32(expected)
	switch {
	case req.FindingID != "" && !fs.Changed("expected-revision"):
		return cli.Usagef("revising finding %s needs --expected-revision, its latest revision (flameox findings show %s)", req.FindingID, req.FindingID)
	case req.FindingID == "" && (req.Kind == "" || req.Title == "" || req.Claim == "" || req.EvidenceLevel == "" || len(evidence) == 0):
		return cli.Usagef("a new finding needs --kind, --title, --claim, --evidence-level and at least one --evidence TYPE:ID")
	}
	for _, e := range evidence {
		r, err := inquiry.ParseRef(e)
		if err != nil {
			return cli.Usagef("--evidence %s: %s", cli.Safe(e), fault.As(err).Message)
		}
		req.Evidence = append(req.Evidence, r)
	}
	if fs.Changed("limitation") {
		req.Limitations = append([]string{}, limitations...)
	}
	if fs.Changed("next-experiment") {
		req.NextExperiments = append([]string{}, next...)
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := investigate.RecordFinding(ctx, c.publisher(ws), req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		f := res.Finding
		fmt.Fprintf(w, "finding %s revision %d (%s, %s, evidence %s, confidence %s)\n", f.FindingID, f.Revision, f.Assessment, f.Lifecycle, f.EvidenceLevel, f.Confidence)
		renderFindingText(w, "  ", f.Kind, f.Title, f.Claim, f.Limitations, f.NextExperiments)
		fmt.Fprintf(w, "  evidence (found at commit %s):\n", corpus.Short(res.CorpusCommitID))
		for _, r := range res.Evidence {
			fmt.Fprintf(w, "    %-11s %s %s\n", r.Relation, r.RefType, r.RefID)
		}
		fmt.Fprintf(w, "published as commit %s; revise it with --finding %s --expected-revision %d\n", corpus.Short(res.CommitID), f.FindingID, f.Revision)
	})
}

func renderFindingText(w io.Writer, indent, kind, title, claim string, limitations, next []string) {
	fmt.Fprintf(w, "%s%s: %s\n", indent, kind, cli.SafeLines(title))
	fmt.Fprintf(w, "%sclaim %s\n", indent, cli.SafeLines(claim))
	for _, l := range limitations {
		fmt.Fprintf(w, "%slimitation %s\n", indent, cli.SafeLines(l))
	}
	for _, n := range next {
		fmt.Fprintf(w, "%snext experiment %s\n", indent, cli.SafeLines(n))
	}
}

func findingsShow(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("findings show", "ID [--limit N]")
	var req query.GetFindingRequest
	fs.IntVar(&req.Limit, "limit", query.DefaultLimit, fmt.Sprintf("revisions to show, newest first (max %d)", query.MaxLimit))
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("findings show needs one ID")
	}
	req.FindingID = fs.Arg(0)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.GetFinding(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		f := res.Finding
		fmt.Fprintf(w, "finding %s: current revision %d (%s, %s, evidence %s, confidence %s)\n", res.FindingID, res.Current, f.Assessment, f.Lifecycle, f.EvidenceLevel, f.Confidence)
		renderFindingText(w, "  ", f.Kind, f.Title, f.Claim, f.Limitations, f.NextExperiments)
		fmt.Fprintf(w, "evidence: %d\n", res.EvidenceTotal)
		for _, r := range res.Evidence {
			fmt.Fprintf(w, "  %-11s %s %s\n", r.Relation, r.RefType, r.RefID)
		}
		if res.EvidenceTruncated {
			fmt.Fprintf(w, "  (first %d shown)\n", len(res.Evidence))
		}
		fmt.Fprintln(w, "revisions:")
		for _, r := range res.Revisions {
			fmt.Fprintf(w, "  revision %d  %s, %s, %s\n", r.Revision, r.Assessment, r.Lifecycle, r.CreatedAt.Format(time.RFC3339))
		}
		if res.Truncated {
			fmt.Fprintf(w, "  (%d of %d revisions shown)\n", res.Returned, res.Total)
		}
	})
}

func findingsList(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("findings list", "[--kind K] [--assessment A] [--limit N] [--cursor C]")
	var req query.ListFindingsRequest
	fs.StringVar(&req.Kind, "kind", "", "only findings of this kind")
	fs.StringVar(&req.Assessment, "assessment", "", "only findings with this assessment")
	cli.PageFlags(fs, &req.Limit, &req.Cursor, query.DefaultLimit, query.MaxLimit)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("findings list takes no arguments")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.ListFindings(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		if len(res.Findings) == 0 {
			fmt.Fprintln(w, "no findings; record one with `flameox findings record --kind K --title T --claim C --evidence-level L --evidence TYPE:ID`")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FINDING\tREVISION\tKIND\tASSESSMENT\tLIFECYCLE\tCREATED\tTITLE")
		for _, f := range res.Findings {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", f.FindingID, f.Revision, f.Kind, f.Assessment, f.Lifecycle, f.CreatedAt.Format(time.RFC3339), cli.Cut(cli.Safe(f.Title), 60))
		}
		tw.Flush()
		pageFooter(w, res.Page, "findings")
	})
}
