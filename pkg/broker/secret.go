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

// secrets returns what Run removes from the child's captured output, at
// least minSecret bytes long each: from the child's environment the value
// of every Sensitive name (which passes only when the workload allows it)
// and every URL credential, and from the parent's (flameox's own) every URL
// credential, which the child may have found elsewhere (a configuration
// file); URL credentials also percent-decoded. The parent's Sensitive
// values are not taken: the child did not get them, and most (SSH_AUTH_SOCK,
// XAUTHORITY) are paths, not secrets. Longest first: a secret that contains
// another is replaced whole.
func secrets(child, parent []string) []secret {
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
	for e, env := range [][]string{child, parent} {
		for _, kv := range env {
			name, val, ok := strings.Cut(kv, "=")
			if !ok || name == "" {
				continue
			}
			if e == 0 && Sensitive(name) {
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
	secrets [][]byte // longest first
	longest int
	pending []byte
	hits    []int // replacements made, per secret
	next    []int // scratch: next occurrence of each secret
}

// newRedactor returns a redactor for secrets, or nil when there are none.
func newRedactor(secrets []secret) *redactor {
	if len(secrets) == 0 {
		return nil
	}
	r := &redactor{hits: make([]int, len(secrets)), next: make([]int, len(secrets))}
	for _, s := range secrets {
		r.secrets = append(r.secrets, []byte(s.value))
		r.longest = max(r.longest, len(s.value))
	}
	return r
}

// push takes the next bytes of the stream and appends to out the redacted
// bytes that are final.
func (r *redactor) push(p []byte, out []byte) []byte {
	if len(r.pending) == 0 {
		return r.drain(p, out, false) // nothing held back: no copy
	}
	r.pending = append(r.pending, p...)
	return r.drain(r.pending, out, false)
}

// flush appends the rest at the end of the stream.
func (r *redactor) flush(out []byte) []byte {
	return r.drain(r.pending, out, true)
}

// drain moves what is decided from b (the pending bytes) to out and keeps
// the rest pending. It behaves as a scan
// that, at each position, looks at the secrets longest first and takes the
// first that agrees with the bytes there: one that is there in full is
// replaced (and the scan goes on after it); one that could still arrive
// (the bytes end first) stops the scan, and what follows is held back
// unless final. Between those positions it jumps with bytes.Index, so text
// without secrets costs a few fast searches per secret.
func (r *redactor) drain(b, out []byte, final bool) []byte {
	for k := range r.next {
		r.next[k] = -2 // not searched yet
	}
	i, from := 0, 0
	for {
		// The next position where a secret is there in full...
		e := len(b)
		for k, s := range r.secrets {
			if r.next[k] == -1 {
				continue // no more occurrences
			}
			if r.next[k] < i {
				if j := bytes.Index(b[i:], s); j >= 0 {
					r.next[k] = i + j
				} else {
					r.next[k] = -1
					continue
				}
			}
			e = min(e, r.next[k])
		}
		// ...or could still begin (only in the last bytes).
		if !final {
			for p := max(i, len(b)-r.longest+1); p < e; p++ {
				if r.partial(b[p:]) {
					e = p
					break
				}
			}
		}
		if e == len(b) {
			i = e
			break
		}
		s, k := r.decide(b[e:], final)
		if s == nil {
			i = e
			break // may still become a secret: hold from here
		}
		out = append(out, b[from:e]...)
		out = append(out, Redacted...)
		r.hits[k]++
		i = e + len(s)
		from = i
	}
	if final {
		i = len(b)
	}
	out = append(out, b[from:i]...) // i: where the held-back tail starts
	r.pending = append(r.pending[:0], b[i:]...)
	return out
}

// partial reports whether tail, the end of what is pending, is a proper
// prefix of a secret.
func (r *redactor) partial(tail []byte) bool {
	for _, s := range r.secrets {
		if len(tail) < len(s) && bytes.HasPrefix(s, tail) {
			return true
		}
	}
	return false
}

// decide returns the secret to replace at the start of b, or nil when the
// first secret (longest first) that agrees with b could still arrive.
func (r *redactor) decide(b []byte, final bool) ([]byte, int) {
	for k, s := range r.secrets {
		switch {
		case bytes.HasPrefix(b, s):
			return s, k
		case !final && len(b) < len(s) && bytes.HasPrefix(s, b):
			return nil, -1
		}
	}
	return nil, -1
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
