package fleet

import (
	"slices"
	"strings"

	"github.com/flameox/flameox/pkg/broker"
)

// redactCommand applies the broker's sensitivity rule to a command line
// stored as text (hyperfine names each result by its command, which
// becomes the measurement's subject): broker.RedactArgv, the rule MCP
// applies to a workload's argv, over its white-space-separated fields. A
// string with nothing to redact is returned unchanged, spacing included.
func redactCommand(s string) string {
	fields := strings.Fields(s)
	red := broker.RedactArgv(fields)
	if slices.Equal(fields, red) {
		return s
	}
	return strings.Join(red, " ")
}
