package flameox

import (
	"context"
	"path/filepath"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/setup"
)

const setupCLIOnly = "rewrites the user's agent-host configuration, which an agent must not do to itself"

// setupCommands are setup and mcp install|uninstall.
func setupCommands() []*Command {
	return []*Command{
		{Name: "setup", Args: "[--HOST...|--all] [--yes] [--dry-run]",
			Summary: "add flameox's MCP server to agent hosts (--claude --cursor --codex --gemini --opencode --antigravity --vscode): shows the diff, asks, writes with a journal (--rollback undoes it, --verify starts the server and completes a handshake)",
			CLIOnly: setupCLIOnly, Run: setupCmd},
		{Name: "mcp install", Args: "--client HOST [--scope user|project]", Summary: "add flameox's MCP server entry to one host's configuration (no question asked)",
			CLIOnly: setupCLIOnly, Run: mcpInstall(false)},
		{Name: "mcp uninstall", Args: "--client HOST [--scope user|project]", Summary: "take flameox's MCP server entry out of one host's configuration",
			CLIOnly: setupCLIOnly, Run: mcpInstall(true)},
	}
}

// setupOptions locates the hosts' files for this process: $HOME and the
// XDG directories, the project root, and this binary's resolved path.
func (c *Context) setupOptions() (setup.Options, error) {
	exe := c.Env.Executable
	if exe == "" {
		return setup.Options{}, fault.New(fault.InternalError, "cannot tell where the flameox binary is")
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	exe, _ = filepath.Abs(exe)
	root, err := filepath.Abs(c.Dir)
	if err != nil {
		return setup.Options{}, fault.Wrap(fault.InvalidArguments, err, "project root %s", c.Dir)
	}
	return setup.OptionsFromEnv(c.Env.Getenv, root, exe), nil
}

func (c *Context) setupIO() setup.IO {
	var environ []string
	if c.Env.Environ != nil {
		environ = c.Env.Environ()
	}
	return setup.IO{In: c.Env.Stdin, Out: c.Env.Stdout, Err: c.Env.Stderr, Interactive: setup.Interactive(c.Env.Stdin), Environ: environ}
}

func (c *Context) setupResult(res *setup.Result, err error) error {
	if err != nil {
		return err
	}
	if c.JSON {
		if perr := cli.PrintJSON(c.Env.Stdout, res); perr != nil {
			return perr
		}
	}
	if res.Failed() {
		return &cli.NegativeResult{Message: res.Message, Code: fault.ExitProcess}
	}
	return nil
}

func setupCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("setup", "[--HOST...] [--all] [--scope user|project] [--yes] [--dry-run] [--remove|--rollback|--verify]")
	var req setup.Request
	picked := map[string]*bool{}
	for _, h := range setup.Hosts() {
		picked[h.Name] = fs.Bool(h.Name, false, "select "+h.Title)
	}
	fs.BoolVar(&req.All, "all", false, "select every detected host")
	scope := fs.String("scope", "user", "user (the person's own configuration) or project (files in the project)")
	fs.BoolVarP(&req.Yes, "yes", "y", false, "write without asking")
	fs.BoolVar(&req.DryRun, "dry-run", false, "show the diffs, write nothing")
	fs.BoolVar(&req.Remove, "remove", false, "take flameox's entry out of the selected hosts")
	fs.BoolVar(&req.Rollback, "rollback", false, "put back the files of the last setup run, byte for byte")
	fs.BoolVar(&req.Verify, "verify", false, "start each configured server as its host would and complete an MCP handshake")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("setup takes no arguments, got %q", fs.Args())
	}
	for _, h := range setup.Hosts() {
		if *picked[h.Name] {
			req.Hosts = append(req.Hosts, h.Name)
		}
	}
	if req.All && len(req.Hosts) > 0 {
		return cli.Usagef("--all selects every detected host; name hosts or pass --all, not both")
	}
	if c.JSON && !req.Yes && !req.DryRun && !req.Rollback && !req.Verify && (len(req.Hosts) > 0 || req.All) {
		return fault.New(fault.ExecutionRefused, "--json cannot ask for confirmation; nothing was written").
			Fix("Add --dry-run to see the changes, or --yes to write them.")
	}
	req.Scope, req.JSON = setup.Scope(*scope), c.JSON
	o, err := c.setupOptions()
	if err != nil {
		return err
	}
	return c.setupResult(setup.Run(ctx, o, req, c.setupIO()))
}

func mcpInstall(remove bool) func(context.Context, *Context, []string) error {
	return func(ctx context.Context, c *Context, args []string) error {
		name := "mcp install"
		if remove {
			name = "mcp uninstall"
		}
		fs := c.flags(name, "--client HOST [--scope user|project] [--dry-run]")
		client := fs.String("client", "", "the host: claude, cursor, codex, gemini, opencode, antigravity or vscode")
		scope := fs.String("scope", "user", "user or project")
		dry := fs.Bool("dry-run", false, "show the diff, write nothing")
		if err := c.parse(fs, args); err != nil {
			return err
		}
		if *client == "" || fs.NArg() > 0 {
			return cli.Usagef("%s needs --client HOST and no arguments", name)
		}
		if _, err := setup.HostByName(*client); err != nil {
			return err
		}
		o, err := c.setupOptions()
		if err != nil {
			return err
		}
		req := setup.Request{Hosts: []string{*client}, Scope: setup.Scope(*scope), Yes: true, DryRun: *dry, JSON: c.JSON, Remove: remove}
		return c.setupResult(setup.Run(ctx, o, req, c.setupIO()))
	}
}
