package setup

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// Hosts substitute variables in an entry before they start it, each in its
// own syntax; --verify does the same so it starts what the host would.
var (
	// Claude Code: ${VAR} and ${VAR:-default}.
	claudeVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`) })
	// VS Code: ${env:VAR}, ${workspaceFolder}, ${userHome}.
	vscodeVar = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\$\{(env:([A-Za-z_][A-Za-z0-9_]*)|workspaceFolder|userHome)\}`)
	})
	// OpenCode: {env:VAR}.
	opencodeVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{env:([A-Za-z_][A-Za-z0-9_]*)\}`) })
)

// expander returns the host's substitution over getenv, or nil when the
// host substitutes nothing (Antigravity, Codex, Cursor).
func expander(host string, o Options, getenv func(string) string) func(string) string {
	switch host {
	case "claude":
		return func(s string) string {
			return claudeVar().ReplaceAllStringFunc(s, func(m string) string {
				g := claudeVar().FindStringSubmatch(m)
				if v := getenv(g[1]); v != "" || g[2] == "" {
					return v
				}
				return g[3]
			})
		}
	case "gemini":
		return func(s string) string { return os.Expand(s, getenv) }
	case "vscode":
		return func(s string) string {
			return vscodeVar().ReplaceAllStringFunc(s, func(m string) string {
				g := vscodeVar().FindStringSubmatch(m)
				switch {
				case g[1] == "workspaceFolder":
					return o.ProjectRoot
				case g[1] == "userHome":
					return o.Home
				}
				return getenv(g[2])
			})
		}
	case "opencode":
		return func(s string) string {
			return opencodeVar().ReplaceAllStringFunc(s, func(m string) string {
				return getenv(opencodeVar().FindStringSubmatch(m)[1])
			})
		}
	}
	return nil
}

// lookup reads a variable from an environment list.
func lookup(environ []string) func(string) string {
	return func(name string) string {
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name {
				return v
			}
		}
		return ""
	}
}
