package setup

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/flameox/flameox/pkg/fault"
)

// Scope is where an entry lives: the user's own configuration, or the
// project's (a file in the repository that the host reads there).
type Scope string

const (
	User    Scope = "user"
	Project Scope = "project"
)

// Format is a configuration file's syntax.
type Format string

const (
	JSON  Format = "json"  // plain JSON: comments are a syntax error
	JSONC Format = "jsonc" // JSON with comments and trailing commas, kept
	TOML  Format = "toml"
)

// ServerName is the key of flameox's entry in every host's file.
const ServerName = "flameox"

// Options locate the files: the user's home and configuration directories,
// the project, setup's own state, and the binary hosts are to start.
type Options struct {
	Home        string
	ConfigHome  string // $XDG_CONFIG_HOME, default Home/.config
	StateDir    string // journals and the lock; default $XDG_STATE_HOME/flameox/setup
	CodexHome   string // $CODEX_HOME, default Home/.codex
	ProjectRoot string // absolute
	Executable  string // absolute path of the flameox binary
	GOOS        string
}

// OptionsFromEnv fills Options from the environment as getenv reads it.
func OptionsFromEnv(getenv func(string) string, projectRoot, executable string) Options {
	o := Options{Home: getenv("HOME"), ConfigHome: getenv("XDG_CONFIG_HOME"), CodexHome: getenv("CODEX_HOME"),
		ProjectRoot: projectRoot, Executable: executable}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	if o.ConfigHome == "" {
		o.ConfigHome = filepath.Join(o.Home, ".config")
	}
	if o.CodexHome == "" {
		o.CodexHome = filepath.Join(o.Home, ".codex")
	}
	if st := getenv("XDG_STATE_HOME"); st != "" {
		o.StateDir = filepath.Join(st, "flameox", "setup")
	} else {
		o.StateDir = filepath.Join(o.Home, ".local", "state", "flameox", "setup")
	}
	return o
}

// Host is one agent host: where its file is, how it is written, and what
// flameox's entry looks like in it.
type Host struct {
	Name   string // the flag and --client value
	Title  string
	Format Format
	Scopes []Scope
	// Note is what a person should know about the host's file.
	Note string

	file   func(o Options, s Scope) string
	detect func(o Options, s Scope) bool
	// container is the path of the object holding the servers, chosen from
	// the file's current content (src may be empty).
	container func(src []byte) []string
	entry     func(command string, args []string, src []byte) []field
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// firstExisting returns the first of paths that exists, else the first.
func firstExisting(paths ...string) string {
	for _, p := range paths {
		if exists(p) {
			return p
		}
	}
	return paths[0]
}

func key(k string) func([]byte) []string { return func([]byte) []string { return []string{k} } }

func commandArgs(typ string) func(string, []string, []byte) []field {
	return func(command string, args []string, _ []byte) []field {
		var f []field
		if typ != "" {
			f = append(f, field{"type", typ})
		}
		return append(f, field{"command", command}, field{"args", args})
	}
}

// opencodeV2 reports whether an OpenCode file nests servers under
// mcp.servers (its "v2" layout) rather than directly under mcp.
func opencodeV2(src []byte) bool {
	v, _, err := jsonGet(src, true, []string{"mcp", "servers"})
	_, ok := v.(map[string]any)
	return err == nil && ok
}

// Hosts lists every host setup knows, in the order they are shown.
func Hosts() []*Host {
	return []*Host{
		{
			Name: "claude", Title: "Claude Code", Format: JSON, Scopes: []Scope{User, Project},
			Note: "user: ~/.claude.json mcpServers; project: .mcp.json (each person approves it once)",
			file: func(o Options, s Scope) string {
				if s == Project {
					return filepath.Join(o.ProjectRoot, ".mcp.json")
				}
				return filepath.Join(o.Home, ".claude.json")
			},
			detect: func(o Options, s Scope) bool {
				if s == Project {
					return exists(filepath.Join(o.ProjectRoot, ".mcp.json")) || exists(filepath.Join(o.ProjectRoot, ".claude"))
				}
				return exists(filepath.Join(o.Home, ".claude.json")) || exists(filepath.Join(o.Home, ".claude"))
			},
			container: key("mcpServers"), entry: commandArgs("stdio"),
		},
		{
			Name: "cursor", Title: "Cursor", Format: JSON, Scopes: []Scope{User, Project},
			Note: "user: ~/.cursor/mcp.json; project: .cursor/mcp.json (the project's wins)",
			file: func(o Options, s Scope) string {
				if s == Project {
					return filepath.Join(o.ProjectRoot, ".cursor", "mcp.json")
				}
				return filepath.Join(o.Home, ".cursor", "mcp.json")
			},
			detect: func(o Options, s Scope) bool {
				if s == Project {
					return exists(filepath.Join(o.ProjectRoot, ".cursor"))
				}
				return exists(filepath.Join(o.Home, ".cursor"))
			},
			container: key("mcpServers"), entry: commandArgs(""),
		},
		{
			Name: "codex", Title: "Codex", Format: TOML, Scopes: []Scope{User, Project},
			Note: "user: $CODEX_HOME/config.toml; project: .codex/config.toml, read only once the project is trusted",
			file: func(o Options, s Scope) string {
				if s == Project {
					return filepath.Join(o.ProjectRoot, ".codex", "config.toml")
				}
				return filepath.Join(o.CodexHome, "config.toml")
			},
			detect: func(o Options, s Scope) bool {
				if s == Project {
					return exists(filepath.Join(o.ProjectRoot, ".codex"))
				}
				return exists(o.CodexHome)
			},
			container: key("mcp_servers"),
			entry: func(command string, args []string, _ []byte) []field {
				return []field{{"command", command}, {"args", args}}
			},
		},
		{
			Name: "gemini", Title: "Gemini CLI", Format: JSONC, Scopes: []Scope{User, Project},
			Note: "user: ~/.gemini/settings.json; project: .gemini/settings.json",
			file: func(o Options, s Scope) string {
				if s == Project {
					return filepath.Join(o.ProjectRoot, ".gemini", "settings.json")
				}
				return filepath.Join(o.Home, ".gemini", "settings.json")
			},
			detect: func(o Options, s Scope) bool {
				if s == Project {
					return exists(filepath.Join(o.ProjectRoot, ".gemini"))
				}
				return exists(filepath.Join(o.Home, ".gemini", "settings.json")) || exists(filepath.Join(o.Home, ".gemini"))
			},
			container: key("mcpServers"), entry: commandArgs(""),
		},
		{
			Name: "opencode", Title: "OpenCode", Format: JSONC, Scopes: []Scope{User, Project},
			Note: "key mcp (or mcp.servers in the v2 layout); command is one array, there is no args field",
			file: func(o Options, s Scope) string {
				if s == Project {
					r := o.ProjectRoot
					return firstExisting(filepath.Join(r, "opencode.json"), filepath.Join(r, "opencode.jsonc"),
						filepath.Join(r, ".opencode", "opencode.json"), filepath.Join(r, ".opencode", "opencode.jsonc"))
				}
				d := filepath.Join(o.ConfigHome, "opencode")
				return firstExisting(filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc"))
			},
			detect: func(o Options, s Scope) bool {
				if s == Project {
					r := o.ProjectRoot
					return exists(filepath.Join(r, "opencode.json")) || exists(filepath.Join(r, "opencode.jsonc")) || exists(filepath.Join(r, ".opencode"))
				}
				return exists(filepath.Join(o.ConfigHome, "opencode"))
			},
			container: func(src []byte) []string {
				if opencodeV2(src) {
					return []string{"mcp", "servers"}
				}
				return []string{"mcp"}
			},
			entry: func(command string, args []string, src []byte) []field {
				f := []field{{"type", "local"}, {"command", append([]string{command}, args...)}}
				if !opencodeV2(src) {
					f = append(f, field{"enabled", true})
				}
				return f
			},
		},
		{
			Name: "antigravity", Title: "Antigravity", Format: JSON, Scopes: []Scope{User},
			Note: "~/.gemini/config/mcp_config.json (legacy ~/.gemini/antigravity/mcp_config.json); no per-project servers, no ${VAR} expansion, no comments",
			file: func(o Options, _ Scope) string {
				cur := filepath.Join(o.Home, ".gemini", "config", "mcp_config.json")
				legacy := filepath.Join(o.Home, ".gemini", "antigravity", "mcp_config.json")
				if !exists(cur) && !exists(filepath.Dir(cur)) && exists(legacy) {
					return legacy
				}
				return cur
			},
			detect: func(o Options, s Scope) bool {
				return s == User && (exists(filepath.Join(o.Home, ".gemini", "config")) || exists(filepath.Join(o.Home, ".gemini", "antigravity")) ||
					exists(filepath.Join(o.Home, ".antigravity")))
			},
			container: key("mcpServers"), entry: commandArgs(""),
		},
		{
			Name: "vscode", Title: "VS Code", Format: JSONC, Scopes: []Scope{User, Project},
			Note: "key servers (not mcpServers); user: the profile's mcp.json; project: .vscode/mcp.json",
			file: func(o Options, s Scope) string {
				if s == Project {
					return filepath.Join(o.ProjectRoot, ".vscode", "mcp.json")
				}
				return filepath.Join(vscodeUserDir(o), "mcp.json")
			},
			detect: func(o Options, s Scope) bool {
				if s == Project {
					return exists(filepath.Join(o.ProjectRoot, ".vscode"))
				}
				return exists(vscodeUserDir(o))
			},
			container: key("servers"), entry: commandArgs("stdio"),
		},
	}
}

func vscodeUserDir(o Options) string {
	if o.GOOS == "darwin" {
		return filepath.Join(o.Home, "Library", "Application Support", "Code", "User")
	}
	return filepath.Join(o.ConfigHome, "Code", "User")
}

// HostByName returns the named host or an INVALID_ARGUMENTS error.
func HostByName(name string) (*Host, error) {
	var names []string
	for _, h := range Hosts() {
		if h.Name == name {
			return h, nil
		}
		names = append(names, h.Name)
	}
	return nil, fault.New(fault.InvalidArguments, "unknown host %q; the hosts are %v", name, names)
}

// File returns the host's configuration file for scope.
func (h *Host) File(o Options, s Scope) string { return h.file(o, s) }

// Detected reports whether the host looks installed for scope.
func (h *Host) Detected(o Options, s Scope) bool { return h.detect(o, s) }

func (h *Host) supports(s Scope) bool {
	for _, x := range h.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

// Args are the server arguments for scope: a project entry names its
// project; a user entry serves whatever project the host runs in.
func Args(o Options, s Scope) []string {
	if s == Project {
		return []string{"mcp", "serve", "--project-root", o.ProjectRoot}
	}
	return []string{"mcp", "serve"}
}

func itoa(n int) string { return strconv.Itoa(n) }
