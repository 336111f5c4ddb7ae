package broker

import (
	"sort"
	"strings"
)

// loaderNames are variables that make the dynamic loader or an interpreter
// run code the workload did not ask for. They never pass unless the workload
// names them explicitly.
var loaderNames = []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP"}

// secretWords mark a variable name as a probable credential.
var secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "COOKIE", "CREDENTIAL", "AUTH"}

// Sensitive reports whether the variable name is one the broker drops unless
// a workload allows it explicitly: a loader or interpreter injection variable
// (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, PYTHONPATH, PYTHONSTARTUP, DYLD_*)
// or a name containing TOKEN, SECRET, PASSWORD, PASSWD, KEY, COOKIE,
// CREDENTIAL or AUTH. The comparison ignores case.
func Sensitive(name string) bool {
	up := strings.ToUpper(name)
	if strings.HasPrefix(up, "DYLD_") {
		return true
	}
	for _, n := range loaderNames {
		if up == n {
			return true
		}
	}
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// ChildEnv builds a child environment from the parent's.
//
// A parent variable passes when its name is in allow (an entry ending in "*"
// matches by prefix, e.g. "LC_*") or in explicitlyAllowed, and is not
// Sensitive, and its value embeds no credential in a URL (HasCredential:
// GOPROXY=https://user:secret@host, https://token@host, ?access_token=);
// explicitlyAllowed names (exact, the workload's opt-in) pass even when
// Sensitive or holding a credential. When the parent holds a name twice the
// first entry counts, as it does for getenv(3). Overrides, the workload's
// declared variables (its own values, not the parent's), are set on top and
// obey the same Sensitive rule; an override that is refused also removes the
// parent's value of that name. Whatever passes, Run keeps its secrets out
// of the captured output (Result.Redacted).
//
// env is sorted by name. dropped lists, sorted and without repetition, the
// NAMES (never the values) that the child does not get: parent variables that
// did not pass and refused overrides. Malformed entries (no name, NUL bytes)
// are dropped too; a parent entry without "=" has no name and is skipped.
func ChildEnv(parent []string, allow []string, explicitlyAllowed []string, overrides map[string]string) (env []string, dropped []string) {
	explicit := make(map[string]bool, len(explicitlyAllowed))
	for _, n := range explicitlyAllowed {
		explicit[n] = true
	}
	passes := func(name string) bool {
		return explicit[name] || (allowed(name, allow) && !Sensitive(name))
	}
	vals := map[string]string{}
	drop := map[string]bool{}
	seen := map[string]bool{}
	for _, kv := range parent {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if !validName(name) || strings.IndexByte(val, 0) >= 0 || !passes(name) || (!explicit[name] && HasCredential(val)) {
			drop[name] = true
			continue
		}
		vals[name] = val
	}
	for name, val := range overrides {
		if !validName(name) || strings.IndexByte(val, 0) >= 0 || (Sensitive(name) && !explicit[name]) {
			drop[name] = true
			delete(vals, name)
			continue
		}
		vals[name] = val
		delete(drop, name)
	}
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	env = make([]string, 0, len(names))
	for _, n := range names {
		env = append(env, n+"="+vals[n])
	}
	dropped = make([]string, 0, len(drop))
	for n := range drop {
		dropped = append(dropped, n)
	}
	sort.Strings(dropped)
	return env, dropped
}

// allowed reports whether name matches an allowlist entry.
func allowed(name string, allow []string) bool {
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
}

// validName reports whether name can be a variable name in an execve
// environment: non-empty, without "=" or NUL.
func validName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "=\x00")
}
