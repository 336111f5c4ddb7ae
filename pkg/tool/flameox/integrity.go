package flameox

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/integrity"
)

// integrityCommands are validate and repair (pkg/integrity).
func integrityCommands() []*Command {
	return []*Command{
		{Name: "validate", Args: "[--level quick|standard|full]", Summary: "prove the workspace intact or list exactly what is not: HEAD, commits, manifests (quick); every reference and the catalog (standard); every payload and Parquet file re-hashed (full); exit 5 when not intact",
			MCPTool: "validate_workspace", Run: validateCmd},
		{Name: "repair", Args: "[--apply PLAN_DIGEST]", Summary: "plan a repair of what full validation finds (quarantine corrupt artifacts, republish damaged generations from intact artifacts, rebuild the catalog) and what it would lose; --apply carries out exactly that plan",
			CLIOnly: "administrative: moves objects to quarantine and republishes the corpus; a person reviews the plan and applies its digest", Run: repairCmd},
	}
}

func validateCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("validate", "[--level quick|standard|full]")
	level := fs.String("level", "standard", "quick | standard | full")
	maxProblems := fs.Int("max-problems", 100, "problems listed (total counts them all)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	lv, ok := integrity.ParseLevel(*level)
	if !ok {
		return cli.Usagef("--level must be quick, standard or full, not %q", *level)
	}
	if *maxProblems < 1 {
		return cli.Usagef("--max-problems must be at least 1")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := integrity.ValidateWith(ctx, ws, lv, integrity.Options{MaxProblems: *maxProblems})
	if err != nil {
		return err
	}
	if err := c.emit(res, func(w io.Writer) { renderIntegrity(w, res) }); err != nil {
		return err
	}
	if !res.Valid {
		return &cli.NegativeResult{Code: fault.ExitIntegrity, Message: fmt.Sprintf("%d error(s); `flameox repair` shows what a repair would do and lose", res.Errors)}
	}
	return nil
}

func renderIntegrity(w io.Writer, res *integrity.IntegrityResult) {
	fmt.Fprintln(w, cli.Safe(res.Summary()))
	ch := res.Checked
	fmt.Fprintf(w, "checked %d commit(s), %d generation(s), %d Parquet file(s), %d artifact(s), %d run(s), %d reference(s)",
		ch.Commits, ch.Generations, ch.ParquetFiles, ch.Artifacts, ch.Runs, ch.References)
	if res.Level == integrity.Full {
		fmt.Fprintf(w, "; re-hashed %d byte(s)", ch.BytesHashed)
	}
	fmt.Fprintln(w)
	for _, p := range res.Problems {
		fmt.Fprintf(w, "%-7s %s %s\n", p.Severity, p.Code, cli.Safe(p.File))
		fmt.Fprintf(w, "        %s\n", cli.Safe(p.Message))
		if p.Expected != "" {
			fmt.Fprintf(w, "        expected %s\n", cli.Safe(p.Expected))
		}
		if p.Found != "" {
			fmt.Fprintf(w, "        found    %s\n", cli.Safe(p.Found))
		}
		if p.ByteRange != nil {
			fmt.Fprintf(w, "        bytes    [%d, %d)\n", p.ByteRange.Start, p.ByteRange.End)
		}
		if len(p.Dependents) > 0 {
			parts := make([]string, 0, len(p.Dependents))
			for _, d := range p.Dependents {
				s := d.Type + " " + d.ID
				if d.Relation != "" {
					s += " (" + d.Relation + ")"
				}
				parts = append(parts, cli.Safe(s))
			}
			more := ""
			if p.DependentsTotal > len(p.Dependents) {
				more = fmt.Sprintf(" and %d more", p.DependentsTotal-len(p.Dependents))
			}
			fmt.Fprintf(w, "        needed by %s%s\n", strings.Join(parts, ", "), more)
		}
		fmt.Fprintf(w, "        fix      %s\n", cli.Safe(p.Remediation.Command))
	}
	if res.Truncated {
		fmt.Fprintf(w, "… %d more problem(s) (--max-problems raises the bound; --json lists them the same way)\n", res.Total-len(res.Problems))
	}
}

func repairCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("repair", "[--apply PLAN_DIGEST]")
	apply := fs.String("apply", "", "carry out the plan with this plan_digest, nothing else")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	if *apply == "" {
		plan, err := integrity.Plan(ctx, ws)
		if err != nil {
			return err
		}
		return c.emit(plan, func(w io.Writer) { renderRepairPlan(w, plan) })
	}
	res, err := integrity.Apply(ctx, ws, *apply, c.publisher(ws))
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		for _, a := range res.Applied {
			switch a.Kind {
			case integrity.ActionResumeQuarantine:
				fmt.Fprintf(w, "resumed the interrupted %s\n", a.Quarantine)
			case integrity.ActionQuarantineFile:
				fmt.Fprintf(w, "quarantined %s in %s\n", a.Target.ID, a.Quarantine)
			case integrity.ActionQuarantineArtifact:
				fmt.Fprintf(w, "quarantined %s in %s\n", a.Target.ID, a.Quarantine)
			case integrity.ActionRepublishGeneration:
				fmt.Fprintf(w, "republished generation %s as %s\n", a.Target.ID, a.GenerationID)
			case integrity.ActionRebuildCatalog:
				fmt.Fprintln(w, "rebuilt catalog.duckdb")
			}
		}
		if len(res.Applied) == 0 {
			fmt.Fprintln(w, "nothing to do")
		}
		fmt.Fprintf(w, "HEAD is commit %s", corpus.Short(res.CommitID))
		if res.Unresolved > 0 {
			fmt.Fprintf(w, "; %d problem(s) have no automatic repair (`flameox repair` lists them)", res.Unresolved)
		}
		fmt.Fprintln(w, "\n`flameox validate --level full` checks the result")
	})
}

func renderRepairPlan(w io.Writer, p *integrity.RepairPlan) {
	if p.Intact {
		fmt.Fprintf(w, "nothing to repair: full validation at commit %s found no problem\n", corpus.Short(p.CommitID))
		return
	}
	at := "commit " + corpus.Short(p.CommitID)
	if p.CommitID == "" {
		at = "an unreadable HEAD"
	}
	fmt.Fprintf(w, "repair plan %s at %s\n", p.PlanDigest, at)
	for _, a := range p.Actions {
		fmt.Fprintf(w, "%s %s %s (%s)\n", a.Kind, a.Target.Type, a.Target.ID, strings.Join(a.Because, ", "))
		fmt.Fprintf(w, "    does:  %s\n", cli.Safe(a.Does))
		fmt.Fprintf(w, "    loses: %s\n", cli.Safe(a.Loses))
	}
	for _, u := range p.Unresolved {
		fmt.Fprintf(w, "unresolved %s %s\n", u.Code, cli.Safe(u.File))
		fmt.Fprintf(w, "    %s\n", cli.Safe(u.Message))
		fmt.Fprintf(w, "    why:   %s\n", cli.Safe(u.Why))
		fmt.Fprintf(w, "    loses: %s\n", cli.Safe(u.Loses))
	}
	if p.Apply != "" {
		fmt.Fprintf(w, "apply with: %s\n", p.Apply)
	} else {
		fmt.Fprintln(w, "no action can be applied")
	}
}
