package fleet

import (
	"strings"

	"github.com/flameox/flameox/pkg/broker"
)

// redactCommand applies the broker's sensitivity rule to a command line
// stored as text (hyperfine names each result by its command, which
// becomes the measurement's subject): the rule pkg/mcpserver applies to
// a workload's argv, element by element — `--NAME=VALUE` and `NAME=VALUE`
// with a sensitive NAME keep the name, the element after a lone sensitive
// flag is replaced, and credentials inside URLs are replaced. A string
// with nothing to redact is returned unchanged, spacing included.
// pkg/mcpserver is a layer above this package, hence this copy of its
// loop; the decisions are broker.Sensitive's and broker.RedactCredentials'.
func redactCommand(s string) string {
	fields := strings.Fields(s)
	changed := false
	afterFlag := false
	for i, a := range fields {
		b := a
		switch {
		case afterFlag:
			b, afterFlag = broker.Redacted, false
		case strings.Contains(a, "="):
			name, _, _ := strings.Cut(a, "=")
			if sensitiveFlag(name) {
				b = name + "=" + broker.Redacted
			} else {
				b = broker.RedactCredentials(a)
			}
		case strings.HasPrefix(a, "-") && i > 0 && sensitiveFlag(a):
			afterFlag = true
		default:
			b = broker.RedactCredentials(a)
		}
		if b != a {
			fields[i], changed = b, true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(fields, " ")
}

// sensitiveFlag reports whether a flag or variable name ("--api-token",
// "GITHUB_TOKEN") is sensitive by the broker's rule.
func sensitiveFlag(name string) bool {
	name = strings.TrimLeft(name, "-")
	if name == "" || strings.ContainsAny(name, "{}/ ") {
		return false
	}
	return broker.Sensitive(strings.ReplaceAll(name, "-", "_"))
}
