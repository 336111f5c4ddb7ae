package mcpserver

import (
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
	d.Argv = broker.RedactArgv(d.Argv)
	if d.Oracle != nil {
		o := *d.Oracle
		o.Argv = broker.RedactArgv(o.Argv)
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
