// Package foxcompare is fox-compare: it freezes run sets and compares two
// of them, one record per invocation on stdout, and never writes the
// corpus.
//
// Usage:
//
//	fox-compare freeze --runs ID,ID... [--label L]
//	fox-compare compare BASELINE_SET CANDIDATE_SET --metric M [--subject S] [--polarity P] [--threshold T] [--confidence C] [--method M] [--seed N] [--resamples N]
//
// freeze writes a `run_set` record (pinned at HEAD, every run checked
// there) for fox-publish; compare writes a `comparison_result` record:
// the median paired log ratio over complete blocks with its confidence
// interval (exact order statistics unless --method says otherwise), the decision and the validity (pkg/compare). An
// invalid comparison exits 6 after its record, naming the mismatches.
package foxcompare

import (
	"context"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/runset"
	"github.com/flameox/flameox/pkg/workspace"
)

const usage = `usage: fox-compare <verb> [flags]

Verbs:
  freeze --runs ID,ID... [--label L]                    freeze published runs as a run set (one run_set record)
  compare BASELINE_SET CANDIDATE_SET --metric M [...]    compare two run sets block by block (one comparison_result record)`

// Run is fox-compare's entry point.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	env.Mode = cli.Records
	if handled, err := cli.HelpVerb(env, usage, args); handled {
		return err
	}
	switch args[0] {
	case "freeze":
		return freezeCmd(ctx, env, args[1:])
	case "compare":
		return compareCmd(ctx, env, args[1:])
	}
	return cli.Usagef("unknown verb %q", args[0])
}

func freezeCmd(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "fox-compare freeze", "usage: fox-compare freeze --runs ID,ID... [--label L]")
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	runs := fs.StringSlice("runs", nil, "published run ids, comma-separated or repeated")
	label := fs.String("label", "", "what the set is, e.g. baseline")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if len(*runs) == 0 || fs.NArg() != 0 {
		return cli.Usagef("freeze needs --runs ID,ID...")
	}
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	members := make([]inquiry.Member, len(*runs))
	for i, id := range *runs {
		members[i] = inquiry.Member{RunID: strings.TrimSpace(id)}
	}
	rs, err := runset.Freeze(ctx, ws.Root, runset.Request{Members: members, CreatedAt: env.Now(),
		Selection: runset.Selection{Method: runset.MethodExplicit, Label: *label}})
	if err != nil {
		return err
	}
	return record.NewWriter(env.Stdout).Write(inquiry.New(ws.Root, rs))
}

func compareCmd(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "fox-compare compare", "usage: fox-compare compare BASELINE_SET CANDIDATE_SET --metric M [flags]")
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	var req compare.ConfirmRequest
	req.Flags(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 || req.Metric == "" {
		return cli.Usagef("compare needs BASELINE_SET, CANDIDATE_SET and --metric M")
	}
	req.Baseline, req.Candidate = fs.Arg(0), fs.Arg(1)
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	c, err := compare.Confirm(ctx, ws, req)
	if err != nil {
		return err
	}
	if err := record.NewWriter(env.Stdout).Write(record.NewResult("comparison_result", c)); err != nil {
		return err
	}
	return compare.Exit(c)
}
