package flameox

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/mcpserver"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/services/publishing"
	"github.com/flameox/flameox/pkg/version"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// Command is one porcelain command. Every command names the MCP tool that
// offers the same capability, or says why it is CLI-only; a test keeps the
// two surfaces from drifting apart.
type Command struct {
	Name    string // "runs list"
	Args    string // positional synopsis
	Summary string
	MCPTool string // MCP tool with the same capability ("" until it exists)
	CLIOnly string // why there is deliberately no MCP tool
	Run     func(ctx context.Context, c *Context, args []string) error
}

// Context carries the process and the global flags into a command.
type Context struct {
	Env       *cli.Env
	JSON      bool
	Workspace string // --workspace
	Dir       string // --project-root / -C, or the working directory
	Verbose   bool   // --verbose, where a command has it
	color     string // --color (applyTerminal puts it in Env.Color)
	noColor   bool   // --no-color
}

// Commands returns the porcelain command table.
func Commands() []*Command {
	cmds := []*Command{
		{Name: "init", Args: "[PATH]", Summary: "create the .diagnostics workspace at PATH (default: the project root)", MCPTool: "initialize_workspace", Run: initCmd},
		{Name: "status", Summary: "workspace identity, published head, runs, artifacts and warnings", MCPTool: "workspace_status", Run: statusCmd},
		{Name: "import", Args: "PATH...", Summary: "import existing artifacts, one new run each", MCPTool: "import_artifact", Run: importCmd},
		{Name: "runs list", Summary: "list runs, newest first, with what tells them apart: workload and parameters (or the imported file), adapter, outcome, wall time, peak RSS, benchmark count; filter by --workload, --parameter KEY=VALUE, status, time", MCPTool: "list_runs", Run: runsList},
		{Name: "runs show", Args: "RUN_ID", Summary: "show a run: what it ran, its outcome and resources, artifacts and limitations", MCPTool: "get_run", Run: runsShow},
		{Name: "runs output", Args: "RUN_ID", Summary: "page a run's stored stdout or stderr (--stream, --offset, --max-bytes), escaped", MCPTool: "get_run_output", Run: runsOutput},
		{Name: "artifacts list", Summary: "list stored artifacts", MCPTool: "list_artifacts", Run: artifactsList},
		{Name: "artifacts show", Args: "ARTIFACT_ID", Summary: "show an artifact's content facts and registrations", MCPTool: "get_artifact", Run: artifactsShow},
		{Name: "workload list", Summary: "declared workloads and their approval", MCPTool: "list_workloads", Run: workloadList},
		{Name: "workload show", Args: "NAME", Summary: "a workload's definition (argv, env, parameters and their domains, options, oracle), digest and approval", MCPTool: "get_workload", Run: workloadShow},
		{Name: "workload approve", Args: "NAME", Summary: "approve a workload at its current definition, or show the diff of a pending proposal (MCP propose_workload) and adopt it", CLIOnly: "approval is the human's decision; agents can never approve what they run (they propose)", Run: workloadApprove},
		{Name: "capture plan", Args: "ADAPTER --workload NAME", Summary: "show the exact capture without running anything", MCPTool: "plan_capture", Run: capturePlan},
		{Name: "capture run", Args: "ADAPTER --workload NAME", Summary: "capture an approved workload and publish the run", MCPTool: "execute_capture_plan", Run: captureRun},
		{Name: "capabilities", Summary: "every adapter's status, version and remediation", MCPTool: "list_capabilities", Run: capabilities},
		{Name: "recover", Summary: "finish what crashes left: close runs whose owner is provably gone, rebuild projections, publish unpublished runs", CLIOnly: "administrative: rewrites run state after crashes", Run: recoverCmd},
		{Name: "analyze hotspots", Args: "RUN_OR_ARTIFACT", Summary: "top self and inclusive frames of a profile, in go tool pprof -top's columns (--focus, --ignore; --format text, markdown or json)", MCPTool: "analyze_hotspots", Run: analyzeHotspots},
		{Name: "stacks callers", Args: "RUN_OR_ARTIFACT FRAME_OR_REGEXP", Summary: "frames that call a frame (named by id, or by a regexp of function names like pprof -peek)", MCPTool: "get_frame_callers", Run: stacksEdges(true)},
		{Name: "stacks callees", Args: "RUN_OR_ARTIFACT FRAME_OR_REGEXP", Summary: "frames a frame calls", MCPTool: "get_frame_callees", Run: stacksEdges(false)},
		{Name: "stacks examples", Args: "RUN_OR_ARTIFACT FRAME_OR_REGEXP", Summary: "the heaviest stored stacks through a frame", MCPTool: "get_stack_examples", Run: stacksExamples},
		{Name: "open", Args: "RUN_OR_ARTIFACT [--launch]", Summary: "the native viewer command for an artifact or a run's profile, on a free local port (--launch runs it)", MCPTool: "get_native_viewer_plan", Run: openCmd},
		{Name: "measurements query", Summary: "raw measured values in their units, sorted by subject (benchmark) and value index; filter by run, workload, --parameter KEY=VALUE, --subject", MCPTool: "query_measurements", Run: measurementsQuery},
		{Name: "measurements summary", Args: "RUN_ID", Summary: "per benchmark and metric: n, median with benchstat's 95% interval, min, max, IQR, and warnings when n is small or the spread wide", MCPTool: "summarize_measurements", Run: measurementsSummary},
		{Name: "evidence get", Args: "TYPE ID", Summary: "one typed piece of evidence (run, artifact, generation, analysis, ...)", MCPTool: "get_evidence", Run: evidenceGet},
		{Name: "catalog rebuild", Summary: "rebuild catalog.duckdb from the corpus", CLIOnly: "administrative: replaces a workspace file; queries never need it", Run: catalogRebuild},
		{Name: "catalog validate", Summary: "check catalog.duckdb holds only what flameox puts there", MCPTool: "validate_catalog", Run: catalogValidate},
		{Name: "catalog compact", Summary: "rewrite small generations into one segment per table", CLIOnly: "administrative: rewrites the published corpus", Run: catalogCompact},
		{Name: "catalog status", Summary: "when the catalog was built and whether it is fresh", MCPTool: "catalog_status", Run: catalogStatus},
		{Name: "mcp serve", Args: "[--project-root DIR] [--init]", Summary: "run the MCP server on stdio (what an agent host launches)", CLIOnly: "it is the MCP server itself", Run: mcpCmd("serve")},
		{Name: "mcp inspect", Args: "[--json]", Summary: "every MCP tool's schemas and annotations, the resources and the instructions", CLIOnly: "describes the MCP server itself", Run: mcpCmd("inspect")},
		{Name: "version", Summary: "print the flameox version", CLIOnly: "the MCP initialize reply already carries the server version", Run: versionCmd},
	}
	cmds = append(cmds, inquiryCommands()...)
	cmds = append(cmds, experimentCommands()...)
	cmds = append(cmds, compareCommands()...)
	cmds = append(cmds, diffCommands()...)
	cmds = append(cmds, comparisonRecordCommands()...)
	cmds = append(cmds, scalingCommands()...)
	cmds = append(cmds, memoryCommands()...)
	cmds = append(cmds, failuresCommands()...)
	cmds = append(cmds, traceCommands()...)
	cmds = append(cmds, executionCommands()...)
	cmds = append(cmds, pytorchCommands()...)
	cmds = append(cmds, exportCommands()...)
	cmds = append(cmds, renderCommands()...)
	cmds = append(cmds, completionCommands()...)
	cmds = append(cmds, integrityCommands()...)
	cmds = append(cmds, retentionCommands()...)
	cmds = append(cmds, findingsCommands()...)
	cmds = append(cmds, reportCommands()...)
	cmds = append(cmds, analyzeRecordCommands()...)
	cmds = append(cmds, setupCommands()...)
	cmds = append(cmds, fleetCommands()...)
	cmds = append(cmds, historyCommands()...)
	cmds = append(cmds, pictureCommands()...)
	return cmds
}

const banner = `flameox — runtime evidence for coding agents, engineers and CI

usage: flameox [--json] [--workspace DIR] [-C DIR] <command> [args]
`

// Run is the flameox entry point.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	c := &Context{Env: env, Dir: env.Dir}
	global := pflag.NewFlagSet("flameox", pflag.ContinueOnError)
	global.SetInterspersed(false)
	global.SetOutput(io.Discard)
	help := global.BoolP("help", "h", false, "")
	showVersion := global.Bool("version", false, "")
	global.BoolVar(&c.JSON, "json", false, "")
	global.StringVar(&c.Workspace, "workspace", "", "")
	global.StringVarP(&c.Dir, "project-root", "C", env.Dir, "")
	c.terminalFlags(global)
	if err := cli.Parse(global, args); err != nil {
		return err
	}
	if err := c.applyTerminal(); err != nil {
		return err
	}
	if c.JSON {
		env.Mode = cli.JSON
	}
	rest := global.Args()
	switch {
	case *showVersion:
		return versionCmd(ctx, c, nil)
	case len(rest) == 2 && rest[0] == "help" && len(groupVerbs(rest[1])) > 0:
		return groupHelp(env, rest[1], groupVerbs(rest[1]), []string{"help"})
	case *help || len(rest) == 0 || rest[0] == "help":
		printHelp(env.Stdout)
		if len(rest) == 0 && !*help {
			return cli.Usagef("missing command")
		}
		return nil
	}
	cmd, cmdArgs := lookup(rest)
	if cmd == nil {
		if verbs := groupVerbs(rest[0]); len(verbs) > 0 {
			return groupHelp(env, rest[0], verbs, rest[1:])
		}
		return runExtension(ctx, env, rest)
	}
	return cmd.Run(ctx, c, cmdArgs)
}

// groupVerbs returns the commands of a group ("runs" gives runs list and
// runs show), nil when group names no group.
func groupVerbs(group string) []*Command {
	var out []*Command
	for _, cmd := range Commands() {
		if cmd.Name == group {
			return nil // a command of its own (export), with verbs beside it (export corpus)
		}
		if g, _, ok := strings.Cut(cmd.Name, " "); ok && g == group {
			out = append(out, cmd)
		}
	}
	return out
}

// groupHelp answers a group named without one of its verbs: `flameox runs
// --help` (and `help`) prints the group's verbs and succeeds; a bare
// `flameox runs` or an unknown verb prints them and fails as a usage
// error, like a bare `flameox`.
func groupHelp(env *cli.Env, group string, verbs []*Command, args []string) error {
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = strings.TrimPrefix(v.Name, group+" ")
	}
	w := env.Stdout
	asked := len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help")
	if !asked {
		w = env.Stderr
	}
	fmt.Fprintf(w, "usage: flameox %s <%s> [args]\n\nCommands:\n", group, strings.Join(names, "|"))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, v := range verbs {
		fmt.Fprintf(tw, "  %s %s\t%s\n", v.Name, v.Args, v.Summary)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nRun 'flameox %s VERB --help' for a verb's flags.\n", group)
	switch {
	case asked:
		return nil
	case len(args) == 0:
		return cli.Usagef("%s needs a verb: %s", group, strings.Join(names, ", "))
	}
	return fault.New(fault.InvalidArguments, "%s has no verb %q; its verbs are %s", group, args[0], strings.Join(names, ", ")).
		Fix("Run 'flameox " + group + " --help' for the list.")
}

// lookup finds the longest command name that prefixes args.
// (`export corpus` before `export`, whose first argument is a format).
func lookup(args []string) (*Command, []string) {
	var best *Command
	n := 0
	for _, cmd := range Commands() {
		words := strings.Fields(cmd.Name)
		if len(words) > n && len(args) >= len(words) && strings.Join(args[:len(words)], " ") == cmd.Name {
			best, n = cmd, len(words)
		}
	}
	if best == nil {
		return nil, nil
	}
	return best, args[n:]
}

func printHelp(w io.Writer) {
	fmt.Fprint(w, banner)
	fmt.Fprintln(w, "\nCommands:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	cmds := Commands()
	sort.SliceStable(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	for _, c := range cmds {
		fmt.Fprintf(tw, "  %s %s\t%s\n", c.Name, c.Args, c.Summary)
	}
	tw.Flush()
	fmt.Fprint(w, `
Global flags:
  --json             print the domain result as JSON (the same model as MCP)
  --workspace DIR    use this .diagnostics directory instead of discovering one
  -C, --project-root DIR   start workspace discovery (and init) from DIR
  --version          print the version
  -q, --quiet        no progress and no information lines on stderr (errors still)
  --color WHEN       colour: auto (a terminal only; NO_COLOR, TERM=dumb turn it off), always or never
  --no-color         the same as --color=never

Any other command runs fox-<command> from next to flameox or from PATH.
Exit codes: docs/exit-codes.md.
`)
}

// flags returns a command flag set that also accepts the global flags, so
// `flameox runs list --json` works as well as `flameox --json runs list`.
func (c *Context) flags(name, synopsis string) *pflag.FlagSet {
	fs := cli.NewFlags(c.Env, "flameox "+name, "usage: flameox "+name+" "+synopsis)
	fs.BoolVar(&c.JSON, "json", c.JSON, "print the result as JSON")
	fs.StringVar(&c.Workspace, "workspace", c.Workspace, "workspace directory")
	c.terminalFlags(fs)
	return fs
}

func (c *Context) parse(fs *pflag.FlagSet, args []string) error {
	err := cli.Parse(fs, args)
	if c.JSON {
		c.Env.Mode = cli.JSON
	}
	if err == nil {
		err = c.applyTerminal()
	}
	return err
}

// workspace discovers the workspace for a command.
// outputFormat applies a command's --format: json switches to the JSON
// result (as --json does); the others must be among allowed.
func (c *Context) outputFormat(format string, allowed ...string) error {
	if format == "json" {
		c.JSON, c.Env.Mode = true, cli.JSON
		return nil
	}
	if !slices.Contains(allowed, format) {
		return cli.Usagef("--format is %s or json, not %q", strings.Join(allowed, ", "), format)
	}
	return nil
}

func (c *Context) workspace() (*workspace.Workspace, error) {
	return workspace.Discover(c.Dir, c.Workspace)
}

// emit prints result as JSON or through human.
func (c *Context) emit(result any, human func(w io.Writer)) error {
	if c.JSON {
		return cli.PrintJSON(c.Env.Stdout, result)
	}
	human(c.Env.Stdout)
	return nil
}

func versionCmd(_ context.Context, c *Context, _ []string) error {
	v := struct {
		SchemaVersion int    `json:"schema_version"`
		Version       string `json:"version"`
	}{1, version.Version()}
	return c.emit(v, func(w io.Writer) { fmt.Fprintln(w, "flameox", v.Version) })
}

// publisher returns the publisher every tool uses (pkg/services).
func (c *Context) publisher(ws *workspace.Workspace) *publish.Publisher {
	return publishing.Publisher(ws, c.Env.Now)
}

// mcpCmd runs fox-mcp's command line (mcpserver.Command) in process,
// rooted at the project directory (a later --project-root wins).
func mcpCmd(verb string) func(context.Context, *Context, []string) error {
	return func(ctx context.Context, c *Context, args []string) error {
		pre := []string{verb, "--project-root", c.Dir}
		if verb == "inspect" && c.JSON {
			pre = append(pre, "--json")
		}
		return mcpserver.Command(ctx, c.Env, append(pre, args...))
	}
}
