package workload

import (
	"fmt"
	"slices"
	"strconv"
)

// maxChanges bounds how many differences Diff spells out.
const maxChanges = 20

// Diff lists what differs between an approved canonical form and the
// current one, as short phrases naming the field ("argv[2] changed",
// "timeout_seconds 30 → 60", "parameters.mode choices changed"), in a fixed
// order ("parameters.count range [1, 50] → [1, 100]"). Values of argv, cwd
// and env are not repeated: the reviewer reads them with `flameox workload
// show`.
func Diff(old, cur Definition) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if old.Name != cur.Name {
		add("name %q → %q", old.Name, cur.Name)
	}
	diffArgv("argv", old.Argv, cur.Argv, add)
	if old.Cwd != cur.Cwd {
		add("cwd changed")
	}
	if old.TimeoutSeconds != cur.TimeoutSeconds {
		add("timeout_seconds %s → %s", num(old.TimeoutSeconds), num(cur.TimeoutSeconds))
	}
	for _, k := range unionKeys(old.Env, cur.Env) {
		ov, inOld := old.Env[k]
		cv, inCur := cur.Env[k]
		switch {
		case !inOld:
			add("env.%s added", k)
		case !inCur:
			add("env.%s removed", k)
		case ov != cv:
			add("env.%s changed", k)
		}
	}
	for _, n := range cur.AllowEnv {
		if !slices.Contains(old.AllowEnv, n) {
			add("allow_env %s added", n)
		}
	}
	for _, n := range old.AllowEnv {
		if !slices.Contains(cur.AllowEnv, n) {
			add("allow_env %s removed", n)
		}
	}
	for _, k := range unionKeys(old.Options, cur.Options) {
		if old.Options[k] != cur.Options[k] {
			add("options.%s %q → %q", k, old.Options[k], cur.Options[k])
		}
	}
	op, cp := paramMap(old.Parameters), paramMap(cur.Parameters)
	for _, n := range unionKeys(op, cp) {
		o, inOld := op[n]
		c, inCur := cp[n]
		switch {
		case !inOld:
			add("parameters.%s added", n)
		case !inCur:
			add("parameters.%s removed", n)
		case o.Type != c.Type:
			add("parameters.%s type %s → %s", n, o.Type, c.Type)
		case o.IsRange() && c.IsRange():
			if o.Min != c.Min || o.Max != c.Max {
				add("parameters.%s range %s → %s", n, o.Domain(), c.Domain())
			}
			if o.Default != c.Default {
				add("parameters.%s default %s → %s", n, o.Default, c.Default)
			}
		case o.IsRange():
			add("parameters.%s range %s → choices", n, o.Domain())
		case c.IsRange():
			add("parameters.%s choices → range %s", n, c.Domain())
		case slices.Equal(o.Choices, c.Choices):
		case len(o.Choices) == len(c.Choices) && sameSet(o.Choices, c.Choices):
			add("parameters.%s choice order changed (default %q → %q)", n, clip(o.Choices[0]), clip(c.Choices[0]))
		default:
			add("parameters.%s choices changed", n)
		}
	}
	switch o, c := old.Oracle, cur.Oracle; {
	case o == nil && c != nil:
		add("oracle added")
	case o != nil && c == nil:
		add("oracle removed")
	case o != nil:
		if o.Strength != c.Strength {
			add("oracle.strength %s → %s", o.Strength, c.Strength)
		}
		if !slices.Equal(o.Argv, c.Argv) {
			add("oracle.argv changed")
		}
	}
	if len(out) == 0 {
		add("the canonical form changed")
	}
	if len(out) > maxChanges {
		out = append(out[:maxChanges], fmt.Sprintf("and %d more changes", len(out)-maxChanges))
	}
	return out
}

// diffArgv names changed positions of the common prefix and a length change.
func diffArgv(field string, old, cur []string, add func(string, ...any)) {
	for i := 0; i < min(len(old), len(cur)); i++ {
		if old[i] != cur[i] {
			add("%s[%d] changed", field, i)
		}
	}
	if len(old) != len(cur) {
		add("%s length %d → %d", field, len(old), len(cur))
	}
}

func paramMap(ps []Parameter) map[string]Parameter {
	m := make(map[string]Parameter, len(ps))
	for _, p := range ps {
		m[p.Name] = p
	}
	return m
}

func unionKeys[V any](a, b map[string]V) []string {
	m := make(map[string]bool, len(a)+len(b))
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return sortedKeys(m)
}

func sameSet(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
