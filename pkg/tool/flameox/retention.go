package flameox

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/retention"
)

const (
	gcCLIOnly         = "administrative: retention moves corpus files to trash; SPEC §8 keeps gc off MCP"
	purgeCLIOnly      = "administrative: deletes trash for good; SPEC §8 keeps purge off MCP"
	restoreCLIOnly    = "administrative: moves files back into the corpus, the undo of gc"
	trashCLIOnly      = "lists what gc moved to trash; only a person restores or purges it"
	quarantineCLIOnly = "administrative: quarantine is set aside by recover and repair, which are CLI-only; reading it is part of that work"
)

// retentionCommands are gc, gc list, gc restore, gc purge and quarantine
// list|show|restore (pkg/retention). The verbs come before gc itself:
// lookup takes the first command whose name prefixes the arguments.
func retentionCommands() []*Command {
	return []*Command{
		{Name: "gc restore", Args: "TRASH_ID", Summary: "put everything one gc --apply moved to trash back, byte for byte (digests checked)", CLIOnly: restoreCLIOnly, Run: gcRestore},
		{Name: "gc purge", Args: "[--older-than 30d]", Summary: "delete trash older than the bound for good (default retention.purge_after_days)", CLIOnly: purgeCLIOnly, Run: gcPurge},
		{Name: "gc list", Summary: "the trash: each gc --apply's id, state, items and bytes", CLIOnly: trashCLIOnly, Run: gcList},
		{Name: "gc", Args: "[--apply] [--min-age D] [--keep-commits N]", Summary: "what no retention root reaches (orphaned staging and generations, superseded files, unregistered artifacts, old commits), why, and its bytes; --apply moves it to trash", CLIOnly: gcCLIOnly, Run: gcCmd},
		{Name: "quarantine list", Summary: "what recover and repair set aside: id, kind, original path, reason, bytes", CLIOnly: quarantineCLIOnly, Run: quarantineList},
		{Name: "quarantine show", Args: "QUARANTINE_ID", Summary: "one quarantined entry with every file's digest", CLIOnly: quarantineCLIOnly, Run: quarantineShow},
		{Name: "quarantine restore", Args: "QUARANTINE_ID", Summary: "move a quarantined entry back to its original path (which must be free)", CLIOnly: quarantineCLIOnly, Run: quarantineRestore},
	}
}

func (c *Context) gcNow() time.Time {
	if c.Env.Now != nil {
		return c.Env.Now()
	}
	return time.Now()
}

func gcCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("gc", "[--apply [--plan DIGEST]] [--min-age D] [--keep-commits N]")
	apply := fs.Bool("apply", false, "move what the plan lists to trash (default: print the plan only)")
	planDigest := fs.String("plan", "", "with --apply: refuse unless the fresh plan has this digest (the dry run prints it)")
	minAge := fs.String("min-age", "", "collect nothing younger, e.g. 0s, 36h, 7d (default: retention.min_age_seconds)")
	keep := fs.Int("keep-commits", 0, "commits before HEAD kept whole (default: retention.keep_commits)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if !fs.Changed("keep-commits") {
		*keep = -1
	}
	if fs.NArg() != 0 {
		return cli.Usagef("gc takes no arguments (its verbs: list, restore, purge)")
	}
	if *planDigest != "" && !*apply {
		return cli.Usagef("--plan goes with --apply")
	}
	opt, err := retention.FlagOptions(c.gcNow(), *minAge, *keep)
	if err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	if !*apply {
		p, err := retention.MakePlan(ctx, ws, opt)
		if err != nil {
			return err
		}
		return c.emit(p, func(w io.Writer) { renderGCPlan(w, p, false) })
	}
	res, err := retention.Apply(ctx, ws, opt, *planDigest)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		for _, id := range res.Resumed {
			fmt.Fprintf(w, "put back trash %s, which an interrupted gc or restore left half-moved\n", id)
		}
		if res.TrashID == "" {
			fmt.Fprintln(w, "nothing to collect")
			return
		}
		renderGCPlan(w, res.Plan, true)
		fmt.Fprintf(w, "moved %d item(s), %d file(s), %s to trash %s\n", res.MovedItems, res.MovedFiles, gcBytes(res.MovedBytes), res.TrashID)
		fmt.Fprintf(w, "undo: flameox gc restore %s; free the space: flameox gc purge --older-than 0s\n", res.TrashID)
	})
}

var kindTitles = map[string]string{
	retention.KindStaging:    "orphaned staging",
	retention.KindOrphan:     "orphaned generations",
	retention.KindSuperseded: "superseded generations (files)",
	retention.KindArtifact:   "unregistered artifacts",
	retention.KindTempObject: "incomplete objects",
	retention.KindCommit:     "commits beyond the kept history",
}

func renderGCPlan(w io.Writer, p *retention.Plan, applied bool) {
	r := p.Roots
	fmt.Fprintf(w, "head %s; roots: %d commit(s) kept whole (HEAD and %d before it, and those evidence names), %d pinned for provenance\n",
		corpus.Short(r.HeadCommitID), r.Commits, p.KeepCommits, r.PinnedCommits)
	refs := make([]string, 0, len(r.ReferencedBy))
	for k, n := range r.ReferencedBy {
		refs = append(refs, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(refs)
	fmt.Fprintf(w, "kept: %d generation(s) whole, %d superseded manifest(s), %d referenced artifact(s); evidence references: %s\n",
		r.Generations, r.ManifestsOnly, r.Artifacts, gcOrNone(strings.Join(refs, ", ")))
	for _, id := range p.Interrupted {
		fmt.Fprintf(w, "interrupted trash %s: the next gc --apply, restore or purge puts it back\n", id)
	}
	if len(p.Items) == 0 {
		fmt.Fprintf(w, "nothing to collect (nothing unreachable older than %s)\n", p.Cutoff.Format(time.RFC3339))
		return
	}
	kinds := make([]string, 0, len(p.ByKind))
	for k := range p.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t := p.ByKind[k]
		fmt.Fprintf(w, "\n%s: %d, %s\n", kindTitles[k], t.Items, gcBytes(t.Bytes))
		shown := 0
		for _, it := range p.Items {
			if it.Kind != k {
				continue
			}
			if shown == 20 {
				fmt.Fprintf(w, "  … %d more (--json lists every one)\n", t.Items-shown)
				break
			}
			shown++
			fmt.Fprintf(w, "  %s  %s  %s\n", cli.Safe(it.ID), gcBytes(it.Bytes), cli.Safe(it.Reason))
		}
	}
	verb := "would free"
	if applied {
		verb = "moved"
	}
	fmt.Fprintf(w, "\ntotal: %d item(s), %s %s (plan %s)\n", len(p.Items), verb, gcBytes(p.TotalBytes), p.PlanDigest)
	if !applied {
		fmt.Fprintf(w, "apply exactly this plan: flameox gc --apply --plan %s\n", p.PlanDigest)
	}
}

func gcOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func gcBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}

func gcList(_ context.Context, c *Context, args []string) error {
	fs := c.flags("gc list", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	l, err := retention.List(ws)
	if err != nil {
		return err
	}
	return c.emit(l, func(w io.Writer) {
		if len(l.Trash) == 0 {
			fmt.Fprintln(w, "the trash is empty")
			return
		}
		for _, t := range l.Trash {
			fmt.Fprintf(w, "%s  %-11s  %d item(s)  %s\n", t.TrashID, t.State, t.Items, gcBytes(t.TotalBytes))
		}
	})
}

func gcRestore(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("gc restore", "TRASH_ID")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("gc restore needs TRASH_ID (flameox gc list shows them)")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := retention.Restore(ctx, ws, fs.Arg(0))
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "restored %d item(s), %d file(s), %s from trash %s; every digest matches\n", res.Items, res.Files, gcBytes(res.Bytes), res.TrashID)
	})
}

func gcPurge(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("gc purge", "[--older-than D]")
	olderThan := fs.String("older-than", "", "delete trash older than this, e.g. 30d, 36h, 0s (default: retention.purge_after_days)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.Usagef("gc purge takes no arguments")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	age := ws.Config.Retention.PurgeAfter()
	if *olderThan != "" {
		if age, err = retention.ParseAge(*olderThan); err != nil {
			return err
		}
	}
	res, err := retention.Purge(ctx, ws, age, c.gcNow())
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		for _, id := range res.Resumed {
			fmt.Fprintf(w, "put back trash %s, which an interrupted gc or restore left half-moved\n", id)
		}
		fmt.Fprintf(w, "purged %d trash entr%s (%s) created before %s; kept %d\n", len(res.Purged), gcPlural(len(res.Purged), "y", "ies"),
			gcBytes(res.Bytes), res.Before.Format(time.RFC3339), len(res.Kept))
	})
}

func gcPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func quarantineList(_ context.Context, c *Context, args []string) error {
	fs := c.flags("quarantine list", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	l, err := retention.ListQuarantine(ws)
	if err != nil {
		return err
	}
	return c.emit(l, func(w io.Writer) {
		if len(l.Entries) == 0 {
			fmt.Fprintln(w, "nothing is quarantined")
			return
		}
		for _, q := range l.Entries {
			fmt.Fprintf(w, "%s  %s  %s  %s  %s\n", q.QuarantineID, q.Kind, q.OriginalPath, gcBytes(q.Bytes), cli.Safe(q.Reason))
		}
	})
}

func quarantineShow(_ context.Context, c *Context, args []string) error {
	fs := c.flags("quarantine show", "QUARANTINE_ID")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("quarantine show needs QUARANTINE_ID (flameox quarantine list shows them)")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	q, err := retention.ShowQuarantine(ws, fs.Arg(0))
	if err != nil {
		return err
	}
	return c.emit(q, func(w io.Writer) {
		fmt.Fprintf(w, "quarantine %s (%s, %s)\noriginal   %s\nstored     %s\nreason     %s\ndetected   %s\n",
			q.QuarantineID, q.Kind, q.State, q.OriginalPath, q.StoredPath, cli.Safe(q.Reason), q.DetectedAt.Format(time.RFC3339))
		if q.Operation != "" {
			fmt.Fprintf(w, "operation  %s\n", cli.Safe(q.Operation))
		}
		for _, f := range q.Contents {
			fmt.Fprintf(w, "  %s  %d  %s\n", f.SHA256, f.Bytes, f.Path)
		}
		if q.Restorable {
			fmt.Fprintf(w, "restore: flameox quarantine restore %s\n", q.QuarantineID)
		} else if q.State == retention.StateQuarantined {
			fmt.Fprintf(w, "not restorable now: %s exists\n", q.OriginalPath)
		}
	})
}

func quarantineRestore(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("quarantine restore", "QUARANTINE_ID")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("quarantine restore needs QUARANTINE_ID (flameox quarantine list shows them)")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := retention.RestoreQuarantine(ctx, ws, fs.Arg(0))
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "restored %s to %s (%d file(s), %s)\n", res.QuarantineID, res.RestoredTo, res.Files, gcBytes(res.Bytes))
	})
}
