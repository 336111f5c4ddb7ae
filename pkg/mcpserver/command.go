package mcpserver

// The command line of fox-mcp and `flameox mcp`: flags to Options, then
// Serve or Inspect.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
)

const commandUsage = `usage: fox-mcp <verb> [flags]

Verbs:
  serve [--project-root DIR] [--init]     run the MCP server on stdin/stdout
  inspect [--project-root DIR] [--json]   print tool schemas, annotations, resources and instructions`

// Command is the command line of the server and its inspector: fox-mcp's
// entry point, and `flameox mcp VERB ARGS...`, which calls it with args =
// [VERB, ARGS...], so the two are the same program.
func Command(ctx context.Context, env *cli.Env, args []string) error {
	if handled, err := cli.HelpVerb(env, commandUsage, args); handled {
		return err
	}
	switch args[0] {
	case "serve":
		return serveCommand(ctx, env, args[1:])
	case "inspect":
		return inspectCommand(ctx, env, args[1:])
	}
	return cli.Usagef("unknown verb %q (serve or inspect)", args[0])
}

// options parses the shared flags into server options.
func commandOptions(env *cli.Env, fs *pflag.FlagSet, args []string) (Options, error) {
	root := fs.String("project-root", env.Dir, "project directory; the workspace is DIR/.diagnostics")
	if err := cli.Parse(fs, args); err != nil {
		return Options{}, err
	}
	if fs.NArg() > 0 {
		_, verb, _ := strings.Cut(fs.Name(), " ")
		return Options{}, cli.Usagef("%s takes no arguments, got %q", verb, fs.Args())
	}
	dir := *root
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.Dir, dir)
	}
	return Options{ProjectRoot: dir, Now: env.Now, Environ: env.Environ,
		Logger: slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}, nil
}

func serveCommand(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "fox-mcp serve", "usage: fox-mcp serve [--project-root DIR] [--init]")
	initWS := fs.Bool("init", false, "create DIR/.diagnostics at startup when it is missing")
	opts, err := commandOptions(env, fs, args)
	if err != nil {
		return err
	}
	opts.Init = *initWS
	// Errors are reported on stderr only: stdout belongs to the protocol.
	env.Mode = cli.Human
	return Serve(ctx, opts, env.Stdin, env.Stdout)
}

func inspectCommand(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "fox-mcp inspect", "usage: fox-mcp inspect [--project-root DIR] [--json]")
	asJSON := fs.Bool("json", false, "print the inspection as JSON")
	opts, err := commandOptions(env, fs, args)
	if err != nil {
		return err
	}
	if *asJSON {
		env.Mode = cli.JSON
	}
	in, err := Inspect(ctx, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		return cli.PrintJSON(env.Stdout, in)
	}
	renderInspection(env.Stdout, in)
	return nil
}

func renderInspection(w io.Writer, in *Inspection) {
	fmt.Fprintf(w, "%s %s (protocol %s)\n\n", in.Server.Name, in.Server.Version, in.ProtocolVersion)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tHINTS\tARGUMENTS")
	for _, t := range in.Tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", cli.Name(t.Name), toolHints(t), toolArguments(t.InputSchema))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nResource templates:")
	for _, r := range in.ResourceTemplates {
		fmt.Fprintf(w, "  %s  (%s)\n", r.URITemplate, r.MIMEType)
	}
	fmt.Fprintf(w, "\nInstructions:\n%s\n\nSchemas: fox-mcp inspect --json\n", in.Instructions)
}

func toolHints(t *mcp.Tool) string {
	a := t.Annotations
	if a == nil {
		return "-"
	}
	var h []string
	flag := func(on bool, name string) {
		if on {
			h = append(h, name)
		}
	}
	flag(a.ReadOnlyHint, "read-only")
	flag(a.IdempotentHint, "idempotent")
	flag(a.DestructiveHint != nil && *a.DestructiveHint, "destructive")
	flag(a.OpenWorldHint != nil && *a.OpenWorldHint, "open-world")
	if !a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint) {
		h = append(h, "additive")
	}
	return strings.Join(h, ",")
}

func toolArguments(schema any) string {
	m, ok := schema.(map[string]any)
	if !ok {
		return "-"
	}
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			required[fmt.Sprint(r)] = true
		}
	}
	names := make([]string, 0, len(props))
	for p := range props {
		if !required[p] {
			p = "[" + p + "]"
		}
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool { return strings.Trim(names[i], "[]") < strings.Trim(names[j], "[]") })
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, " ")
}
