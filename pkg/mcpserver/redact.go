package mcpserver

import (
	"strings"

	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/workload"
)

// Workload definitions over MCP are redacted by one sensitivity rule, the
// broker's (broker.Sensitive names, broker.HasCredential values), applied
// alike to argv, the oracle's argv and env: `go`, `test`, `-bench={b}`
// stay readable, so an agent can tell what a workload runs, while what
// looks like a secret becomes broker.Redacted:
//
//   - an argv element `--NAME=VALUE` or `NAME=VALUE` whose NAME is
//     sensitive (`--api-token=…`, `AWS_SECRET_KEY=…`) keeps its NAME;
//   - the element after a lone sensitive flag (`--password`, `-token`);
//   - credentials inside URLs (`https://user:secret@host`, `?sig=…`);
//   - an env value whose variable name is sensitive or which embeds a
//     credential in a URL.
//
// The plan tools still return no command lines at all (plan_capture's
// redacted_fields): a plan is bound by its token, a definition is read.

// redactDefinition returns a copy of d with its secrets redacted.
func redactDefinition(d workload.Definition) workload.Definition {
	d.Argv = redactArgv(d.Argv)
	if d.Oracle != nil {
		o := *d.Oracle
		o.Argv = redactArgv(o.Argv)
		d.Oracle = &o
	}
	env := make(map[string]string, len(d.Env))
	for k, v := range d.Env {
		if broker.Sensitive(k) || broker.HasCredential(v) {
			v = broker.Redacted
		}
		env[k] = v
	}
	d.Env = env
	return d
}

// redactArgv applies the rule above to a command line.
func redactArgv(argv []string) []string {
	out := make([]string, len(argv))
	afterFlag := false
	for i, a := range argv {
		switch {
		case afterFlag:
			a = broker.Redacted
			afterFlag = false
		case strings.Contains(a, "="):
			name, _, _ := strings.Cut(a, "=")
			if sensitiveFlag(name) {
				a = name + "=" + broker.Redacted
			} else {
				a = broker.RedactCredentials(a)
			}
		case strings.HasPrefix(a, "-") && i > 0 && sensitiveFlag(a):
			afterFlag = true
		default:
			a = broker.RedactCredentials(a)
		}
		out[i] = a
	}
	return out
}

// sensitiveFlag reports whether a flag or variable name ("--api-token",
// "-password", "GITHUB_TOKEN") is sensitive by the broker's rule.
func sensitiveFlag(name string) bool {
	name = strings.TrimLeft(name, "-")
	if name == "" || strings.ContainsAny(name, "{}/ ") {
		return false
	}
	return broker.Sensitive(strings.ReplaceAll(name, "-", "_"))
}
