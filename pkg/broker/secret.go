package broker

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces a secret in captured output and in recorded strings.
const Redacted = "<redacted>"

// minSecret is the shortest value redacted from output: a shorter one would
// match ordinary text. A variable holding one is still kept from the child
// unless the workload allows it.
const minSecret = 6

// credentialQuery names URL query parameters that carry a credential, on top
// of the Sensitive names (token, key, password, ...).
var credentialQuery = []string{"sig", "signature", "pass", "pwd"}

// urlCredential is one credential inside a URL: the bytes [start, end) of
// the string it was found in.
type urlCredential struct{ start, end int }

// urlCredentials finds the credentials in the URLs of s: the user-info of
// every "scheme://user:password@host" (the password) or
// "scheme://token@host" (the user name, a token), and the values of query
// parameters with a credential's name ("?access_token=...", "&sig=...").
// A URL ends at white space, a quote or a list separator (",", "|", ";"), as
// in GOPROXY's list.
func urlCredentials(s string) []urlCredential {
	var out []urlCredential
	for off := 0; ; {
		i := strings.Index(s[off:], "://")
		if i < 0 {
			return out
		}
		i += off
		off = i + 3
		if i == 0 || !isSchemeChar(s[i-1]) {
			continue
		}
		end := off
		for end < len(s) && !endsURL(s[end]) {
			end++
		}
		rest := s[off:end]
		auth := rest
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			auth = rest[:j]
		}
		if at := strings.LastIndexByte(auth, '@'); at > 0 {
			ui := auth[:at]
			if c := strings.IndexByte(ui, ':'); c >= 0 {
				if c+1 < len(ui) {
					out = append(out, urlCredential{off + c + 1, off + at})
				}
			} else {
				out = append(out, urlCredential{off, off + at})
			}
		}
		if q := strings.IndexByte(rest, '?'); q >= 0 {
			query := rest[q+1:]
			if h := strings.IndexByte(query, '#'); h >= 0 {
				query = query[:h]
			}
			base := off + q + 1
			for p := 0; p < len(query); {
				amp := strings.IndexByte(query[p:], '&')
				if amp < 0 {
					amp = len(query) - p
				}
				param := query[p : p+amp]
				if eq := strings.IndexByte(param, '='); eq > 0 && eq+1 < len(param) && credentialName(param[:eq]) {
					out = append(out, urlCredential{base + p + eq + 1, base + p + amp})
				}
				p += amp + 1
			}
		}
		off = end
	}
}

func isSchemeChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

func endsURL(c byte) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == ',' || c == '|' || c == ';' || c == '<' || c == '>' || c == '\\' || c == 0x7f
}

func credentialName(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	return Sensitive(name) || slices.Contains(credentialQuery, strings.ToLower(name))
}

// HasCredential reports whether value embeds a credential in a URL: user
// info ("https://user:secret@host", "https://token@host") or a credential
// query parameter ("?access_token=..."). ChildEnv keeps a variable whose
// value does from the child unless the workload allows it by name.
func HasCredential(value string) bool {
	return len(urlCredentials(value)) > 0
}

// RedactCredentials returns s with every credential HasCredential finds
// replaced by Redacted (the user name of "user:password@" is kept).
func RedactCredentials(s string) string {
	creds := urlCredentials(s)
	if len(creds) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, c := range creds {
		b.WriteString(s[last:c.start])
		b.WriteString(Redacted)
		last = c.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// secret is a value Run removes from captured output and the names of the
// variables it was found in.
type secret struct {
	value string
	names []string
}

// secrets returns what Run removes from the child's captured output: from
// each environment, the value of every Sensitive name and every URL
// credential (also percent-decoded), when at least minSecret bytes long.
// Run passes the child's environment and flameox's own, so a secret of the
// parent that the child found elsewhere (a configuration file) is caught
// too. Longest first: a secret that contains another is replaced whole.
func secrets(envs ...[]string) []secret {
	var out []secret
	at := map[string]int{}
	add := func(name, v string) {
		if len(v) < minSecret || strings.Contains(Redacted, v) {
			return
		}
		i, ok := at[v]
		if !ok {
			i = len(out)
			at[v] = i
			out = append(out, secret{value: v})
		}
		if !slices.Contains(out[i].names, name) {
			out[i].names = append(out[i].names, name)
		}
	}
	for _, env := range envs {
		for _, kv := range env {
			name, val, ok := strings.Cut(kv, "=")
			if !ok || name == "" {
				continue
			}
			if Sensitive(name) {
				add(name, val)
			}
			for _, c := range urlCredentials(val) {
				v := val[c.start:c.end]
				add(name, v)
				if u, err := url.PathUnescape(v); err == nil {
					add(name, u)
				}
				if u, err := url.QueryUnescape(v); err == nil {
					add(name, u)
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b secret) int { return len(b.value) - len(a.value) })
	return out
}

// redactor replaces secrets in a stream written in arbitrary pieces. It
// holds back the end of what it was given while that end could still
// become a secret, so no secret crossing two writes gets through.
type redactor struct {
	secrets [][]byte  // longest first
	first   [256]bool // first bytes of the secrets
	pending []byte
	hits    []int // replacements made, per secret
}

// newRedactor returns a redactor for secrets, or nil when there are none.
func newRedactor(secrets []secret) *redactor {
	if len(secrets) == 0 {
		return nil
	}
	r := &redactor{hits: make([]int, len(secrets))}
	for _, s := range secrets {
		r.secrets = append(r.secrets, []byte(s.value))
		r.first[s.value[0]] = true
	}
	return r
}

// push takes the next bytes of the stream and returns the redacted bytes
// that are final; the returned slice is valid until the next call.
func (r *redactor) push(p []byte, out []byte) []byte {
	r.pending = append(r.pending, p...)
	return r.drain(out, false)
}

// flush returns the rest at the end of the stream.
func (r *redactor) flush(out []byte) []byte {
	return r.drain(out, true)
}

// drain moves what is decided from pending to out. At each position it
// replaces the longest secret that starts there; it stops at a position
// where a secret could still start but has not arrived in full (unless
// final).
func (r *redactor) drain(out []byte, final bool) []byte {
	b := r.pending
	i, from := 0, 0
scan:
	for i < len(b) {
		if !r.first[b[i]] {
			i++
			continue
		}
		for k, s := range r.secrets { // longest first
			switch {
			case bytes.HasPrefix(b[i:], s):
				out = append(out, b[from:i]...)
				out = append(out, Redacted...)
				r.hits[k]++
				i += len(s)
				from = i
				continue scan
			case !final && len(b)-i < len(s) && bytes.HasPrefix(s, b[i:]):
				break scan // may still become this secret
			}
		}
		i++
	}
	out = append(out, b[from:i]...)
	r.pending = append(r.pending[:0], b[i:]...)
	return out
}

// redactedNames returns, sorted, the names of the variables whose values r
// (for the same secrets) replaced at least once.
func redactedNames(secrets []secret, rs ...*redactor) []string {
	var names []string
	for _, r := range rs {
		if r == nil {
			continue
		}
		for k, n := range r.hits {
			if n > 0 {
				names = append(names, secrets[k].names...)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
