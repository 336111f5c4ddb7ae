package flameox

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
)

// recordRecipes are the analyses `analyze record` persists: each is its
// own command run with --record, so what is recorded is exactly what the
// command prints (MCP record_analysis takes the same recipes).
var recordRecipes = map[string]func(context.Context, *Context, []string) error{
	"hotspots":  analyzeHotspots,
	"scaling":   analyzeScaling,
	"memory":    analyzeMemory,
	"failures":  analyzeFailures,
	"execution": analyzeExecution,
	"pytorch":   analyzePyTorch,
}

// analyzeRecordCommands are analyze record.
func analyzeRecordCommands() []*Command {
	return []*Command{{Name: "analyze record", Args: "RECIPE ARGS...",
		Summary: "run an analysis and persist its result with typed provenance (the recipe's own command with --record: hotspots RUN_OR_ARTIFACT, scaling EXPERIMENT_ID, memory RUN_ARTIFACT_OR_RUN_SET, execution RUN, pytorch RUN_OR_ARTIFACT, failures)",
		MCPTool: "record_analysis", Run: analyzeRecord}}
}

func analyzeRecord(ctx context.Context, c *Context, args []string) error {
	names := make([]string, 0, len(recordRecipes))
	for name := range recordRecipes {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
		if len(args) > 0 {
			fmt.Fprintf(c.Env.Stdout, "usage: flameox analyze record RECIPE ARGS...\n\nRecipes: %s; each takes its command's arguments and flags\n(flameox analyze RECIPE --help), and is recorded as with --record.\n", strings.Join(names, ", "))
			return nil
		}
		return cli.Usagef("analyze record needs a recipe: %s", strings.Join(names, ", "))
	}
	run, ok := recordRecipes[args[0]]
	if !ok {
		return cli.Usagef("analyze record: unknown recipe %q (recipes: %s)", args[0], strings.Join(names, ", "))
	}
	rest := args[1:]
	if !slices.Contains(rest, "--record") {
		rest = append(slices.Clone(rest), "--record")
	}
	return run(ctx, c, rest)
}
