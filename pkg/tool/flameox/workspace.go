package flameox

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/status"
)

func initCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("init", "[PATH]")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return cli.Usagef("init takes at most one PATH")
	}
	root := c.Dir
	if fs.NArg() == 1 {
		root = fs.Arg(0)
		if !filepath.IsAbs(root) {
			root = filepath.Join(c.Dir, root)
		}
	}
	out, ws, err := status.Init(ctx, root, c.Env.Now(), publish.FirstCommit)
	if err != nil {
		return err
	}
	st := out.Status
	return c.emit(out, func(w io.Writer) {
		if len(out.Created) == 0 {
			fmt.Fprintf(w, "Workspace %s already initialized; nothing changed.\n", cli.Safe(ws.Root))
		} else {
			fmt.Fprintf(w, "Initialized flameox workspace in %s\n", cli.Safe(ws.Root))
		}
		corpusState := "empty corpus"
		if st.Head.Generations > 0 || st.Runs.Total > 0 {
			corpusState = fmt.Sprintf("%d generation(s), %d run(s)", st.Head.Generations, st.Runs.Total)
		}
		fmt.Fprintf(w, "  workspace id  %s\n  head          %s (%s)\n", st.Workspace.WorkspaceID, corpus.Short(st.Head.CommitID), corpusState)
		if st.Runs.Total == 0 {
			fmt.Fprintln(w, "Next: flameox import PATH   (or declare workloads in flameox.toml)")
		}
	})
}

func statusCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("status", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	st, err := status.Collect(ctx, ws)
	if err != nil {
		return err
	}
	return c.emit(st, func(w io.Writer) { renderStatus(w, st) })
}

func renderStatus(w io.Writer, st *status.Status) {
	fmt.Fprintf(w, "workspace   %s\n", st.Workspace.WorkspaceID)
	fmt.Fprintf(w, "root        %s\n", cli.Safe(st.Workspace.Root))
	fmt.Fprintf(w, "head        %s (%d generation(s), %s)\n", corpus.Short(st.Head.CommitID), st.Head.Generations, st.Head.CreatedAt.Format("2006-01-02 15:04:05Z"))
	fmt.Fprintf(w, "runs        %d", st.Runs.Total)
	if st.Runs.Total > 0 {
		fmt.Fprintf(w, "  (capture: %s; execution: %s)", counts(st.Runs.ByCapture), counts(st.Runs.ByExecution))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "artifacts   %d object(s), %s\n", st.Artifacts.Objects, bytesHuman(st.Artifacts.Bytes))
	kinds := make([]string, 0, len(st.Artifacts.ByKind))
	for k := range st.Artifacts.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		ks := st.Artifacts.ByKind[k]
		fmt.Fprintf(w, "  %-22s %d object(s), %s\n", k, ks.Objects, bytesHuman(ks.Bytes))
	}
	for _, c := range st.Caches {
		fmt.Fprintf(w, "cache       %s: %d file(s), %s (contained captures; deletable)\n", cli.Safe(c.Name), c.Files, bytesHuman(c.Bytes))
	}
	switch {
	case !st.Catalog.Exists:
		fmt.Fprintln(w, "catalog     not built (queries do not need it; `flameox catalog rebuild`)")
	case !st.Catalog.Fresh:
		fmt.Fprintln(w, "catalog     stale: built at an older commit (`flameox catalog rebuild`)")
	default:
		fmt.Fprintln(w, "catalog     fresh")
	}
	if st.Runs.Unpublished > 0 {
		fmt.Fprintf(w, "unpublished %d run(s) not yet published (pipe their records to fox-publish)\n", st.Runs.Unpublished)
	}
	if len(st.StaleRuns) > 0 {
		fmt.Fprintf(w, "stale runs  %s (run `flameox recover`)\n", strings.Join(st.StaleRuns, ", "))
	}
	if len(st.QuarantinedRuns) > 0 {
		fmt.Fprintf(w, "quarantined %s\n", strings.Join(st.QuarantinedRuns, ", "))
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(w, "warning: %s\n", cli.Safe(warn))
	}
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func bytesHuman(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
