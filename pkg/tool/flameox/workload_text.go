package flameox

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/workload"
)

// renderWorkload prints workload show: the definition one field a line,
// the way flameox.toml declares it (argv quoted as a shell would need,
// env and options as KEY=VALUE, each parameter with its type, domain and
// default), then the approval and what changed since it. The canonical
// JSON, which the digest covers, is --json's.
func renderWorkload(w io.Writer, d *workload.Detail) {
	def := d.Definition
	fmt.Fprintf(w, "workload    %s\n", cli.Name(d.Name))
	fmt.Fprintf(w, "definition  %s\n", d.DefinitionID)
	if d.Description != "" {
		fmt.Fprintf(w, "description %s\n", cli.Safe(d.Description))
	}
	switch d.Approval {
	case workload.Approved:
		fmt.Fprintf(w, "approval    %s\n", d.Approval)
	default:
		fmt.Fprintf(w, "approval    %s (flameox workload approve %s approves this definition)\n", d.Approval, cli.Name(d.Name))
	}
	for _, ch := range d.Changes {
		fmt.Fprintf(w, "  changed:  %s\n", cli.Safe(ch))
	}
	fmt.Fprintf(w, "argv        %s\n", quoteArgv(def.Argv))
	fmt.Fprintf(w, "cwd         %s\n", cli.Safe(def.Cwd))
	fmt.Fprintf(w, "timeout     %ss\n", strconv.FormatFloat(def.TimeoutSeconds, 'f', -1, 64))
	fmt.Fprintf(w, "env         %s\n", pairsOr(def.Env))
	allow := "none"
	if len(def.AllowEnv) > 0 {
		allow = cli.Safe(strings.Join(def.AllowEnv, ","))
	}
	fmt.Fprintf(w, "allow_env   %s\n", allow)
	fmt.Fprintf(w, "options     %s\n", pairsOr(def.Options))
	if len(def.Parameters) == 0 {
		fmt.Fprintln(w, "parameters  none")
	}
	for i, p := range def.Parameters {
		label := "parameter  "
		if i > 0 {
			label = "           "
		}
		kind := "one of"
		if p.IsRange() {
			kind = "in"
		}
		fmt.Fprintf(w, "%s %s (%s) %s %s, default %s\n", label, cli.Name(p.Name), p.Type, kind, cli.Safe(p.Domain()), cli.Safe(p.Default))
	}
	if o := def.Oracle; o != nil {
		fmt.Fprintf(w, "oracle      %s: %s\n", o.Strength, quoteArgv(o.Argv))
	}
}

// pairsOr prints a map as sorted KEY=VALUE pairs, each value quoted when
// a shell would need it, or "none".
func pairsOr(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = cli.Safe(k) + "=" + quoteArgv([]string{m[k]})
	}
	return strings.Join(parts, " ")
}
