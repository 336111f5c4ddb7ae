package broker

import "strings"

// RedactArgv returns a copy of argv with what looks like a secret replaced
// by Redacted, by the rule that keeps a command readable: an element
// `--NAME=VALUE` or `NAME=VALUE` whose NAME is sensitive (Sensitive) keeps
// its NAME, the element after a lone sensitive flag (`--password`,
// `-token`) is replaced, and credentials inside URLs are
// (RedactCredentials). MCP's workload definitions and exported command
// lines (hyperfine's subjects) are redacted by it alike.
func RedactArgv(argv []string) []string {
	out := make([]string, len(argv))
	afterFlag := false
	for i, a := range argv {
		switch {
		case afterFlag:
			a = Redacted
			afterFlag = false
		case strings.Contains(a, "="):
			name, _, _ := strings.Cut(a, "=")
			if SensitiveFlag(name) {
				a = name + "=" + Redacted
			} else {
				a = RedactCredentials(a)
			}
		case strings.HasPrefix(a, "-") && i > 0 && SensitiveFlag(a):
			afterFlag = true
		default:
			a = RedactCredentials(a)
		}
		out[i] = a
	}
	return out
}

// SensitiveFlag reports whether a flag or variable name ("--api-token",
// "-password", "GITHUB_TOKEN") is sensitive by Sensitive's rule.
func SensitiveFlag(name string) bool {
	name = strings.TrimLeft(name, "-")
	if name == "" || strings.ContainsAny(name, "{}/ ") {
		return false
	}
	return Sensitive(strings.ReplaceAll(name, "-", "_"))
}
