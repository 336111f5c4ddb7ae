package foxgc

import (
	"context"
	"time"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/workspace"
)

// runRetention is `fox-gc gc [--apply [--plan DIGEST]] [--min-age D]
// [--keep-commits N]`, `fox-gc gc list` (the trash), `fox-gc restore
// TRASH_ID` and `fox-gc purge [--older-than D]`: one record each
// (gc_plan, gc_applied, gc_trash, gc_restored, gc_purged).
func runRetention(ctx context.Context, env *cli.Env, verb string, args []string) error {
	fs := cli.NewFlags(env, "fox-gc "+verb, usage)
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	var apply *bool
	var planDigest, minAge, olderThan *string
	var keep *int
	switch verb {
	case "gc":
		apply = fs.Bool("apply", false, "move what the plan lists to trash (default: print the plan only)")
		planDigest = fs.String("plan", "", "with --apply: refuse unless the fresh plan has this digest")
		minAge = fs.String("min-age", "", "collect nothing younger (default: retention.min_age_seconds)")
		keep = fs.Int("keep-commits", 0, "commits before HEAD kept whole (default: retention.keep_commits)")
	case "purge":
		olderThan = fs.String("older-than", "", "delete trash older than this (default: retention.purge_after_days)")
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if keep != nil && !fs.Changed("keep-commits") {
		*keep = -1
	}
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	var kind string
	var res any
	switch verb {
	case "gc":
		if fs.NArg() == 1 && fs.Arg(0) == "list" {
			kind = "gc_trash"
			if res, err = retention.List(ws); err != nil {
				return err
			}
			break
		}
		if fs.NArg() != 0 {
			return cli.Usagef("gc takes no arguments but list")
		}
		opt, err := retention.FlagOptions(now(env), *minAge, *keep)
		if err != nil {
			return err
		}
		if *apply {
			kind = "gc_applied"
			res, err = retention.Apply(ctx, ws, opt, *planDigest)
		} else {
			if *planDigest != "" {
				return cli.Usagef("--plan goes with --apply")
			}
			kind = "gc_plan"
			res, err = retention.MakePlan(ctx, ws, opt)
		}
		if err != nil {
			return err
		}
	case "restore":
		if fs.NArg() != 1 {
			return cli.Usagef("restore needs TRASH_ID")
		}
		kind = "gc_restored"
		if res, err = retention.Restore(ctx, ws, fs.Arg(0)); err != nil {
			return err
		}
	case "purge":
		if fs.NArg() != 0 {
			return cli.Usagef("purge takes no arguments")
		}
		age := ws.Config.Retention.PurgeAfter()
		if *olderThan != "" {
			if age, err = retention.ParseAge(*olderThan); err != nil {
				return err
			}
		}
		kind = "gc_purged"
		if res, err = retention.Purge(ctx, ws, age, now(env)); err != nil {
			return err
		}
	}
	return record.NewWriter(env.Stdout).Write(record.NewResult(kind, res))
}

func now(env *cli.Env) time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

// runQuarantine is `fox-gc quarantine list|show ID|restore ID`: one record
// each (quarantine_list, quarantine_entry, quarantine_restored).
func runQuarantine(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("quarantine needs a verb: list, show or restore")
	}
	verb := args[0]
	fs := cli.NewFlags(env, "fox-gc quarantine "+verb, usage)
	wsDir := fs.String("workspace", "", "workspace directory (default: nearest .diagnostics)")
	if err := cli.Parse(fs, args[1:]); err != nil {
		return err
	}
	ws, err := workspace.Discover(env.Dir, *wsDir)
	if err != nil {
		return err
	}
	var kind string
	var res any
	switch verb {
	case "list":
		if fs.NArg() != 0 {
			return cli.Usagef("quarantine list takes no arguments")
		}
		kind = "quarantine_list"
		res, err = retention.ListQuarantine(ws)
	case "show", "restore":
		if fs.NArg() != 1 {
			return cli.Usagef("quarantine %s needs QUARANTINE_ID", verb)
		}
		if verb == "show" {
			kind = "quarantine_entry"
			res, err = retention.ShowQuarantine(ws, fs.Arg(0))
		} else {
			kind = "quarantine_restored"
			res, err = retention.RestoreQuarantine(ctx, ws, fs.Arg(0))
		}
	default:
		return cli.Usagef("quarantine has no verb %q; its verbs are list, show and restore", verb)
	}
	if err != nil {
		return err
	}
	return record.NewWriter(env.Stdout).Write(record.NewResult(kind, res))
}
